"""Names used in params.yaml and paper specs -> model builders with typed hyperparameters.

Each architecture registers a dataclass of its hyperparameters; an unknown or mistyped
key in a model's config stops the run with a message naming the key.
"""
from __future__ import annotations

import dataclasses
import typing
from typing import Any, Callable

import numpy as np

from ansel.models.base import Ranker

Builder = Callable[[Any, int, "np.ndarray | None"], Ranker]
_REGISTRY: dict[str, tuple[type, Builder]] = {}


class ModelConfigError(ValueError):
    pass


def register(name: str, hparams: type):
    """Decorator: ``@register("qa_lstm", QALSTMConfig)`` on ``build(cfg, vocab_size, embeddings)``."""

    def wrap(builder: Builder) -> Builder:
        if name in _REGISTRY:
            raise ValueError(f"model architecture {name!r} registered twice")
        _REGISTRY[name] = (hparams, builder)
        return builder

    return wrap


def registered() -> list[str]:
    return sorted(_REGISTRY)


def parse_hparams(arch: str, values: dict[str, Any], where: str = "model"):
    """Build the architecture's hyperparameter dataclass from a config dict, checking keys and types."""
    if arch not in _REGISTRY:
        raise ModelConfigError(f"{where}: unknown arch {arch!r}; known: {', '.join(registered())}")
    cls = _REGISTRY[arch][0]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    for key, value in values.items():
        if key not in fields:
            raise ModelConfigError(f"{where}.{key}: not a hyperparameter of {arch!r}; known: {', '.join(fields)}")
        if not _fits(value, hints[key]):
            raise ModelConfigError(f"{where}.{key}: {value!r} is not of type {hints[key]}")
    return cls(**values)


def build_model(arch: str, hparams: dict[str, Any], vocab_size: int,
                embeddings: np.ndarray | None = None, where: str = "model") -> Ranker:
    cfg = parse_hparams(arch, hparams, where)
    return _REGISTRY[arch][1](cfg, vocab_size, embeddings)


def _fits(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return any(_fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin in (list, tuple):
        return isinstance(value, (list, tuple))
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is typing.Any:
        return True
    return isinstance(value, origin or hint)
