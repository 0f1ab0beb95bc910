"""Typed settings: a config block (a dict from params.yaml) parsed into a dataclass.

Keys and types are checked here; ranges and cross-field rules by the dataclass itself
(``__post_init__`` raises ``SettingError``). Every error names the key path, e.g.
``models.qa_cnn.train.negatives.n: 0 is not >= 1``. Torch-free: the Snakefile parses every
setting while it builds the DAG, so a bad value stops ``snakemake -n`` before anything runs.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import TYPE_CHECKING, Any, TypeVar

from ansel.typos import typo_of

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


class InputError(Exception):
    """A setting or a file the pipeline refuses or cannot obtain: the message names it and the fix,
    and ``ansel`` prints that one line (no traceback)."""


class ConfigError(ValueError, InputError):
    """A configuration the pipeline refuses; the message starts with the key path."""


class SettingError(ValueError):
    """Raised by a settings dataclass for one of its keys; ``parse`` prefixes the block's path."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key, self.message = key, message


def parse(cls: type[T], values: Any, where: str, error: type[ConfigError] = ConfigError) -> T:
    """``cls(**values)`` with unknown keys, wrong types and out-of-range values refused by name;
    a field typed as another dataclass is parsed the same way (``negatives`` of ``train``)."""
    if not isinstance(values, dict):
        raise error(f"{where}: expected a mapping, got {values!r}")
    fields, hints = _fields(cls), _hints(cls)
    kwargs = {}
    for key, value in values.items():
        if key not in fields:
            raise error(f"{where}.{key}: unknown key{typo_of(key, fields)}; known: {', '.join(sorted(fields))}")
        hint = hints[key]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            value = parse(hint, value, f"{where}.{key}", error)
        elif not fits(value, hint):
            names = typing.get_args(hint) if typing.get_origin(hint) is typing.Literal else ()
            raise error(f"{where}.{key}: {value!r} is not of type {type_name(hint)}{typo_of(value, names)}")
        kwargs[key] = value
    missing = [
        f.name
        for f in dataclasses.fields(cls)
        if f.name not in kwargs and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise error(f"{where}: missing {', '.join(missing)}")
    try:
        return cls(**kwargs)
    except SettingError as e:
        raise error(f"{where}.{e.key}: {e.message}") from None


@functools.cache
def _fields(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls))


# typing.get_type_hints compiles every string annotation again at each call: a DAG parses
# thousands of blocks of a handful of classes.
@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def check(condition: bool, key: str, message: str) -> None:
    """For ``__post_init__``: refuse ``key`` with ``message`` unless ``condition``."""
    if not condition:
        raise SettingError(key, message)


def fits(value: Any, hint: Any) -> bool:
    """Whether a YAML/JSON value fits a type hint (an int is a float; a bool is no number)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin in (list, tuple):
        args = typing.get_args(hint)
        return isinstance(value, (list, tuple)) and (not args or all(fits(v, args[0]) for v in value))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is typing.Any:
        return True
    return isinstance(value, origin or hint)


def type_name(hint: Any) -> str:
    if typing.get_origin(hint) is typing.Literal:
        return " | ".join(repr(v) for v in typing.get_args(hint))
    return getattr(hint, "__name__", str(hint))
