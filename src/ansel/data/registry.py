"""Dataset sources by name: how to fetch raw files and read them into canonical tables.

A source is a class with ``fetch(raw_dir, mirror, options)`` (write verified raw files into
raw_dir), ``check(options, fetch)`` (a KeyError naming an unknown read option, a ``preprocess.ReadOptionError`` a
value it cannot apply, before anything runs), ``splits(options, fetch)`` (the split names a read
will produce, where the options tell them), ``fractions`` (the read option of a reader that splits at
random, or "") and
``read(raw_dir, options) -> Dataset`` (canonical tables with tokens).
Readers register themselves with ``@source("name")``, which gives the class its ``name``
(``readers.common.Reader``: the fetch of the files sources.yaml lists under it, the check of its
read options, the read of its ``pairs`` into canonical tables); every module of ``ansel.data.readers`` is discovered and imported on first use, so
a new reader is its module and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any, Protocol

from ansel.data.canonical import Dataset


class Source(Protocol):
    fractions: str  # the read option by which it splits at random ({split: fraction}), or ""
    categories: bool  # whether its questions carry a category

    def fetch(self, raw_dir: Path, mirror: Path | None, options: dict[str, Any]) -> None: ...

    def check(self, options: dict[str, Any], fetch: dict[str, Any] | None = None) -> None: ...

    def splits(self, options: dict[str, Any], fetch: dict[str, Any] | None) -> tuple[str, ...]: ...

    def read(self, raw_dir: Path, options: dict[str, Any]) -> Dataset: ...


_SOURCES: dict[str, type] = {}


def source(name: str):
    def wrap(cls: type) -> type:
        if name in _SOURCES:
            raise ValueError(f"dataset source {name!r} registered twice")
        cls.name = name  # type: ignore[attr-defined]  # the reader knows the name it fetches and reads under
        _SOURCES[name] = cls
        return cls

    return wrap


def get_source(name: str) -> Source:
    readers = importlib.import_module("ansel.data.readers")
    for module in pkgutil.iter_modules(readers.__path__):  # registers every reader
        importlib.import_module(f"{readers.__name__}.{module.name}")
    if name not in _SOURCES:
        raise KeyError(f"unknown dataset source {name!r}; known: {', '.join(sorted(_SOURCES))}")
    return _SOURCES[name]()
