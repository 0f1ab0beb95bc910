"""params.yaml validation: a wrong key or type stops the run with a message naming it."""

import subprocess
import sys

import pytest
import yaml

from ansel.config import (
    ConfigError,
    apply_preset,
    config_origin,
    deep_merge,
    load,
    model_config,
    naming_the_source,
    preset_file,
    run_config,
    validate,
)
from ansel.schema import check_schema

SCHEMA = "workflow/schemas/params.schema.yaml"


@pytest.fixture
def params(repo_root):
    return yaml.safe_load((repo_root / "params.yaml").read_text())


def _error(config, repo_root) -> str:
    with pytest.raises(ConfigError) as e:
        check_schema(config, repo_root / SCHEMA, "params.yaml")
    return str(e.value)


def test_params_and_every_preset_are_valid(params, repo_root):
    check_schema(params, repo_root / SCHEMA, "params.yaml")
    for preset in sorted(p.stem for p in (repo_root / "presets").glob("*.yaml")):
        check_schema(apply_preset({**params, "preset": preset}), repo_root / SCHEMA, preset)


def test_every_model_config_builds_its_hparams(params):
    config = apply_preset(params)
    for name in config["models"]:
        model_config(config, name)


def test_unknown_top_level_key_is_named_with_the_allowed_ones(params, repo_root):
    params["sedes"] = 3
    msg = _error(params, repo_root)
    assert msg.startswith("params.yaml: unknown key 'sedes' (typo of 'seeds'?); allowed: preset, seeds,")
    assert "\n" not in msg


def test_wrong_type_deep_inside_is_named(params, repo_root):
    params["datasets"]["synthetic_en"]["max_len_q"] = "twenty"
    assert (
        _error(params, repo_root) == "params.yaml: datasets.synthetic_en.max_len_q: 'twenty' is not of type 'integer'"
    )


def test_unknown_train_option_is_named(params, repo_root):
    params["models"]["qa_lstm"]["train"] = {"learning_rate": 0.1}
    msg = _error(params, repo_root)
    assert msg.startswith("params.yaml: models.qa_lstm.train: unknown key 'learning_rate'; allowed: epochs,"), msg


def test_a_typo_in_train_negatives_is_named_with_the_key_or_value_it_meant(params, repo_root):
    params["models"]["qa_lstm"]["train"] = {"negatives": {"nn": 2}}
    assert _error(params, repo_root) == (
        "params.yaml: models.qa_lstm.train.negatives: unknown key 'nn' (typo of 'n'?); allowed: strategy, n, source"
    )
    params["models"]["qa_lstm"]["train"] = {"negatives": {"strategy": "sampled_mx"}}
    assert _error(params, repo_root).endswith(
        "negatives.strategy: 'sampled_mx' is not one of ['pool', 'random', 'sampled_max'] (typo of 'sampled_max'?)"
    )


