"""The command line as a new user types it: nested --config overrides, a masked override, an
unknown key, a run trained by hand, `make pull` from a subdirectory."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ansel import cli, dvc_pull
from ansel.config import (
    ConfigError,
    apply_preset,
    config_origin,
    load,
    refused_paths,
    resolve_run,
    run_config,
    typed_overrides,
)
from ansel.data.readers.synthetic import Synthetic
from ansel.data.vocab import Vocab, training_texts


def test_nested_command_line_values_are_typed_like_top_level_ones():
    # what Snakemake hands over for --config 'models={qa_lstm: {train: {epochs: 7, lr: 1e-3}}}' seeds=2
    given = {
        "models": {
            "qa_lstm": {
                "train": {"epochs": "7", "lr": "1e-3", "clip_norm": "null", "dev_split": "dev"},
                "hparams": {"flag": "true"},
            }
        },
        "papers": {"ggsa": {"sweeps": {"figure8_heads": ["3", "6"]}}},
        "seeds": 2,
        "preset": "cpu",
    }
    assert typed_overrides(given) == {
        "models": {
            "qa_lstm": {
                "train": {"epochs": 7, "lr": 1e-3, "clip_norm": None, "dev_split": "dev"},
                "hparams": {"flag": True},
            }
        },
        "papers": {"ggsa": {"sweeps": {"figure8_heads": [3, 6]}}},
        "seeds": 2,
        "preset": "cpu",
    }


def test_a_model_override_reaches_its_runs():
    config = load(preset="full", models={"qa_lstm": {"train": {"epochs": 7}}})
    assert run_config(config, "wikiqa", "qa_lstm", 1)["train"]["epochs"] == 7


def test_an_override_the_preset_scale_would_mask_is_refused_naming_what_to_set():
    base = load(preset="full")
    with pytest.raises(
        ConfigError,
        match=r"models\.qa_lstm\.train\.epochs: the preset 'smoke' sets every "
        r"model's epochs \(scale\.train\.epochs: 4\).*set scale=\{train: ",
    ):
        apply_preset({**base, "preset": "smoke"}, {"models": {"qa_lstm": {"train": {"epochs": 7}}}})
    with pytest.raises(ConfigError, match=r"models\.ggsa_ggsa_max_insuranceqa\.train\.lr_grid: the preset 'smoke'"):
        apply_preset(
            {**base, "preset": "smoke"}, {"models": {"ggsa_ggsa_max_insuranceqa": {"train": {"lr_grid": [0.5]}}}}
        )
    scaled = apply_preset({**base, "preset": "smoke"}, {"scale": {"train": {"epochs": 7}}})
    assert run_config(scaled, "synthetic_en", "qa_lstm", 1)["train"]["epochs"] == 7


@pytest.mark.slow
def test_snakemake_takes_nested_overrides_and_names_an_unknown_key_briefly(repo_root):
    def dry(*config):
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "-n",
                "-p",
                "--cores",
                "1",
                "--config",
                *config,
                "--",
                "results/runs/synthetic_en/qa_cnn/seed1/model.pt",
            ],
            cwd=repo_root,
            capture_output=True,
            text=True,
        )

    ok = dry("scale={train: {epochs: 3}, hparams: {filters: 8}}")
    assert ok.returncode == 0, ok.stderr
    assert '"epochs": 3' in ok.stdout and '"filters": 8' in ok.stdout
    bad = dry("sedes=3")
    assert bad.returncode != 0
    said = bad.stdout + bad.stderr  # Snakemake prints a Snakefile's error on stdout
    assert (
        "--config: unknown key 'sedes' (typo of 'seeds'?); allowed: preset, seeds, data" in said
    )  # named where it came from
    assert "$schema" not in said and len(said.splitlines()) < 15, said


def test_a_run_named_by_hand_is_resolved_through_params_or_refused_naming_what_is_missing():
    cfg = resolve_run({"dataset": "synthetic_en", "model": "qa_lstm", "seed": 2}, "--config")
    assert cfg == run_config(load(), "synthetic_en", "qa_lstm", 2)
    assert resolve_run(cfg, "--config") is cfg  # a whole run config (a run's config.json) as is
    with pytest.raises(ConfigError, match="--config: missing dataset: name a run by dataset, model and seed"):
        resolve_run({"model": "qa_lstm", "seed": 1}, "--config")
    with pytest.raises(ConfigError, match=r"--config: model 'qa_cnnn' is not configured .*did you mean 'qa_cnn'"):
        resolve_run({"dataset": "synthetic_en", "model": "qa_cnnn", "seed": 1}, "--config")
    with pytest.raises(ConfigError, match=r"not a whole run config \(missing .*\) .*unexpected train"):
        resolve_run({"model": "qa_lstm", "train": {}}, "--config")


def test_a_run_named_without_a_preset_says_which_preset_resolved_it(tmp_path):
    from ansel.training.command import train_command

    with pytest.raises(
        ConfigError, match=r"dataset 'wikqa' is not configured under the preset 'smoke' \(typo of 'wikiqa'\?\)"
    ):
        resolve_run({"dataset": "wikqa", "model": "qa_lstm", "seed": 1}, "--config")  # only the callers add the note
    named = {"dataset": "wikiqa", "model": "apnet_qa_cnn_wikiqa", "seed": 1}
    with pytest.raises(
        ConfigError,
        match=r"^--embeddings data/embeddings/wikiqa/word2vec-300.npy: not the vectors the run config names .*"
        r"\(resolved under preset 'smoke': the run config names none; add \"preset\": \"full\" or \"preset\": \"cpu\"",
    ):
        train_command(named, Path("data/processed/wikiqa"), tmp_path / "run", "data/embeddings/wikiqa/word2vec-300.npy")
    with pytest.raises(ConfigError, match="not the vectors the run config names") as refused:  # a preset named: as is
        train_command(
            {**named, "preset": "full"},
            Path("data/processed/wikiqa"),
            tmp_path / "run",
            "data/embeddings/wikiqa/word2vec-300.npy",
        )
    assert "resolved under" not in str(refused.value)


def test_pull_finds_the_checkout_from_a_subdirectory_and_checks_stages_before_pulling(repo_root, monkeypatch):
    assert dvc_pull.repository_root(repo_root / "src" / "ansel") == repo_root
    calls = []
    monkeypatch.setattr(dvc_pull, "_run", lambda args, root, capture=False: calls.append(args))
    with pytest.raises(dvc_pull.PullError, match="no stage nope"):
        dvc_pull.pull(repo_root, ["nope"])
    assert calls == []  # nothing pulled


def test_pull_that_finds_outputs_missing_names_only_those_files(repo_root, monkeypatch):
    """`snakemake --touch` logs every job (thousands of lines in the smoke DAG); the two files it
    could not touch are what the user needs (a stage's outs once left out a table's step times)."""
    log = [f"rule train:\n    output: results/runs/d/m/seed{i}/model.pt\n" for i in range(500)]
    log[7] += f"Output files {dvc_pull.NOT_TOUCHED}: results/benchmarks/ggsa/table3.json\n"
    log[9] += f"Output files {dvc_pull.NOT_TOUCHED}: results/benchmarks/ggsa/table3_v2.json, x/y.json\n"

    def run(args, root, capture=False):
        return subprocess.CompletedProcess(args, 0, "".join(log) if "--touch" in args else "{}", "")

    monkeypatch.setattr(dvc_pull, "_run", run)
    with pytest.raises(dvc_pull.PullError) as refused:
        dvc_pull.pull(repo_root, ["paper_ggsa"])
    lines = str(refused.value).splitlines()
    assert lines[1:] == ["results/benchmarks/ggsa/table3.json", "results/benchmarks/ggsa/table3_v2.json", "x/y.json"]
    assert "3 outputs of snakemake paper_ggsa" in lines[0]


def test_pull_outside_a_checkout_says_so(tmp_path, monkeypatch):
    monkeypatch.delenv("ANSEL_ROOT", raising=False)
    with pytest.raises(dvc_pull.PullError, match="not inside an ansel checkout"):
        dvc_pull.repository_root(tmp_path)
    (tmp_path / "params.yaml").touch()
    (tmp_path / "workflow" / "papers").mkdir(parents=True)
    with pytest.raises(dvc_pull.PullError, match="not a DVC checkout of ansel"):
        dvc_pull.repository_root(tmp_path)


@pytest.mark.parametrize(
    "config,message",
    [
        ('{"model": "qa_lstm", "seed": 1}', "ansel train: --config: missing dataset"),
        (
            '{"dataset": "synthetic_en", "model": "qa_lstm", "seed": 1}',
            "ansel train: --embeddings: the run starts from 'word2vec' vectors; give their file "
            "(data/embeddings/synthetic_en/word2vec-60.npy)",
        ),
    ],
)
def test_a_run_by_hand_that_cannot_start_says_why_and_leaves_no_directory(tmp_path, config, message):
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--config", config, "--processed", str(tmp_path / "none"), "--run-dir", str(run)])
    assert str(e.value).startswith(message) and not run.exists()


@pytest.mark.parametrize(
    "config, message",
    [
        ({"source": "wikiqa", "splits": ["train"], "read": {"tokenizr": "english"}}, r"datasets.w.read: .*'tokenizr'"),
        ({"source": "wikiqax", "splits": ["train"]}, r"datasets.w.source: unknown dataset source 'wikiqax'; known: "),
        ({"splits": ["train"]}, r"datasets.w.source: unknown dataset source '\(none given\)'"),
        ({"source": "wikiqa"}, r"datasets.w.splits: missing: the splits to write"),
    ],
    ids=["read-option", "source", "no-source", "no-splits"],
)
def test_a_preprocess_by_hand_with_a_wrong_dataset_block_names_the_key(tmp_path, config, message):
    """The dataset block as `ansel preprocess --config` takes it, refused before any raw file is read."""
    out = tmp_path / "processed"
    args = ["preprocess", "--dataset", "w", "--config", json.dumps(config), "--raw", str(tmp_path / "raw")]
    with pytest.raises(SystemExit, match=rf"^ansel preprocess: {message}"):
        cli.main([*args, "--out", str(out)])
    assert not out.exists()


def test_preprocess_help_says_its_dataset_is_a_name_not_looked_up(capsys):
    """`--dataset wikqa` is not refused: the pipeline passes a key of its datasets, --config the block."""
    with pytest.raises(SystemExit):
        cli.main(["preprocess", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "nothing is looked up by it: --config holds its settings" in said, said


def test_embeddings_by_hand_with_an_unknown_method_names_the_known_ones(tmp_path):
    out = tmp_path / "emb/x-8.npy"
    args = ["embeddings", "--config", json.dumps({"pretrained": {"glove840b": "g.zip"}}), "--method", "glov840b"]
    with pytest.raises(
        SystemExit, match=r"^ansel embeddings: --method glov840b: unknown; known here: word2vec, glove840b"
    ):
        cli.main([*args, "--processed", str(tmp_path / "p"), "--dim", "8", "--out", str(out)])
    assert not out.parent.exists()


def test_embeddings_by_hand_of_a_recipe_without_its_corpus_vectors_names_the_option(tmp_path):
    out = tmp_path / "emb/r-8.npy"
    args = ["embeddings", "--config", json.dumps({"recipes": {"r": {"corpus": ["x"]}}}), "--method", "r"]
    with pytest.raises(SystemExit, match=r"^ansel embeddings: --vectors: required by --method r, a recipe"):
        cli.main([*args, "--processed", str(tmp_path / "p"), "--dim", "8", "--out", str(out)])
    assert not out.parent.exists()


@pytest.mark.parametrize(
    "text, message",
    [
        ("[1, 2]", "expected a JSON object ({...}), got list"),
        ('{"dataset": ', "not valid JSON: Expecting value: line 1"),
    ],
)
def test_a_config_file_that_is_not_a_json_object_is_refused_by_the_argument_parser_naming_it(
    tmp_path, capsys, text, message
):
    config = tmp_path / "config.json"
    config.write_text(text)
    with pytest.raises(SystemExit):
        cli.main(["train", "--config", str(config), "--processed", str(tmp_path), "--run-dir", str(tmp_path / "r")])
    assert f"argument --config: {config}: {message}" in capsys.readouterr().err


@pytest.mark.parametrize(
    "edit, said",
    [
        ({"train": {"lr": float("inf")}}, "train.lr: inf is not a finite number"),
        ({"train": {"epochz": 3}}, r"train.epochz: unknown key \(typo of 'epochs'\?\); known: "),
        ({"train": {"dev_split": "tset"}}, "train.dev_split: 'tset' not a split of "),
        ({"seed": -5}, r"seed: -5 is not in 0 \.\. 2\*\*32 - 1"),
    ],
    ids=["inf", "unknown-key", "split", "seed"],
)
def test_a_run_config_file_with_a_wrong_value_is_refused_naming_the_file(tmp_path, processed, edit, said):
    """`ansel train --config run.json`: the file, not only --config, as a run's config.json is named by evaluate."""
    from tests.tiny_run import tiny_qa_cnn

    config, file, run = tiny_qa_cnn(), tmp_path / "run.json", tmp_path / "run"
    for block, values in edit.items():
        config[block] = {**config[block], **values} if isinstance(values, dict) else values
    file.write_text(json.dumps(config))
    with pytest.raises(SystemExit, match=rf"^ansel train: --config {file}: {said}"):
        cli.main(["train", "--config", str(file), "--processed", str(processed), "--run-dir", str(run)])
    assert not run.exists()


