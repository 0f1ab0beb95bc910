"""Issue 54 item 3: an infinite or NaN number is refused before anything runs, naming its key; a
training whose loss stops being finite ends with a clear error and leaves nothing of the run."""

import json

import pytest

from ansel import cli
from ansel.config import ConfigError, load, validate
from ansel.yamlfile import read_yaml
from tests.tiny_run import tiny_qa_cnn, train_args


def test_an_infinite_or_nan_setting_is_refused_naming_its_key(tmp_path):
    override = tmp_path / "over.yaml"
    override.write_text("train: {lr: .inf}\nmodels: {qa_cnn: {train: {margin: .nan}}}\n")
    given = read_yaml(override)
    with pytest.raises(ConfigError, match=r"^train\.lr: inf is not a finite number$"):
        validate(load(train=given["train"]))  # `lr > 0` holds for infinity
    with pytest.raises(ConfigError, match=r"^models\.qa_cnn\.train\.margin: nan is not a finite number$"):
        validate(load(models=given["models"]))
    with pytest.raises(ConfigError, match=r"^papers\.ggsa\.sweeps\.figure8_heads\[1\]: -inf is not a finite"):
        validate(load(papers={"ggsa": {"sweeps": {"figure8_heads": [3, float("-inf")]}}}))
    validate(load())  # the papers' settings have none


def test_a_diverging_training_stops_with_its_epoch_and_leaves_no_results(processed, tmp_path):
    run = tmp_path / "run"
    # Finite settings whose loss is not: a margin near float32's largest number overflows the batch's
    # loss on any CPU (lr=1e30 blew one CPU's weights up to NaN, and only saturated another's tanh)
    c = tiny_qa_cnn(optimizer="sgd", lr=0.1, margin=3e38)
    with pytest.raises(
        SystemExit,
        match=r"ansel train: .*run: models\.qa_cnn seed 1: the training loss of epoch 1 "
        r"is (nan|inf).*the run diverged; lower train\.lr",
    ):
        cli.main(train_args(c, processed, run, "--timings", str(tmp_path / "timings.json")))
    assert sorted(p.name for p in run.iterdir()) == [], "nothing of the diverged run is left"
    assert not (tmp_path / "timings.json").exists()
    c["train"]["lr"] = float("inf")  # a hand-written config is refused before any data is read
    with pytest.raises(SystemExit, match=r"ansel train: --config: train\.lr: inf is not a finite number"):
        cli.main(["train", "--config", json.dumps(c), "--processed", str(processed), "--run-dir", str(run)])


def test_vectors_holding_nan_are_refused_naming_the_row_and_a_finished_run_there_is_kept(processed, tmp_path):
    """Was reported after training as a diverged run (lower train.lr), which removed the run in --run-dir."""
    import numpy as np

    from ansel.data.vocab import Vocab

    config, run, vectors = {**tiny_qa_cnn(), "embeddings": "word2vec"}, tmp_path / "run", tmp_path / "vectors.npy"
    m = np.zeros((len(Vocab.load(processed / "vocab.json")), config["hparams"]["embedding_dim"]), np.float32)
    m[4, 2] = np.nan
    np.save(vectors, m)
    run.mkdir()
    (run / "model.pt").write_bytes(b"a finished run's")
    with pytest.raises(SystemExit, match=rf"^ansel train: {vectors}: row 4 holds nan, not a finite number"):
        cli.main(train_args(config, processed, run, "--embeddings", str(vectors)))
    assert [p.name for p in run.iterdir()] == ["model.pt"]
