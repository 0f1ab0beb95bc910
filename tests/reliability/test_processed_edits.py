"""Issue 54 item 6: a processed dataset's files carry checksums (its manifest.json, written by
preprocessing) that every job reading it checks: an edit by hand stops the job naming the file,
before anything is written."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from ansel import cli
from ansel.data.canonical import Dataset
from ansel.data.manifest import ManifestError


@pytest.fixture
def preprocessed(tmp_path):
    """The synthetic corpus downloaded and preprocessed by the commands the rules run."""
    raw, out = tmp_path / "raw/synthetic", tmp_path / "processed/syn"
    fetch = {"seed": 5, "questions": {"train": 30, "dev": 10, "test": 10}}
    cli.main(["download", "--source", "synthetic", "--config", json.dumps(fetch), "--out", str(raw / "manifest.json")])
    cli.main(
        [
            "preprocess",
            "--dataset",
            "syn",
            "--raw",
            str(raw),
            "--out",
            str(out),
            "--config",
            json.dumps(
                {
                    "source": "synthetic",
                    "read": {"language": "en", "tokenizer": "english"},
                    "splits": ["train", "dev", "test"],
                }
            ),
        ]
    )
    return out


def test_an_edited_table_or_vocabulary_stops_every_reader_naming_the_file(preprocessed, tmp_path):
    listed = json.loads((preprocessed / "manifest.json").read_text())
    assert {"questions.parquet", "answers.parquet", "candidates-test.parquet", "vocab.json"} <= set(listed)
    assert len(Dataset.load(preprocessed).splits["test"]) > 0  # unedited: read as written

    test = preprocessed / "candidates-test.parquet"
    flipped = pd.read_parquet(test).assign(label=lambda d: 1 - d.label)  # every label flipped by hand
    flipped.to_parquet(test, index=False)
    with pytest.raises(
        ManifestError,
        match=rf"{test}: changed since its preprocessing wrote it: .*delete "
        rf"{preprocessed} and rerun snakemake",
    ):
        Dataset.load(preprocessed)
    stats = tmp_path / "stats.csv"
    with pytest.raises(SystemExit, match=rf"ansel stats: {test}: changed since its preprocessing wrote it"):
        cli.main(["stats", "--processed", str(preprocessed), "--out", str(stats)])
    assert not stats.exists()

    pd.read_parquet(test).assign(label=lambda d: 1 - d.label).to_parquet(test, index=False)  # flipped back
    vocab = preprocessed / "vocab.json"
    vocab.write_text(vocab.read_text().replace('"', '"x', 3))
    vectors = tmp_path / "vectors.npy"
    with pytest.raises(SystemExit, match=rf"ansel embeddings: {vocab}: changed since its preprocessing wrote it"):
        cli.main(
            [
                "embeddings",
                "--config",
                "{}",
                "--processed",
                str(preprocessed),
                "--method",
                "word2vec",
                "--dim",
                "8",
                "--out",
                str(vectors),
            ]
        )
    assert not vectors.exists() and not vectors.with_suffix(".json").exists()


def test_a_processed_dataset_without_its_manifest_is_refused_or_listed_as_it_is(preprocessed):
    (preprocessed / "manifest.json").unlink()  # as one preprocessed before manifests existed
    with pytest.raises(
        ManifestError,
        match=rf"manifest.json: missing: the dataset was not written by `ansel "
        rf"preprocess`.*list them as they are: python -m ansel.data.manifest {preprocessed}$",
    ):
        Dataset.load(preprocessed)
    subprocess.run([sys.executable, "-m", "ansel.data.manifest", str(preprocessed)], check=True)
    assert len(Dataset.load(preprocessed).splits["test"]) > 0


def test_listing_a_folder_by_hand_has_help_refuses_no_folder_and_leaves_out_snakemakes_marker(preprocessed, tmp_path):
    """`python -m ansel.data.manifest --help` printed nothing and wrote ./--help/manifest.json ({}), as it
    did for a folder that is not there; on a dataset Snakemake made it listed the marker Snakemake adds
    to a directory output after the job, so its manifest differed from the one preprocessing wrote."""
    listing = [sys.executable, "-m", "ansel.data.manifest"]
    shown = subprocess.run([*listing, "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert shown.returncode == 0 and shown.stdout.startswith("usage: python -m ansel.data.manifest [-h] FOLDER")
    missing = tmp_path / "processed/nothere"
    refused = subprocess.run([*listing, str(missing)], cwd=tmp_path, capture_output=True, text=True)
    assert refused.returncode == 2 and refused.stderr.endswith(f"error: {missing}: no such folder\n")
    assert not (tmp_path / "--help").exists() and not missing.exists()

    written = (preprocessed / "manifest.json").read_bytes()
    (preprocessed / ".snakemake_timestamp").touch()  # as the preprocess rule's directory() output has it
    listed = subprocess.run([*listing, str(preprocessed)], capture_output=True, text=True, check=True)
    assert listed.stdout == f"{preprocessed / 'manifest.json'}: {len(json.loads(written))} file(s) listed\n"
    assert (preprocessed / "manifest.json").read_bytes() == written


@pytest.mark.parametrize(
    "edit, said",
    [
        ("unlist_train", r"does not list candidates-train\.parquet, which preprocessing writes"),
        ("unlist_and_truncate_questions", r"does not list questions\.parquet, which preprocessing writes"),
        (
            "empty",
            r"does not list questions\.parquet, answers\.parquet, candidates-dev\.parquet, .*candidates-train\.parquet, which preprocessing writes",
        ),
        ("entry_not_a_mapping", r"entry 'vocab\.json': not \{size, sha256\} but 5"),
    ],
)
def test_a_manifest_that_leaves_out_a_table_or_is_not_one_is_refused_naming_it(preprocessed, edit, said):
    """A table the manifest does not list would be read unchecked (a split's candidates not at all)."""
    manifest = preprocessed / "manifest.json"
    listed = json.loads(manifest.read_text())
    if edit == "unlist_train":
        del listed["candidates-train.parquet"]
    elif edit == "unlist_and_truncate_questions":
        del listed["questions.parquet"]
        questions = preprocessed / "questions.parquet"
        questions.write_bytes(questions.read_bytes()[:100])
    elif edit == "empty":
        listed = {}
    else:
        listed["vocab.json"] = 5
    manifest.write_text(json.dumps(listed))
    with pytest.raises(ManifestError, match=rf"^{manifest}: {said}.*; to preprocess it again, delete {preprocessed}"):
        Dataset.load(preprocessed)


def test_a_missing_processed_folder_stops_train_and_evaluate_naming_it(tmp_path):
    gone, run = tmp_path / "data/processed/synthetic_en", tmp_path / "run"
    spec = json.dumps({"dataset": "synthetic_en", "model": "random", "seed": 1})
    with pytest.raises(SystemExit, match=rf"ansel train: {gone}: no such folder: a processed dataset is what"):
        cli.main(["train", "--config", spec, "--processed", str(gone), "--run-dir", str(run)])
    assert not run.exists()
    run.mkdir()
    with pytest.raises(SystemExit, match=rf"ansel evaluate: {run / 'config.json'}: missing: no finished run there"):
        cli.main(["evaluate", "--processed", str(gone), "--run-dir", str(run)])
    (run / "config.json").write_text(json.dumps({"dataset": "synthetic_en"}))
    with pytest.raises(SystemExit, match=rf"ansel evaluate: {gone}: no such folder"):
        cli.main(["evaluate", "--processed", str(gone), "--run-dir", str(run)])
    assert sorted(p.name for p in run.iterdir()) == ["config.json"]


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda v: v.write_text(v.read_text()[:40]), r"not a vocabulary \(Unterminated string"),  # cut short
        (lambda v: v.write_text('{"<pad>": 0}'), r"not a vocabulary \(a JSON list of tokens\)"),
        (lambda v: v.write_text('["<unk>", "<pad>"]'), r"a vocabulary starts with <pad>, <unk>"),
        (lambda v: v.unlink(), "missing"),
    ],
    ids=["cut-short", "not-a-list", "misordered", "missing"],
)
def test_a_vocabulary_that_cannot_be_read_stops_train_naming_the_file(preprocessed, tmp_path, edit, said):
    """Read before the manifest's checksums are (the ids are encoded as the tables load): its own check
    names it in one line, as the manifest would, and nothing of the run is written."""
    from tests.tiny_run import tiny_qa_cnn, train_args

    vocab, run = preprocessed / "vocab.json", tmp_path / "run"
    edit(vocab)
    with pytest.raises(SystemExit, match=rf"^ansel train: {vocab}: {said}.*: delete it and rerun snakemake$"):
        cli.main(train_args(tiny_qa_cnn(), preprocessed, run))
    assert not run.exists()