def test_a_config_given_inline_that_is_not_json_is_refused_as_it_is(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli.main(["train", "--config", '{"dataset": ', "--processed", str(tmp_path), "--run-dir", str(tmp_path / "r")])
    assert "argument --config: not valid JSON: Expecting value: line 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    "config, message",
    [
        ('{"qa_cnn": 1}', r"--config qa_cnn: expected a JSON object, got 1"),
        ('{"qa_cnn": {"arch": "qa_cnn"}}', r"--config qa_cnn: not a whole run config \(missing dataset, "),
        ("{}", r"--config: expected {model: run config, ...} naming at least one model"),
    ],
)
def test_step_times_by_hand_with_a_wrong_config_names_the_model(tmp_path, config, message):
    out = tmp_path / "st.json"
    with pytest.raises(SystemExit, match=rf"^ansel step-times: {message}"):
        cli.main(["step-times", "--config", config, "--processed", str(tmp_path), "--out", str(out)])
    assert not out.exists()


def test_step_times_by_hand_of_another_datasets_folder_names_both(tmp_path):
    from ansel.config import load, run_config

    folder, out = tmp_path / "data/processed/wikiqa", tmp_path / "st.json"
    folder.mkdir(parents=True)
    config = json.dumps({"qa_cnn": run_config(load(), "synthetic_en", "qa_cnn", 1)})
    with pytest.raises(
        SystemExit, match=rf"^ansel step-times: --config qa_cnn: a run of dataset 'synthetic_en', but {folder} holds "
    ):
        cli.main(["step-times", "--config", config, "--processed", str(folder), "--out", str(out)])
    assert not out.exists()


