"""A training cut at an epoch's end, as a kill between two epochs would cut it (the resume tests)."""

import ansel.training.trainer as train_mod


def interrupt_after_epoch(m, epoch: int) -> None:
    """Patch (through the monkeypatch context ``m``) every run to raise KeyboardInterrupt once epoch
    ``epoch`` is done, its state saved or not as the run's checkpoint cadence decides."""
    real = train_mod._Run.epoch_done

    def cut(run, at, *args):
        real(run, at, *args)
        if at == epoch:
            raise KeyboardInterrupt

    m.setattr(train_mod._Run, "epoch_done", cut)