def test_a_vectors_file_missing_or_not_an_array_stops_train_naming_it(preprocessed, tmp_path):
    from tests.tiny_run import tiny_qa_cnn, train_args

    config, run, vectors = {**tiny_qa_cnn(), "embeddings": "word2vec"}, tmp_path / "run", tmp_path / "word2vec-60.npy"
    with pytest.raises(SystemExit, match=rf"^ansel train: {vectors}: no such file; make it with its target"):
        cli.main(train_args(config, preprocessed, run, "--embeddings", str(vectors)))
    vectors.write_text("not an array")
    with pytest.raises(SystemExit, match=rf"^ansel train: {vectors}: not a .npy file \(no numpy header\)"):
        cli.main(train_args(config, preprocessed, run, "--embeddings", str(vectors)))
    assert not run.exists()


def test_vectors_of_another_vocabulary_or_width_stop_train_naming_the_file(preprocessed, tmp_path):
    """Vectors made for another dataset (other rows) or another width: one line naming the file, the
    run's vocabulary and the width it needs, before a step is taken (was a ValueError traceback)."""
    import numpy as np

    from ansel.data.vocab import Vocab
    from tests.tiny_run import tiny_qa_cnn, train_args

    config, run = {**tiny_qa_cnn(), "embeddings": "word2vec"}, tmp_path / "run"
    rows, dim = len(Vocab.load(preprocessed / "vocab.json")), config["hparams"]["embedding_dim"]
    for shape in [(rows + 1, dim), (rows, dim - 1), (rows * dim,)]:
        vectors = tmp_path / "other.npy"
        np.save(vectors, np.zeros(shape, dtype=np.float32))
        said = rf"vectors of shape \({', '.join(map(str, shape))},?\), but the run needs {rows} rows \(the words of "
        with pytest.raises(SystemExit, match=rf"^ansel train: --embeddings {vectors}: {said}.*of {dim} values"):
            cli.main(train_args(config, preprocessed, run, "--embeddings", str(vectors)))
    assert not run.exists()
    np.save(vectors, np.zeros((rows, dim), dtype=np.float32))
    cli.main(train_args(config, preprocessed, run, "--embeddings", str(vectors)))
    assert (run / "model.pt").exists()