@pytest.mark.parametrize("verb, item", [("table", "tableX"), ("figure", "fig8")])
def test_a_table_or_figure_the_spec_lacks_is_named_with_those_it_has(tmp_path, verb, item):
    from ansel.config import load

    extra = ["--published", str(tmp_path / "p.csv")] if verb == "table" else []
    with pytest.raises(SystemExit, match=rf"^ansel {verb}: papers.ggsa: spec has no {verb} '{item}' \(.*{verb}"):
        cli.main(
            [verb, "--config", json.dumps(load()), "--paper", "ggsa", f"--{verb}", item, *extra]
            + ["--out-prefix", str(tmp_path / "out/x")]
        )
    assert not (tmp_path / "out").exists()


def test_a_mistyped_model_in_an_override_is_named_with_the_nearest_configured_one():
    from ansel.config import params_schema
    from ansel.schema import check_schema

    config = load()
    typo = {**config, "models": {**config["models"], "qa_cnnx": {"train": {"epochs": 2}}}}
    with pytest.raises(ConfigError, match=r"^--config: models.qa_cnnx: 'arch' is a required property \(a new entry, "):
        check_schema(typo, params_schema(), "--config")
    with pytest.raises(ConfigError, match=r"or a typo of 'qa_cnn'\?\)$"):
        check_schema(typo, params_schema(), "--config")
    new = {**config, "models": {**config["models"], "zzzzzz": {"train": {"epochs": 2}}}}
    with pytest.raises(ConfigError, match=r"models.zzzzzz: 'arch' is a required property$"):
        check_schema(new, params_schema(), "--config")