def test_a_refused_value_is_named_by_the_source_that_gave_it(params, repo_root, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    first.write_text("seeds: 0\nmodels: {qa_lstm: {train: {lr: -1}}}\n")
    second.write_text("seeds: 0\n")
    given = {"models": {"qa_lstm": {"train": {"learning_rate": "0.1"}}}}  # --config, as Snakemake gives it
    origin = config_origin([first, second], given, "params.yaml")

    def refused(config):
        with pytest.raises(ConfigError) as e:
            check_schema(config, repo_root / SCHEMA, origin)
        return str(e.value)

    assert refused(deep_merge(params, given)).startswith("--config: models.qa_lstm.train: unknown key 'learning_rate'")
    assert (
        refused(deep_merge(params, {"seeds": 0})) == "--configfile second.yaml: seeds: 0 is less than the minimum of 1"
    )
    assert origin(("models", "qa_lstm", "train", "lr")) == "--configfile first.yaml"  # the later file does not set it
    params["datasets"]["synthetic_en"]["max_len_q"] = "twenty"
    assert refused(params).startswith("params.yaml: datasets.synthetic_en.max_len_q:")  # no override sets it


def test_unknown_preset_and_unknown_model_are_named(params):
    with pytest.raises(ConfigError, match="preset 'tiny'"):
        apply_preset({**params, "preset": "tiny"})
    with pytest.raises(ConfigError, match="models.nope"):
        run_config(load(), "synthetic_en", "nope", 1)
    bad = load()
    bad["models"]["qa_lstm"]["hparams"]["hiden"] = 3
    with pytest.raises(ValueError, match=r"models\.qa_lstm\.hparams\.hiden"):
        model_config(bad, "qa_lstm")


@pytest.mark.slow
def test_snakemake_refuses_a_bad_key_at_start_up(repo_root):
    out = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--config", "seeds=two"],
        cwd=repo_root,
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert "seeds" in out.stderr + out.stdout and "two" in out.stderr + out.stdout


def test_command_line_overrides_win_over_the_preset():
    # `snakemake --config preset=smoke seeds=1`: the preset sets seeds, the command line wins.
    assert load(preset="smoke")["seeds"] == 2
    assert load(preset="smoke", seeds=1)["seeds"] == 1
    nested = load(preset="cpu", scale={"train": {"lr_grid": [5e-5]}})
    assert nested["scale"]["train"]["lr_grid"] == [5e-5]


def test_a_preset_stands_in_for_vectors_it_cannot_read_and_a_wrong_stand_in_is_named(params):
    full, cpu = load(preset="full"), load(preset="cpu")
    assert model_config(full, "apnet_ap_cnn_wikiqa")["embeddings"] == "googlenews"  # AP §5.2
    assert model_config(full, "amv_arc_i_wikiqa")["embeddings"] == "glove6b_50"  # the fork's ARC-I config
    assert model_config(cpu, "apnet_ap_cnn_wikiqa")["embeddings"] == "word2vec"
    assert model_config(cpu, "apnet_ap_cnn_trecqa")["embeddings"] == "english_vocab"  # the stand-in dev chose
    assert run_config(cpu, "trecqa", "apnet_ap_cnn_trecqa", 1)["vocab"].endswith("english_vocab-300.vocab.json")
    with pytest.raises(ConfigError, match=r"embeddings_alias.googlenews: 'word2vc' is no vectors method"):
        validate(load(preset="cpu", embeddings_alias={"googlenews": "word2vc"}))
    # a misspelt key would leave the vectors or dataset it meant un-aliased, the run on the real ones
    with pytest.raises(ConfigError, match=r"embeddings_alias.googlenwes: not a vectors method .*googlenews"):
        validate(load(preset="cpu", embeddings_alias={"googlenwes": "word2vec"}))
    with pytest.raises(ConfigError, match=r"dataset_alias.wikiqaa: not a dataset of datasets \(.*wikiqa,"):
        validate(load(preset="smoke", dataset_alias={"wikiqaa": "synthetic_en"}))


def test_a_scale_key_no_architecture_has_is_refused_and_a_refused_scale_value_named_by_it():
    """`model_config` applies a scale key only where a model's arch has it: a typo would apply nowhere."""
    with pytest.raises(
        ConfigError,
        match=r"^scale.hparams.filterz: no architecture has this hyperparameter \(typo of 'filters'\?\); known: ",
    ):
        validate(load(scale={"hparams": {"filterz": 8}}))
    with pytest.raises(ConfigError) as e:
        validate(load(scale={"hparams": {"filters": 0}}))
    assert str(e.value) == "models.qa_cnn.hparams.filters (from scale.hparams.filters): 0 is not positive"
    with pytest.raises(ConfigError) as e:  # the model's own value: named as it is
        validate(load(preset="full", models={"qa_cnn": {"hparams": {"filters": 0}}}))
    assert str(e.value) == "models.qa_cnn.hparams.filters: 0 is not positive"


def test_a_presets_sweep_or_question_naming_no_item_of_the_spec_is_refused():
    """A misspelt figure id would leave the spec's values in place: the full sweep would run."""
    with pytest.raises(
        ConfigError,
        match=r"^papers.ggsa.sweeps.figure8_group_sise: not a figure swept over values in "
        r"\S+/ggsa.yaml \(typo of 'figure8_group_size'\?\); those are: figure8_group_size, ",
    ):
        validate(load(papers={"ggsa": {"sweeps": {"figure8_group_sise": [4, 10]}}}))
    with pytest.raises(
        ConfigError,
        match=r"^papers.amvlstm.questions.table44: not a top_answers table in \S+/amvlstm.yaml "
        r"\(typo of 'table4'\?\); those are: table4$",
    ):
        validate(load(papers={"amvlstm": {"questions": {"table44": "flilai"}}}))


def test_an_alias_value_or_a_models_vectors_naming_nothing_is_named_by_its_key():
    with pytest.raises(
        ConfigError,
        match=r"^dataset_alias.wikiqa: 'synthetic_em' is not a dataset of datasets "
        r"\(typo of 'synthetic_en'\?\); known: synthetic_en, ",
    ):
        validate(load(dataset_alias={"wikiqa": "synthetic_em"}))
    with pytest.raises(
        ConfigError,
        match=r"^models.qa_lstm.embeddings: 'glove8400b' is no vectors method \(typo of "
        r"'glove840b'\?\); name word2vec, a key of embeddings.pretrained or embeddings.word2vec \(.*glove840b",
    ):
        validate(load(models={"qa_lstm": {"embeddings": "glove8400b"}}))


def test_a_datasets_source_and_read_options_are_checked_before_any_job(params):
    """A preprocess job starts by removing the dataset's processed tables: a wrong option must stop
    the plan, not the job."""
    with pytest.raises(ConfigError, match=r"datasets.wikiqa.read: wikiqa: unknown read option\(s\) \['tokenizr'\]"):
        validate(load(preset="cpu", datasets={"wikiqa": {"read": {"tokenizr": "english"}}}))
    with pytest.raises(ConfigError, match=r"datasets.wikiqa.read: .*unknown stop-word list 'nltk_englsh'"):
        validate(load(preset="cpu", datasets={"wikiqa": {"read": {"stopwords": "nltk_englsh"}}}))
    with pytest.raises(ConfigError, match=r"datasets.wikiqa.source: unknown dataset source 'wikqa'; known: .*wikiqa"):
        validate(load(preset="cpu", datasets={"wikiqa": {"source": "wikqa"}}))
    for preset in ("smoke", "cpu", "paper", "full"):
        validate(load(preset=preset))


@pytest.mark.parametrize(
    "dataset, read, match",
    [
        ("synthetic_en", {"tokenizer": "englsh"}, r"read\.tokenizer: unknown tokenizer 'englsh'; known: english,"),
        ("wikiqa", {"tokenizer": "englsh"}, r"read\.tokenizer: unknown tokenizer 'englsh'"),
        (
            "wikiqa",
            {"drop_questions": {"splits": ["tset"]}},
            r"read\.drop_questions\.splits: unknown split\(s\) \['tset'\] \(typo of 'test'\?\); "
            r"the wikiqa reader's splits: train, dev, test",
        ),
        (
            "wikiqa",
            {"drop_questions": {"no_positiv": True}},
            r"read\.drop_questions\.no_positiv: unknown key \(typo of 'no_positive'\?\); known: all_positive,",
        ),
        (
            "wikiqa",
            {"drop_questions": {"all_positive": "yes"}},
            r"read\.drop_questions\.all_positive: 'yes' is not of type bool",
        ),
        ("wikiqa", {"length_filter": "abc"}, r"read\.length_filter: expected a mapping, got 'abc'"),
        ("wikiqa", {"length_filter": {"max_len": "50"}}, r"read\.length_filter\.max_len: '50' is not of type int"),
        ("wikiqa", {"length_filter": {"splits": "dev"}}, r"read\.length_filter\.splits: 'dev' is not of type list"),
        (
            "cmeddialog",
            {"negatives": {"method": "bm2"}},
            r"read\.negatives\.method: 'bm2' is not of type 'bm25' \| 'other_category' \(typo of 'bm25'\?\)$",
        ),
        ("cmeddialog", {"negatives": {"n": 0}}, r"read\.negatives\.n: 0 is not >= 1$"),
        ("cmeddialog", {"negatives": {"pool": "al"}}, r"read\.negatives\.pool: 'al' is not of type 'all' \| 'split'"),
        ("cmeddialog", {"pools": {"sise": 50}}, r"read\.pools\.sise: unknown key \(typo of 'size'\?\); known: pool,"),
        ("cmeddialog", {"pools": {"size": 0}}, r"read\.pools\.size: 0 is not >= 1$"),
        ("cmeddialog", {"pools": {"splits": ["dev", "tst"]}}, r"read\.pools\.splits: unknown split\(s\) \['tst'\]"),
        (
            "yahooqa",
            {"negatives": {"method": "bm25", "splits": ["trian"]}},
            r"read\.negatives\.splits: unknown split\(s\) \['trian'\] \(typo of 'train'\?\); the yahooqa reader's",
        ),
    ],
)
def test_read_option_values_are_checked_before_any_job(params, dataset, read, match):
    """Values and sub-keys too, not only the option names: a misspelt sub-key would be ignored
    (another evaluation protocol), a wrong value would fail the job after Snakemake removed the
    dataset's processed tables."""
    with pytest.raises(ConfigError, match=rf"^datasets\.{dataset}\.{match}"):
        validate(load(preset="cpu", datasets={dataset: {"read": read}}))


GLOVE6B_ROWS = {
    "wikiqa_mz": ["amv_arc_i_wikiqa", "amv_arc_ii_wikiqa"],
    "quoraqp_standin": ["amv_arc_i_quoraqp", "amv_arc_ii_quoraqp", "amv_mv_lstm_quoraqp"],
}


@pytest.mark.slow
def test_the_paper_plan_trains_the_glove6b_rows_on_the_real_vectors(repo_root):
    """`snakemake -n all --config preset=paper`: the rows the fork gives GloVe 6B 50-d read it from its
    source's download (the wheel), not a stand-in. --forceall: the whole plan, as in a fresh clone,
    whatever this checkout has built."""
    out = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "all", "--forceall", "--cores", "1", "--config", "preset=paper"],
        cwd=repo_root,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    jobs = [
        dict(line.strip().split(": ", 1) for line in block.splitlines()[1:] if ": " in line)
        for block in out.stdout.split("\nrule ")[1:]
    ]
    inputs = {j["output"].split(", ")[0]: j.get("input", "").split(", ") for j in jobs if "output" in j}
    for dataset, models in GLOVE6B_ROWS.items():
        vectors = f"data/embeddings/{dataset}/glove6b_50-50.npy"
        assert inputs[vectors] == [f"data/processed/{dataset}", "data/raw/glove6b_50d/manifest.json"]
        for model in models:
            for seed in range(1, 6):
                assert vectors in inputs[f"results/runs/{dataset}/{model}/seed{seed}/model.pt"], (model, seed)
    assert "data/raw/glove6b_50d/manifest.json" in inputs


