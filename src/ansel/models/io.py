"""A run's model from its config and saved weights; saving torch objects atomically (``ansel.files``)."""

from __future__ import annotations

import functools
from pathlib import Path

import torch

from ansel import interrupts
from ansel.files import save_atomic_together
from ansel.models.base import Ranker
from ansel.models.registry import build_model
from ansel.settings import InputError

__all__ = [
    "CorruptCheckpointError",
    "WeightsMismatchError",
    "build_model",
    "load_checkpoint",
    "load_model",
    "save_torch",
    "save_torch_together",
]


class CorruptCheckpointError(RuntimeError, InputError):
    """A saved checkpoint cannot be read as weights; the message names it and how to start again."""


class WeightsMismatchError(RuntimeError, InputError):
    """Saved weights that do not fit the model a run's config builds now: other model code, or a
    dataset preprocessed again since (another vocabulary); the message names the file."""


def load_checkpoint(path: Path, device, restart: str):
    """``torch.load(path, weights_only=True)``: a file cut short or not a checkpoint at all is a
    CorruptCheckpointError naming it and ``restart`` (what to do), never torch's advice to load
    with ``weights_only=False``, which would run whatever code the file holds."""
    try:
        return torch.load(path, map_location=device, weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as e:  # truncated zip, random bytes, a pickle of anything but tensors and plain data
        raise CorruptCheckpointError(
            f"{path}: corrupt or not a checkpoint ({type(e).__name__}: it cannot be read as weights; "
            f"nothing in it was run); {restart}"
        ) from None


def load_model(
    cfg: dict, vocab_size: int, weights: Path, device="cpu", lexicon=None, n_categories: int | None = None
) -> Ranker:
    """The run's model (``cfg``: a run config with ``model``, ``arch``, ``hparams``) with the
    weights saved at ``weights``, on ``device``, in eval mode (``lexicon``, ``n_categories``:
    ``registry.build_model``)."""
    model = build_model(cfg["arch"], cfg["hparams"], vocab_size, None, f"models.{cfg['model']}", lexicon, n_categories)
    state = load_checkpoint(weights, device, f"retrain the run: delete {Path(weights).parent} and rerun its target")
    try:
        model.load_state_dict(state)
    except RuntimeError as e:  # names or shapes of other model code, config or vocabulary: say which file
        raise WeightsMismatchError(
            f"{weights}: these weights do not fit {cfg['arch']!r} with {cfg['hparams']} and a vocabulary of "
            f"{vocab_size} words as built now (the model code changed, or the dataset was preprocessed again "
            f"since the run trained); retrain the run (delete its directory). {' '.join(str(e).split())}"
        ) from None
    return model.to(device).eval()


def save_torch(obj, path: Path | str) -> None:
    """``torch.save`` atomically. Through a Python file: torch.save to a path reports a full disk
    or a refused open as a RuntimeError naming neither the file nor the errno."""
    save_torch_together([(obj, Path(path))])


def save_torch_together(saves: list[tuple[object, Path]]) -> None:
    """``save_torch`` of several (object, path) as one (``files.save_atomic_together``)."""

    def write(obj, tmp: Path) -> None:
        with open(tmp, "wb") as f:
            torch.save(obj, f)

    with interrupts.held():  # a Ctrl-C inside torch.save ends in its zip writer's RuntimeError, not the interrupt
        save_atomic_together([(path, functools.partial(write, obj)) for obj, path in saves])