def test_a_run_trained_on_another_datasets_folder_is_refused_naming_both(preprocessed, tmp_path):
    """In the pipeline's layout a run config of one dataset given another's folder trained on its
    tables and wrote a config.json naming the first (as `ansel evaluate` already refused)."""
    import shutil

    from tests.tiny_run import tiny_qa_cnn, train_args

    other, run = tmp_path / "data/processed/wikiqa", tmp_path / "run"
    shutil.copytree(preprocessed, other)
    with pytest.raises(
        SystemExit,
        match=rf"^ansel train: --config: a run of dataset 'synthetic_en', but {other} holds 'wikiqa': "
        rf"train it with {tmp_path / 'data/processed/synthetic_en'}$",
    ):
        cli.main(train_args(tiny_qa_cnn(), other, run))
    assert not run.exists()


def test_a_run_evaluated_on_its_dataset_preprocessed_again_since_is_refused(preprocessed, tmp_path):
    """By hand (the pipeline retrains a dataset's runs when it changes): a dataset written again since
    the run trained gives its weights other words and its saved dev scores other candidates, which
    were reused while their count matched; `ansel train` records what it trained on (dev_scores.pt)."""
    from ansel.data.canonical import Dataset
    from tests.tiny_run import tiny_qa_cnn, train_args

    run = tmp_path / "run"
    cli.main(train_args(tiny_qa_cnn(), preprocessed, run))
    evaluate = ["evaluate", "--processed", str(preprocessed), "--run-dir", str(run)]
    cli.main(evaluate)
    before = (run / "metrics.json").read_bytes()
    ds = Dataset.load(preprocessed)
    dev = ds.splits["dev"]
    Dataset(ds.name, ds.questions, ds.answers, {**ds.splits, "dev": dev.assign(label=1 - dev.label)}).save(preprocessed)
    with pytest.raises(
        SystemExit,
        match=rf"^ansel evaluate: {run}: trained on other data than {preprocessed} holds now: check --processed first "
        r"\(a run of dataset 'synthetic_en': give that dataset's folder\); if it is the run's own, .*: retrain",
    ):
        cli.main(evaluate)
    assert (run / "metrics.json").read_bytes() == before