def test_every_datasets_reader_tells_the_splits_it_will_produce(params):
    """`Reader.splits`, from the read and fetch options alone: what the dry run checks a dataset's `splits`
    (and through them the dev, monitor and evaluation splits) against, for every reader."""
    from ansel.data.registry import get_source

    for name, ds in apply_preset({**params, "preset": "full"})["datasets"].items():
        produced = get_source(ds["source"]).splits(ds.get("read", {}), ds.get("fetch", {}))
        assert set(ds["splits"]) <= set(produced), (name, produced)


@pytest.mark.parametrize(
    "preset, datasets, said",
    [
        ("cpu", {"lawqa": {"read": {"dev_questions": 0}}}, "datasets.lawqa.splits: 'dev' not a split the lawqa reader"),
        (
            "smoke",
            {
                name: {"fetch": {"questions": {"test2": 0}}}
                for name in ("synthetic_en", "synthetic_zh", "synthetic_pairs")
            },
            "datasets.synthetic_en.splits: 'test2' not a split the synthetic reader",
        ),
        ("cpu", {"quoraqp": {"read": {"splits": ["dev", "test"]}}}, "datasets.quoraqp.splits: 'train' not a split"),
        (  # before: the preprocess job's KeyError 'train' as it built the vocabulary
            "cpu",
            {"legalqa_siat": {"read": {"splits": {"dev": "dev", "test": "test"}}, "splits": ["dev", "test"]}},
            r"datasets.legalqa_siat.splits: \['dev', 'test'\] has no 'train' split: the vocabulary",
        ),
        (
            "cpu",
            {"insuranceqa_v1": {"read": {"splits": ["train", "dev", "tset1"]}}},
            r"datasets.insuranceqa_v1.read.splits: unknown split\(s\) \['tset1'\] \(typo of 'test1'\?\); known: ",
        ),
    ],
    ids=["lawqa", "synthetic", "quoraqp", "legalqa_siat", "insuranceqa_v1"],
)
def test_a_dataset_split_its_reader_will_not_produce_is_refused_before_any_job(preset, datasets, said):
    """Before, only WikiQA's and TREC-QA's read options were checked against the reader's splits, and a
    dataset's `splits` against none: the preprocess job failed, after Snakemake had removed its tables."""
    with pytest.raises(ConfigError, match=rf"^{said}"):
        validate(load(preset=preset, datasets=datasets))