@pytest.mark.parametrize(
    "edit, said",
    [
        ({"max_len_q": 0}, "max_len_q: 0 is not >= 1"),
        ({"max_len_a": "20"}, "max_len_a: '20' is not of type int"),
        ({"seed": "x"}, "seed: 'x' is not of type int"),
        ({"seed": None}, "seed: None is not of type int"),
        ({"seed": 1.7}, "seed: 1.7 is not of type int"),
        ({"seed": -5}, r"seed: -5 is not in 0 \.\. 2\*\*32 - 1"),
        ({"dataset": ["synthetic_en"]}, r"dataset: \['synthetic_en'\] is not of type str"),
        ({"extra_key": 1}, "extra_key: unknown key of a run config; known: dataset, model, seed"),
    ],
    ids=[
        "max_len_q-0",
        "max_len_a-str",
        "seed-str",
        "seed-null",
        "seed-float",
        "seed-negative",
        "dataset-list",
        "extra",
    ],
)
def test_a_whole_run_config_with_a_wrong_key_or_value_is_refused_naming_it(tmp_path, processed, edit, said):
    """By `ansel train --config` before any data is read, and by `ansel evaluate` of a hand-edited config.json."""
    from ansel.evaluation.evaluate import evaluate_run
    from tests.tiny_run import tiny_qa_cnn, train_args

    config, run = {**tiny_qa_cnn(), **edit}, tmp_path / "run"
    with pytest.raises(SystemExit, match=rf"^ansel train: --config: {said}"):
        cli.main(train_args(config, tmp_path / "none", run))
    assert not run.exists()
    with pytest.raises(ConfigError, match=rf"^--config: {said}"):
        resolve_run(
            {"dataset": "synthetic_en", "model": "qa_lstm", "seed": edit["seed"]} if "seed" in edit else config,
            "--config",
        )
    run.mkdir()
    (run / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError, match=rf"^{run / 'config.json'}: {said}"):
        evaluate_run(run, processed)


