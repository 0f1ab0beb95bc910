"""Dataset sources by name: how to fetch raw files and read them into canonical tables.

A source is a class with ``fetch(raw_dir, mirror, options)`` (write verified raw files into
raw_dir) and ``read(raw_dir, options) -> Dataset`` (canonical tables with tokens).
Readers register themselves with ``@source("name")``; ``ansel.data.readers`` imports them all.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from ansel.data.canonical import Dataset


class Source(Protocol):
    def fetch(self, raw_dir: Path, mirror: Path | None, options: dict[str, Any]) -> None: ...

    def read(self, raw_dir: Path, options: dict[str, Any]) -> Dataset: ...


_SOURCES: dict[str, type] = {}


def source(name: str):
    def wrap(cls: type) -> type:
        if name in _SOURCES:
            raise ValueError(f"dataset source {name!r} registered twice")
        _SOURCES[name] = cls
        return cls

    return wrap


def get_source(name: str) -> Source:
    import ansel.data.readers  # noqa: F401  (registers every reader)

    if name not in _SOURCES:
        raise KeyError(f"unknown dataset source {name!r}; known: {', '.join(sorted(_SOURCES))}")
    return _SOURCES[name]()