def test_a_value_validate_refuses_is_named_by_the_source_that_gave_it(repo_root, tmp_path, monkeypatch):
    """As the schema's refusals are: a non-finite number, a model's hyperparameter, a split the read
    options take away."""
    monkeypatch.setenv("ANSEL_ROOT", str(repo_root))
    monkeypatch.chdir(tmp_path)  # --configfile is named relative to the working directory
    (tmp_path / "my.yaml").write_text("models:\n  ggsa_ggsa_max_insuranceqa:\n    hparams: {heads: 7}\n")
    cases = [
        ({"train": {"lr": float("inf")}}, [], "--config: train.lr: inf is not a finite number"),
        (
            {},
            [tmp_path / "my.yaml"],
            "--configfile my.yaml: models.ggsa_ggsa_max_insuranceqa.hparams.heads: 7 does not divide embedding_dim 60",
        ),
        (
            {"datasets": {"lawqa": {"read": {"dev_questions": 0}}}},
            [],
            "--config: datasets.lawqa.splits: 'dev' not a split the lawqa reader produces",
        ),
        ({"models": {"qa_cnn": {"train": {"momentum": 0.5}}}}, [], None),
    ]
    for given, files, said in cases:
        overrides = deep_merge(yaml.safe_load((tmp_path / "my.yaml").read_text()) if files else {}, given)
        origin = config_origin(files, given, "params.yaml with its preset 'smoke'")
        if said is None:
            validate(load(**overrides), origin)
            continue
        with pytest.raises(ConfigError) as e:
            validate(load(**overrides), origin)
        assert str(e.value).startswith(said), str(e.value)
    given = {"train": {"embedding_updates": "sparse"}}  # a model's training setting given for every model
    with pytest.raises(ConfigError) as e:
        validate(load(preset="cpu", **given), config_origin([], given, "base"))
    assert str(e.value).startswith("--config: models.ggsa_qa_lstm_insuranceqa.train.embedding_updates: sparse has no")


