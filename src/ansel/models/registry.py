"""Names used in params.yaml and paper specs -> typed hyperparameters and a model builder.

Every module of ``ansel.models.archs`` registers its architectures with ``@register(name, hparams)``
and is found by listing the package: a new architecture is a new module there. Those modules
import no torch (their builders import the building blocks when called), so configs are checked
while Snakemake builds the DAG without torch's seconds of start-up: an unknown, mistyped or
out-of-range key stops the run with a message that starts with the key's path
(``ansel.settings.parse``, ranges in ``ansel.models.hparams``).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from ansel.models import archs
from ansel.settings import ConfigError, parse

if TYPE_CHECKING:
    import numpy as np

    from ansel.data.vocab import Lexicon
    from ansel.models.base import Ranker

# build(cfg, vocab_size, embeddings), or build(cfg, vocab_size, embeddings, lexicon) for an
# architecture registered with ``lexicon=True`` (it reads the vocabulary's words or their IDF:
# DSSM's letter trigrams, aNMM's query gate)
Builder = Callable[..., "Ranker"]


class ModelConfigError(ConfigError):
    """A model's config the pipeline refuses; the message starts with the key path."""


class Arch(NamedTuple):
    hparams: type
    build: Builder
    lexicon: bool = False
    trained: bool = True  # False: no trainable parameters (random and lexical rankers): no epochs
    categories: bool = False  # True: also classifies a question's category (MTAS); built with their count


_ARCHS: dict[str, Arch] = {}


def register(name: str, hparams: type, lexicon: bool = False, trained: bool = True, categories: bool = False):
    """Decorator: ``@register("qa_lstm", QALSTMConfig)`` on ``build(cfg, vocab_size, embeddings)``;
    with ``lexicon=True`` on ``build(cfg, vocab_size, embeddings, lexicon)``; with
    ``categories=True`` on ``build(cfg, vocab_size, embeddings, n_categories)`` (a model with a
    ``classify(q) -> logits [B, n_categories]`` head besides its scores); ``trained=False`` for an
    architecture without trainable parameters (its runs log no epoch)."""
    if lexicon and categories:
        raise ValueError(f"model architecture {name!r}: a builder takes a lexicon or a category count, not both")

    def wrap(build: Builder) -> Builder:
        if name in _ARCHS:
            raise ValueError(f"model architecture {name!r} registered twice")
        _ARCHS[name] = Arch(hparams, build, lexicon, trained, categories)
        return build

    return wrap


@functools.cache
def _discovered() -> dict[str, Arch]:
    for module in pkgutil.iter_modules(archs.__path__):
        importlib.import_module(f"{archs.__name__}.{module.name}")
    return _ARCHS


def arch_module(arch: str) -> str:
    """The module that registers ``arch`` (its training code: ``ansel.code_digest``)."""
    _hparams_class(arch, "model")
    return _ARCHS[arch].build.__module__


def registered() -> list[str]:
    return sorted(_discovered())


def _hparams_class(arch: str, where: str) -> type:
    if arch not in _discovered():
        raise ModelConfigError(f"{where}: unknown arch {arch!r}; known: {', '.join(registered())}")
    return _ARCHS[arch].hparams


def is_trained(arch: str) -> bool:
    """Whether the architecture has trainable parameters (else its runs log no epoch)."""
    _hparams_class(arch, "model")
    return _ARCHS[arch].trained


def hparams_fields(arch: str, where: str = "model") -> set[str]:
    """The names of the architecture's hyperparameters."""
    return {f.name for f in dataclasses.fields(_hparams_class(arch, where))}


def parse_hparams(arch: str, values: dict[str, Any], where: str = "model"):
    """The architecture's hyperparameter dataclass from a config dict, checking keys, types and ranges."""
    return parse(_hparams_class(arch, where), values, where, ModelConfigError)


def needs_lexicon(arch: str) -> bool:
    """Whether the architecture is built with a lexicon (an unknown one: no; building it says so)."""
    return arch in _discovered() and _ARCHS[arch].lexicon


def classifies_categories(arch: str) -> bool:
    """Whether the architecture also classifies questions into categories (an unknown one: no)."""
    return arch in _discovered() and _ARCHS[arch].categories


def build_model(
    arch: str,
    hparams: dict[str, Any],
    vocab_size: int,
    embeddings: "np.ndarray | None" = None,
    where: str = "model",
    lexicon: "Lexicon | None" = None,
    n_categories: int | None = None,
) -> "Ranker":
    """The model; ``lexicon`` (the vocabulary's words and IDF) is required by the architectures
    registered with ``lexicon=True``, ``n_categories`` (how many question categories the training
    split has) by those registered with ``categories=True``; the others ignore both."""
    cfg = parse_hparams(arch, hparams, where)
    entry = _ARCHS[arch]
    if entry.categories:
        if not n_categories or n_categories < 2:
            raise ValueError(
                f"{where}: arch {arch!r} classifies question categories; the training split has "
                f"{n_categories or 0} (it needs >= 2: a dataset whose questions carry a category)"
            )
        return entry.build(cfg, vocab_size, embeddings, n_categories)
    if not entry.lexicon:
        return entry.build(cfg, vocab_size, embeddings)
    if lexicon is None:
        raise ValueError(f"{where}: arch {arch!r} reads the vocabulary's words; build it with a lexicon")
    if len(lexicon.tokens) != vocab_size:
        raise ValueError(f"{where}: the lexicon has {len(lexicon.tokens)} words, the vocabulary {vocab_size}")
    return entry.build(cfg, vocab_size, embeddings, lexicon)
