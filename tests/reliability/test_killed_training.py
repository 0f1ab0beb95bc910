"""A training or evaluation killed (SIGKILL, SIGTERM: no cleanup runs) at any moment loses nothing
computed and leaves nothing in the run's folder: state.pt goes only once every file of the finished run
(dev_scores.pt included) is written, and the temporaries of a write cut short are removed by the rerun."""

import pytest

import ansel.training.command as command
from ansel import cli
from ansel.training.seed_stack import StackError
from tests.tiny_run import tiny_qa_cnn, train_args


class Killed(BaseException):
    """What kill -9 leaves: no handler runs after it."""


def _train(processed, run_dir, *extra):
    cli.main(train_args(tiny_qa_cnn(), processed, run_dir, "--no-dvclive", *extra))


def test_a_kill_before_dev_scores_pt_is_written_resumes_from_the_last_epoch(processed, tmp_path, monkeypatch, capsys):
    real = command.save_dev_scores

    def killed(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(command, "save_dev_scores", killed)
    with pytest.raises(Killed):
        _train(processed, tmp_path)
    assert (tmp_path / "state.pt").exists(), "the finished epochs' state went before dev_scores.pt was written"
    monkeypatch.setattr(command, "save_dev_scores", real)
    _train(processed, tmp_path)
    assert "resuming from epoch 2 of 2" in capsys.readouterr().out
    assert (tmp_path / "dev_scores.pt").exists() and not (tmp_path / "state.pt").exists()


def test_seeds_trained_one_after_another_keep_each_finished_run_whole(processed, tmp_path, monkeypatch):
    """A kill in seed 2's training leaves seed 1 with every file its training writes."""

    def unstackable(*args, **kwargs):
        raise StackError("not stackable here")

    started = []
    real = command.train_run

    def killed_at_seed_2(cfg, *args, **kwargs):
        started.append(cfg["seed"])
        if cfg["seed"] == 2:
            raise Killed
        return real(cfg, *args, **kwargs)

    monkeypatch.setattr(command, "train_seeds", unstackable)
    monkeypatch.setattr(command, "train_run", killed_at_seed_2)
    with pytest.raises(Killed):
        _train(processed, tmp_path / "seed{seed}", "--seeds", "1,2")
    assert started == [1, 2]
    left = sorted(p.name for p in (tmp_path / "seed1").iterdir())
    assert left == ["config.json", "dev_scores.pt", "log.csv", "model.pt"]


def test_the_temporaries_of_killed_writes_are_removed_by_the_rerun(processed, tmp_path):
    run, timings = tmp_path / "run", tmp_path / "timings" / "seed1.json"
    run.mkdir()
    timings.parent.mkdir()
    left = [run / f".{name}.0123456789ab.part" for name in ("state.pt", "model.pt", "log.csv", "dev_scores.pt")]
    left.append(timings.parent / ".seed1.json.0123456789ab.part")
    for path in left:
        path.write_bytes(b"half a file")
    _train(processed, run, "--timings", str(timings))
    assert [p for p in left if p.exists()] == []

    evaluations = [run / f".{name}.0123456789ab.part" for name in ("metrics.json", "run.trec")]
    of_evaluate_last = run / ".metrics_last.json.0123456789ab.part"  # its job may be writing it now
    for path in [*evaluations, of_evaluate_last]:
        path.write_bytes(b"half a file")
    cli.main(["evaluate", "--processed", str(processed), "--run-dir", str(run)])
    assert [p for p in evaluations if p.exists()] == [] and of_evaluate_last.exists()
