"""Ctrl-C held over the steps torch must not be cut in (``ansel.interrupts.held``): the block ends, then
the interrupt is raised; a checkpoint being saved is saved whole."""

import os
import signal

import pytest
import torch

from ansel import interrupts
from ansel.models.io import save_torch


@pytest.fixture(autouse=True)
def ctrl_c_raises():
    """Python's own SIGINT handler, as in a command started from a terminal (a test run started in the
    background, `cmd &`, inherits SIGINT ignored; an xdist worker may hold another handler)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_inside_the_block_is_raised_as_it_ends():
    ran = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.held():
            os.kill(os.getpid(), signal.SIGINT)
            ran.append("the rest of the block")
    assert ran == ["the rest of the block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_block_without_ctrl_c_raises_nothing_and_an_ignored_sigint_stays_ignored():
    with interrupts.held():
        pass
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts.held():
            os.kill(os.getpid(), signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_during_a_checkpoints_save_leaves_it_whole_then_interrupts(tmp_path, monkeypatch):
    """Before, torch's zip writer failed as it closed: a RuntimeError in place of the interrupt."""
    real_save = torch.save

    def interrupted_save(obj, f):
        os.kill(os.getpid(), signal.SIGINT)  # mid-save, as a Ctrl-C lands
        real_save(obj, f)

    monkeypatch.setattr(torch, "save", interrupted_save)
    with pytest.raises(KeyboardInterrupt):
        save_torch({"w": torch.arange(4.0)}, tmp_path / "state.pt")
    assert torch.load(tmp_path / "state.pt", weights_only=True)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert [p.name for p in tmp_path.iterdir()] == ["state.pt"]