@pytest.mark.parametrize(
    "given, said",
    [
        (
            {"datasets": {"quoraqp_standin": {"read": {"resplit": {"dev": 0.5, "test": 0.5}}}}},
            r"datasets\.quoraqp_standin\.read\.resplit: the fractions sum to 1, leaving nothing to train",
        ),
        (
            {"datasets": {"quoraqp_raw": {"read": {"split": {"dev": -0.1}}}}},
            r"datasets\.quoraqp_raw\.read\.split\.dev: -0\.1 is not a fraction in \(0, 1\)",
        ),
        (
            {"datasets": {"yahooqa_sample": {"read": {"split": {"train": 0.8}}}}},
            r"datasets\.yahooqa_sample\.read\.split\.train: train is what the other splits leave",
        ),
        (
            {"datasets": {"cmeddialog": {"read": {"split": {"tset": 0.1}}}}},
            r"datasets\.cmeddialog\.read\.split\.tset: not one of the dataset's splits \(train, dev, test\) "
            r"\(typo of 'test'\?\): its fraction would be taken from train",
        ),
        (
            {"datasets": {"quoraqp_raw": {"read": {"split": [0.8, 0.1]}}}},
            r"datasets\.quoraqp_raw\.read\.split: \[0\.8, 0\.1\] does not map split names to fractions",
        ),
        (
            {"datasets": {"quoraqp": {"read": {"seed": 3}}}},
            r"datasets\.quoraqp\.read: quoraqp: read option seed is only used by resplit",
        ),
        (
            {"papers": {"ggsa": {"sweeps": {"figure8_heads": [6, "six"]}}}},
            r"papers\.ggsa\.sweeps\.figure8_heads\[1\]: 'six' is not a number or boolean \(a value of heads\)",
        ),
        (
            {"papers": {"ggsa": {"sweeps": {"figure8_heads": [7]}}}},
            r"papers\.ggsa\.sweeps\.figure8_heads\[0\]: models\.ggsa_ggsa_max_insuranceqa@heads=7\.hparams\.heads: "
            "7 does not divide embedding_dim 300",
        ),
    ],
    ids=["sum", "negative", "train", "unknown-split", "not-a-mapping", "seed-without-resplit", "sweep-type", "sweep"],
)
def test_split_fractions_and_sweep_points_are_refused_by_validate_naming_the_key_and_source(given, said):
    """Before, a dataset's split fractions were read only by its preprocess job (quoraqp's resplit) or by
    nothing (a random `split`: a negative fraction or a sum above 1 made wrong splits), and a preset's
    sweep point only by the run config it made, as the DAG's runs were listed, without its key or source."""
    with pytest.raises(ConfigError, match=rf"^--config: {said}"):
        validate(load(preset="full", **given), config_origin([], given, "params.yaml"))