@pytest.mark.parametrize(
    "key, split", [("eval.splits", ["dev", "tset"]), ("train.monitor_splits", ["tset"]), ("train.dev_split", "tset")]
)
def test_a_split_the_processed_dataset_lacks_is_refused_before_training(tmp_path, processed, key, split):
    from tests.tiny_run import tiny_qa_cnn, train_args

    config, run = tiny_qa_cnn(), tmp_path / "run"
    block, name = key.split(".")
    config[block][name] = split
    with pytest.raises(SystemExit, match=rf"^ansel train: --config: {key}: 'tset' not a split of {processed} \(dev, "):
        cli.main(train_args(config, processed, run))
    assert not run.exists()


def test_vectors_the_run_config_does_not_name_are_refused(tmp_path, processed):
    """config.json records the config's `embeddings`: vectors given for a run of random initial weights, or a
    pipeline vectors file of another method, would train from vectors it does not name."""
    from tests.tiny_run import tiny_qa_cnn, train_args

    run, vectors = tmp_path / "run", tmp_path / "data/embeddings/synthetic_en/word2vec-60.npy"
    with pytest.raises(SystemExit, match=rf"^ansel train: --embeddings {vectors}: the run config names no vectors"):
        cli.main(train_args(tiny_qa_cnn(), processed, run, "--embeddings", str(vectors)))
    with pytest.raises(
        SystemExit,
        match=rf"^ansel train: --embeddings {vectors}: not the vectors the run config names \('glove': "
        r"data/embeddings/synthetic_en/glove-60\.npy\)",
    ):
        cli.main(train_args({**tiny_qa_cnn(), "embeddings": "glove"}, processed, run, "--embeddings", str(vectors)))
    assert not run.exists()


