"""A checkpoint cut short or not a checkpoint at all (state.pt, model.pt): refused naming the file,
saying it is corrupt and how to start again, never advising weights_only=False."""

import argparse

import pytest
import torch

from ansel.models.io import CorruptCheckpointError, load_model
from ansel.training.trainer import _resume

CFG = {"model": "m", "arch": "qa_cnn", "hparams": {"embedding_dim": 8, "filters": 4, "kernel": 2}}


def model():
    from ansel.models import build_model

    return build_model(CFG["arch"], CFG["hparams"], 20)


@pytest.fixture(params=["truncated", "random bytes", "not weights"])
def bad(request, tmp_path):
    """A saved file made unreadable three ways."""
    path = tmp_path / "run" / "state.pt"
    path.parent.mkdir()
    torch.save({"model": model().state_dict()}, path)
    if request.param == "truncated":
        path.write_bytes(path.read_bytes()[:200])
    elif request.param == "random bytes":
        path.write_bytes(bytes(range(256)) * 8)
    else:  # a pickle of an object (what an untrusted file would carry): weights_only refuses it
        torch.save({"model": argparse.Namespace(code="anything")}, path)
    return path


def test_a_corrupt_state_pt_names_the_file_and_the_restart(bad):
    with pytest.raises(CorruptCheckpointError) as e:
        _resume(bad, "key", model(), "cpu", 3, {})
    message = str(e.value)
    assert message.startswith(f"{bad}: corrupt or not a checkpoint") and "delete it to train the run again" in message
    assert "weights_only=False" not in message


def test_a_corrupt_model_pt_names_the_file_and_the_retrain(bad):
    weights = bad.rename(bad.with_name("model.pt"))
    with pytest.raises(CorruptCheckpointError) as e:
        load_model(CFG, 20, weights)
    message = str(e.value)
    assert message.startswith(f"{weights}: corrupt") and f"delete {weights.parent} and rerun its target" in message
    assert "weights_only=False" not in message


def test_ansel_evaluate_says_a_corrupt_model_pt_in_one_line(processed, finished_run, tmp_path):
    from ansel import cli

    run = tmp_path / "seed1"
    run.mkdir()
    (run / "config.json").write_bytes(finished_run["config.json"])
    (run / "model.pt").write_bytes(bytes(range(256)) * 8)
    with pytest.raises(SystemExit) as refused:
        cli.main(["evaluate", "--processed", str(processed), "--run-dir", str(run)])
    said = str(refused.value)
    assert said.startswith(f"ansel evaluate: {run / 'model.pt'}: corrupt or not a checkpoint") and "\n" not in said


def test_a_corrupt_dev_scores_pt_says_the_run_is_trained_again(bad, processed, finished_run):
    """dev_scores.pt is an output of the train rule: deleted, the run's target plans `train` again (a
    dry run of it said so), where the message had said its dev scores would be scored again."""
    from ansel import cli

    run, scores = bad.parent, bad.rename(bad.with_name("dev_scores.pt"))
    (run / "config.json").write_bytes(finished_run["config.json"])
    (run / "model.pt").write_bytes(b"weights")  # never read: the saved dev scores are read first
    with pytest.raises(SystemExit) as refused:
        cli.main(["evaluate", "--processed", str(processed), "--run-dir", str(run)])
    said = str(refused.value)
    assert said.startswith(f"ansel evaluate: {scores}: corrupt or not a checkpoint") and said.endswith(
        f"; delete it and rerun the run's target (snakemake {run / 'metrics.json'}): the run is trained again"
    )


@pytest.mark.parametrize(
    "config, said",
    [
        (b'{"dataset": ', r"not valid JSON \(Expecting value.*: restore or delete it"),  # cut short
        (b"[1, 2]", r"expected a JSON object, got list"),
        (b'{"dataset": "synthetic_en"}', r"not a run's config \(missing model, seed, arch, .*; retrain the run"),
    ],
    ids=["cut-short", "not-an-object", "partial"],
)
def test_ansel_evaluate_says_a_broken_config_json_in_one_line(processed, tmp_path, config, said):
    from ansel import cli

    run = tmp_path / "seed1"
    run.mkdir()
    (run / "config.json").write_bytes(config)
    (run / "model.pt").write_bytes(b"weights")  # never read: the config is refused first
    with pytest.raises(SystemExit, match=rf"^ansel evaluate: {run / 'config.json'}: {said}"):
        cli.main(["evaluate", "--processed", str(processed), "--run-dir", str(run)])
    assert sorted(p.name for p in run.iterdir()) == ["config.json", "model.pt"]
