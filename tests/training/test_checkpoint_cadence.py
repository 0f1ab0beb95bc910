"""``ansel train --checkpoint-minutes``: state.pt saved after an epoch only once that long has passed
since the last save (never after the last epoch), and a run cut after an unsaved epoch resumes from
the saved one to the same bytes as an uncut run."""

import itertools

import pytest

import ansel.training.trainer as train_mod
from ansel.config import ConfigError, load, run_config
from ansel.data.batches import RunData
from ansel.data.vocab import Vocab
from ansel.evaluation.config import EvalConfig
from ansel.evaluation.evaluate import dev_evaluator
from tests.training.corpus import processed_synthetic
from tests.training.interrupt import interrupt_after_epoch


@pytest.fixture(scope="module")
def processed(tmp_path_factory):
    return processed_synthetic(
        tmp_path_factory.mktemp("raw"), tmp_path_factory.mktemp("processed"), {"train": 40, "dev": 16, "test": 16}
    )


def _train(processed, run_dir, minutes):
    c = run_config(load(), "synthetic_en", "qa_cnn", 1)
    c["embeddings"] = None
    c["hparams"].update(embedding_dim=12, filters=16)
    c["train"].update(epochs=4, batch_size=8, max_batches=2)
    data = RunData.load(processed, Vocab.load(processed / "vocab.json"), c["max_len_q"], c["max_len_a"])
    train_mod.train_run(
        c,
        data,
        None,
        run_dir,
        dev_evaluator(data, "dev", EvalConfig(["dev"])),
        progress=False,
        dvclive=False,
        checkpoint_minutes=minutes,
    )


def _saved_epochs(monkeypatch):
    saved, real = [], train_mod.save_torch_together

    def save(saves):
        saved.extend(obj["epoch"] for obj, path in saves if path.name == "state.pt")
        real(saves)

    monkeypatch.setattr(train_mod, "save_torch_together", save)
    return saved


def test_states_are_saved_at_the_cadence_and_a_cut_run_resumes_exactly(processed, tmp_path, monkeypatch):
    with monkeypatch.context() as m:
        saved = _saved_epochs(m)
        _train(processed, tmp_path / "every", None)
    assert saved == [1, 2, 3, 4]  # the default: after every epoch
    with monkeypatch.context() as m:
        saved = _saved_epochs(m)
        clock = itertools.count(0, 60)  # a minute passes between two readings of the clock
        m.setattr(train_mod, "_now", lambda: next(clock))
        _train(processed, tmp_path / "timed", 1.5)
    # read at the start (0), epoch 1 (60 s: not yet), epoch 2 (120 s: saved, read 180), epoch 3 (240: 60 s
    # after), epoch 4 (the last: its outputs follow)
    assert saved == [2]
    for f in ("model.pt", "log.csv"):
        assert (tmp_path / "timed" / f).read_bytes() == (tmp_path / "every" / f).read_bytes()

    with monkeypatch.context() as m:
        saved = _saved_epochs(m)
        interrupt_after_epoch(m, 3)
        clock = itertools.count(0, 60)
        m.setattr(train_mod, "_now", lambda: next(clock))
        with pytest.raises(KeyboardInterrupt):
            _train(processed, tmp_path / "cut", 1.5)
    assert saved == [2]  # epoch 3 trained, not saved: the restart trains it again
    _train(processed, tmp_path / "cut", 1.5)
    for f in ("model.pt", "log.csv"):
        assert (tmp_path / "cut" / f).read_bytes() == (tmp_path / "every" / f).read_bytes()


def test_a_cadence_that_is_not_positive_is_refused(processed, tmp_path):
    from ansel.training.command import train_command

    with pytest.raises(ConfigError, match=r"--checkpoint-minutes: 0 is not > 0"):
        train_command(
            {"dataset": "synthetic_en", "model": "qa_cnn", "seed": 1}, processed, tmp_path, None, checkpoint_minutes=0
        )
    assert list(tmp_path.iterdir()) == []
