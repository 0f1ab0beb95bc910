"""Names used in params.yaml and paper specs -> model builders with typed hyperparameters.

Each architecture's hyperparameters are a dataclass in ``ansel.models.hparams`` (torch-free, so
configs are checked without importing torch); an unknown or mistyped key in a model's config
stops the run with a message naming the key. Model modules register a builder per architecture.
"""
from __future__ import annotations

import dataclasses
import importlib
import types
import typing
from typing import TYPE_CHECKING, Any, Callable

from ansel.models.hparams import ARCHS

if TYPE_CHECKING:
    import numpy as np

    from ansel.models.base import Ranker

Builder = Callable[[Any, int, "np.ndarray | None"], "Ranker"]
# The modules whose import registers the builders (build_model imports them on first use).
MODEL_MODULES = ("apnet", "compositions", "ctrn", "ggsa", "qa_baselines", "random_baseline")
_BUILDERS: dict[str, Builder] = {}


class ModelConfigError(ValueError):
    pass


def register(name: str):
    """Decorator: ``@register("qa_lstm")`` on ``build(cfg, vocab_size, embeddings)``."""

    def wrap(builder: Builder) -> Builder:
        if name not in ARCHS:
            raise ValueError(f"model architecture {name!r} has no hyperparameters in ansel.models.hparams.ARCHS")
        if name in _BUILDERS:
            raise ValueError(f"model architecture {name!r} registered twice")
        _BUILDERS[name] = builder
        return builder

    return wrap


def registered() -> list[str]:
    return sorted(ARCHS)


def builders() -> dict[str, Builder]:
    """Every architecture's builder (imports the model modules, and with them torch)."""
    for module in MODEL_MODULES:
        importlib.import_module(f"ansel.models.{module}")
    return dict(_BUILDERS)


def parse_hparams(arch: str, values: dict[str, Any], where: str = "model"):
    """Build the architecture's hyperparameter dataclass from a config dict, checking keys and types."""
    if arch not in ARCHS:
        raise ModelConfigError(f"{where}: unknown arch {arch!r}; known: {', '.join(registered())}")
    cls = ARCHS[arch]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    for key, value in values.items():
        if key not in fields:
            raise ModelConfigError(f"{where}.{key}: not a hyperparameter of {arch!r}; known: {', '.join(fields)}")
        if not _fits(value, hints[key]):
            raise ModelConfigError(f"{where}.{key}: {value!r} is not of type {hints[key]}")
    return cls(**values)


def build_model(arch: str, hparams: dict[str, Any], vocab_size: int,
                embeddings: "np.ndarray | None" = None, where: str = "model") -> "Ranker":
    cfg = parse_hparams(arch, hparams, where)
    return builders()[arch](cfg, vocab_size, embeddings)


def _fits(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
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