@pytest.mark.parametrize(
    "args, said",
    [
        (
            ["train", "--config", "{}", "--processed", "p", "--run-dir", "r", "--threads", "0"],
            "--threads: must be above 0",
        ),
        (
            ["embeddings", "--config", "{}", "--processed", "p", "--method", "word2vec", "--dim", "-5", "--out", "o"],
            "--dim",
        ),
        (["step-times", "--config", "{}", "--out", "o", "--batches", "0"], "--batches: must be above 0"),
        (["step-times", "--config", "{}", "--out", "o", "--rounds", "-1"], "--rounds: must be above 0"),
    ],
    ids=["threads", "dim", "batches", "rounds"],
)
def test_a_count_that_must_be_positive_is_refused_by_the_command_line(args, said, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(args)
    assert e.value.code == 2 and f"argument {said}" in capsys.readouterr().err


@pytest.mark.parametrize(
    "options, said",
    [
        ({"files": ["nosuch"]}, r"trecqa: option files names unknown file\(s\) \['nosuch'\]; known: \['TRAIN.xml'"),
        ({"file": ["TRAIN.xml"]}, r"trecqa: unknown fetch option\(s\) \['file'\]; known: \['files'\]"),
    ],
)
def test_a_download_with_unknown_fetch_options_names_them_and_the_known_ones(tmp_path, options, said):
    out = tmp_path / "raw" / "manifest.json"
    with pytest.raises(SystemExit, match=rf"^ansel download: --config: {said}"):
        cli.main(["download", "--source", "trecqa", "--config", json.dumps(options), "--out", str(out)])
    assert not out.parent.exists()


@pytest.mark.parametrize(
    "verb, args, config, said",
    [
        (
            "download",
            ["--source", "trecqa"],
            {"file": ["TRAIN.xml"]},
            r"--config FILE: trecqa: unknown fetch option\(s\)",
        ),
        ("step-times", ["--processed", "p"], {}, r"--config FILE: expected \{model: run config, \.\.\.\} naming"),
        ("step-times", ["--processed", "p"], {"qa_cnn": 1}, "--config FILE: qa_cnn: expected a JSON object, got 1"),
        (
            "preprocess",
            ["--dataset", "pairs", "--raw", "raw"],
            {"source": "quoraqp_raw", "read": {"split": {"dev": 1.5}}, "splits": ["train", "dev"]},
            r"--config FILE: datasets\.pairs\.read\.split\.dev: 1\.5 is not a fraction in \(0, 1\)",
        ),
        (
            "embeddings",
            ["--processed", "p", "--method", "glov840b", "--dim", "8"],
            {"pretrained": {"glove840b": "g.txt"}},
            r"--method glov840b: unknown; known here: word2vec, glove840b \(--config FILE's recipes",
        ),
    ],
    ids=["download", "step-times", "step-times-model", "preprocess", "embeddings"],
)
def test_a_verb_given_its_config_in_a_file_names_the_file(tmp_path, monkeypatch, verb, args, config, said):
    """As `ansel train --config run.json` does: before, `--config` alone (or, for preprocess, the key path)."""
    monkeypatch.chdir(tmp_path)
    file, out = tmp_path / "config.json", tmp_path / "out" / "x.json"
    file.write_text(json.dumps(config))
    said = said.replace("FILE", re.escape(str(file)))
    with pytest.raises(SystemExit, match=rf"^ansel {verb}: {said}"):
        cli.main([verb, "--config", str(file), *args, "--out", str(out)])
    assert not out.parent.exists()


def test_a_category_classifier_on_a_dataset_without_categories_is_refused_by_the_dry_run():
    """MTAS on WikiQA (or a preset aliasing LawQA onto it): each of its trainings would fail, so the
    run's config is refused, naming the model's arch, the dataset and those that have categories."""
    config = load(preset="cpu")
    with pytest.raises(
        ConfigError,
        match=r"^models\.matrix_mtas\.arch: 'mtas' also classifies each question's category; the questions of "
        r"datasets\.wikiqa \(source 'wikiqa'\) carry none: datasets that have them: .*cmeddialog",
    ):
        run_config(config, "wikiqa", "matrix_mtas", 1)
    assert run_config(config, "cmeddialog", "matrix_mtas", 1)["arch"] == "mtas"


def test_a_category_classifier_put_on_such_a_dataset_by_an_alias_names_the_alias_and_its_source():
    """`--config 'dataset_alias={lawqa: wikiqa}'`: the alias is the setting at fault, so the message names it
    and the source it came from (before: the model's arch, blamed on params.yaml)."""
    config = load(preset="cpu")
    config["dataset_alias"]["lawqa"] = "wikiqa"
    with pytest.raises(ConfigError) as refused:
        run_config(config, "wikiqa", "matrix_mtas", 1)
    message = str(refused.value)
    assert message.startswith("models.matrix_mtas.arch (from dataset_alias.lawqa): 'mtas' also classifies")
    origin = config_origin([], {"dataset_alias": {"lawqa": "wikiqa"}}, "params.yaml")
    assert origin(*refused_paths(message)) == "--config"


def test_a_category_classifier_by_hand_on_data_without_categories_is_refused_before_training(tmp_path):
    from tests.tiny_run import tiny_qa_cnn, train_args

    """A whole run config (no run_config check): refused in one line once the data is loaded, no run folder."""
    raw, processed, run = tmp_path / "raw", tmp_path / "processed", tmp_path / "run"
    s = Synthetic()
    s.fetch(raw, None, {"seed": 5, "questions": {"train": 20, "dev": 10, "test": 10}})
    ds = s.read(raw, {"language": "en", "tokenizer": "english", "name": "syn"})
    ds.questions["category"] = None  # as a reader without categories leaves them
    ds.save(processed)
    Vocab.build(training_texts(ds)).save(processed / "vocab.json")
    config = tiny_qa_cnn(category_weight=0.1)
    config.update(arch="mtas", hparams={"embedding_dim": 16, "hidden": 8, "attention": 8, "heads": 2})
    with pytest.raises(
        SystemExit,
        match=rf"^ansel train: --config: arch: 'mtas' also classifies each question's category; .* of {processed} has 0",
    ):
        cli.main(train_args(config, processed, run))
    assert not run.exists()


def test_an_untrained_ranker_runs_on_a_dataset_without_a_dev_split(tmp_path, processed):
    """Random and the lexical rankers select nothing on dev: legalqa_siat (train and test only) is theirs,
    by the dry run and by hand; a trained model there is still refused, naming its dev_split."""
    config = load(preset="cpu")
    assert run_config(config, "legalqa_siat", "lexical_bm25", 1)["arch"] == "bm25"
    with pytest.raises(
        ConfigError, match=r"^models\.matrix_qa_cnn\.train\.dev_split: 'dev' not a split of datasets\.legalqa_siat"
    ):
        run_config(config, "legalqa_siat", "matrix_qa_cnn", 1)
    ranker = run_config(load(), "synthetic_en", "random", 1)
    ranker["eval"]["splits"] = ["test"]
    ranker["train"]["dev_split"] = "none"
    run = tmp_path / "run"
    cli.main(
        ["train", "--config", json.dumps(ranker), "--processed", str(processed), "--run-dir", str(run), "--no-progress"]
    )
    cli.main(["evaluate", "--processed", str(processed), "--run-dir", str(run)])
    assert set(json.loads((run / "metrics.json").read_text())) >= {"test"}


def test_a_run_naming_an_arch_for_its_model_is_told_the_models_of_that_arch():
    """`"model": "ggsa"` (the architecture, as the papers name it): the configured models of that arch."""
    with pytest.raises(
        ConfigError,
        match=r"^--config: model 'ggsa' is not configured under the preset 'cpu'; it is an arch, of the models .*matrix_ggsa",
    ):
        resolve_run({"dataset": "wikiqa", "model": "ggsa", "seed": 1, "preset": "cpu"}, "--config")


@pytest.mark.parametrize("split", ["test", "test1"])
def test_selecting_the_checkpoint_on_a_test_split_is_refused_naming_the_key(split):
    """Each cell is chosen on dev, never on test: ``train.dev_split: test`` trained and reported a test metric
    selected on itself."""
    config = load(preset="smoke", train={"dev_split": split})
    with pytest.raises(ConfigError, match=rf"train\.dev_split: '{split}': the checkpoint would be selected on"):
        run_config(config, "synthetic_en", "qa_cnn", 1)