@pytest.fixture
def my_preset(repo_root, tmp_path, monkeypatch):
    """``write(text)``: presets/mine.yaml in a checkout of links to this one (the working directory)."""
    for name in ("params.yaml", "workflow"):
        (tmp_path / name).symlink_to(repo_root / name)
    (tmp_path / "presets").mkdir()
    monkeypatch.setenv("ANSEL_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return lambda text: (tmp_path / "presets/mine.yaml").write_text(text)


@pytest.mark.parametrize(
    "preset, said",
    [
        (
            "datasets: {yahooqa_sample: {read: {split: {dev: 0.1, test: 0.95}}}}",
            r"datasets\.yahooqa_sample\.read\.split: the fractions sum to 1\.05",
        ),
        ("papers: {ggsa: {sweeps: {figure8_heads: [7]}}}", r"papers\.ggsa\.sweeps\.figure8_heads\[0\]: models\."),
        ("scale: {train: {lr: -1}}", r"models\.random\.train\.lr: -1 is not > 0"),  # a preset's scale wins
    ],
    ids=["fractions", "sweep", "scale"],
)
def test_a_value_a_preset_gives_is_named_by_its_file(my_preset, preset, said):
    """As the Snakefile names the sources (config_origin with the preset's file): before, every value of
    params.yaml or the preset was named "params.yaml with its preset 'mine'"."""
    my_preset(preset)
    config = load(preset="mine")
    with pytest.raises(ConfigError, match=rf"^presets/mine\.yaml: {said}"):
        validate(config, config_origin([], {}, "params.yaml", preset_file("mine")))


def test_a_run_config_refused_while_the_dag_is_built_is_named_by_its_source(my_preset):
    """What common.smk does with each run of the DAG (RUN_CONFIGS): a setting validate cannot judge
    alone (a split of the run's dataset) is named by the file that gave it, as validate's are."""
    my_preset("models: {qa_cnn: {train: {dev_split: tset}}}")
    config = load(preset="mine")
    origin = config_origin([], {}, "params.yaml", preset_file("mine"))
    validate(config, origin)
    with pytest.raises(ConfigError, match=r"^presets/mine\.yaml: models\.qa_cnn\.train\.dev_split: 'tset' not a split"):
        with naming_the_source(origin):
            run_config(config, "wikiqa", "qa_cnn", 1)
    given = {"train": {"dev_split": "tset"}}  # every model's, from the command line
    with pytest.raises(ConfigError, match=r"^--config: models\.qa_cnn\.train\.dev_split: 'tset' not a split"):
        with naming_the_source(config_origin([], given, "params.yaml")):
            run_config(load(preset="full", **given), "wikiqa", "qa_cnn", 1)


@pytest.mark.slow
def test_snakemake_names_the_source_of_a_run_configs_refused_value(repo_root):
    """The one dry run of these: common.smk checks every run's config under the Snakefile's sources."""
    out = _dry_run(repo_root, "preset=smoke", "models={qa_cnn: {train: {dev_split: tset}}}")
    assert out.returncode != 0
    said = "--config: models.qa_cnn.train.dev_split: 'tset' not a split of datasets.synthetic_en"
    assert said in out.stderr + out.stdout, out.stderr[-2000:]


def test_an_override_of_a_model_no_item_of_the_preset_runs_is_warned_naming_it():
    """A new user's audit: `--config preset=cpu 'models={qa_cnn: ...}'` (the docs' example) exited 0 having
    changed nothing, the cpu preset training no qa_cnn; only the overrides of such models are warned."""
    from ansel.paper_targets import unused_model_overrides

    overrides = {"models": {"qa_cnn": {"train": {"epochs": 7}}, "apnet_ap_cnn_wikiqa": {"train": {"epochs": 7}}}}
    origin = config_origin([], overrides, "params.yaml")
    assert unused_model_overrides(load(preset="cpu", **overrides), overrides, origin) == [
        "warning: --config: models.qa_cnn: no table or figure of the preset 'cpu' runs 'qa_cnn', "
        "so this override changes nothing"
    ]


@pytest.mark.slow
def test_snakemake_warns_of_an_override_no_job_reads_at_the_dry_run(repo_root):
    # said as the Snakefile is parsed, whatever the target: a small one keeps the DAG small
    out = _dry_run(repo_root, "preset=cpu", "models={qa_cnn: {train: {epochs: 7}}}", target=SMALL_TARGET)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "warning: --config: models.qa_cnn: no table or figure of the preset 'cpu' runs 'qa_cnn'" in out.stderr
    # a cluster job parses the Snakefile again (--mode remote): the warning was in each job's log
    job = _dry_run(repo_root, "preset=cpu", "models={qa_cnn: {train: {epochs: 7}}}", mode="remote", target=SMALL_TARGET)
    assert job.returncode == 0 and "warning: --config" not in job.stderr, job.stderr[-2000:]


SMALL_TARGET = "data/raw/wikiqa/manifest.json"


def _dry_run(repo_root, *config: str, mode: str = "default", target: str = "") -> subprocess.CompletedProcess:
    """``snakemake -n`` of ``target`` (default: the default target) under ``--config`` items (in Snakemake's
    ``mode``)."""
    cmd = [sys.executable, "-m", "snakemake", "-n", "--mode", mode, "--cores", "1", "--config", *config]
    cmd += ["--", target] if target else []
    return subprocess.run(cmd, cwd=repo_root, capture_output=True, text=True)
