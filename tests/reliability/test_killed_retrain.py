"""Issue 33 item 6: a retrain with other settings, killed once its state.pt exists, leaves none of
the earlier model's results as the run's: the run's own target (metrics.json) is missing, so
Snakemake plans it again, and the next start resumes the new settings' training."""

import json

import pytest

from ansel import cli
from ansel.training.epoch import EpochTrainer
from tests.tiny_run import tiny_qa_cnn, train_args


class Killed(BaseException):
    """What kill -9 leaves: no handler runs after it."""


def _train(processed, run_dir, lr):
    cli.main(train_args(tiny_qa_cnn(lr=lr), processed, run_dir, "--no-dvclive"))


def test_a_killed_retrain_leaves_no_result_of_the_earlier_model(processed, tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    _train(processed, run_dir, lr=0.01)
    cli.main(["evaluate", "--processed", str(processed), "--run-dir", str(run_dir)])
    assert (run_dir / "metrics.json").exists() and (run_dir / "run.trec").exists()

    real_run = EpochTrainer.run

    def killed_after_the_first_epoch(self, epoch):
        if epoch == 2:
            raise Killed
        return real_run(self, epoch)

    monkeypatch.setattr(EpochTrainer, "run", killed_after_the_first_epoch)
    with pytest.raises(Killed):
        _train(processed, run_dir, lr=0.02)
    left = sorted(p.name for p in run_dir.iterdir())
    assert left == ["state.pt"], f"the earlier model's results survived the killed retrain: {left}"

    monkeypatch.setattr(EpochTrainer, "run", real_run)
    _train(processed, run_dir, lr=0.02)  # resumes epoch 2 of the new settings
    assert json.loads((run_dir / "config.json").read_text())["train"]["lr"] == 0.02
    assert not (run_dir / "state.pt").exists() and (run_dir / "model.pt").exists()
