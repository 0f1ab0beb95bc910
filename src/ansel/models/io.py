"""A run's model from its config and saved weights; saving weights atomically."""
from __future__ import annotations

import os
from pathlib import Path

import torch

from ansel.models.base import Ranker
from ansel.models.registry import build_model

__all__ = ["build_model", "load_model", "save_weights"]


def load_model(cfg: dict, vocab_size: int, weights: Path, device="cpu") -> Ranker:
    """The run's model (``cfg``: a run config with ``model``, ``arch``, ``hparams``) with the
    weights saved at ``weights``, on ``device``, in eval mode."""
    model = build_model(cfg["arch"], cfg["hparams"], vocab_size, None, f"models.{cfg['model']}")
    try:
        model.load_state_dict(torch.load(weights, map_location=device, weights_only=True))
    except RuntimeError as e:  # names or shapes of other model code (or another config): say which file
        raise RuntimeError(f"{weights}: these weights do not fit {cfg['arch']!r} with {cfg['hparams']} as the "
                           f"models are built now; retrain the run (delete its directory). {e}") from None
    return model.to(device).eval()


def save_weights(state_dict: dict, path: Path | str) -> None:
    """Write ``state_dict`` to ``path`` through ``path.tmp``: a killed job never leaves half a file."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state_dict, tmp)
    os.replace(tmp, path)
