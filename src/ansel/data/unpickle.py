"""Load pickles from the internet without executing them.

A pickle can name any importable callable and call it while loading; ``pickle.load`` therefore
runs code chosen by whoever wrote the file. ``load_plain`` admits only what pickle builds from
its own opcodes — dict, list, tuple, set, frozenset, str, bytes, int, float, bool, None — and
refuses every global reference (any class or function), before anything is called.
Python 2 pickles (Tay et al.'s env.pkl) store text as byte strings: those are decoded as UTF-8.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

from ansel.settings import InputError


class PickleFileError(pickle.UnpicklingError, InputError):
    """A pickle that cannot be read as plain data: ``ansel`` says so in one line naming the file."""


class UnsafePickleError(PickleFileError):
    """The pickle references a global (class/function) or is not a plain-data pickle."""


class _PlainUnpickler(pickle.Unpickler):
    def __init__(self, file: io.BufferedIOBase, label: str):
        super().__init__(file, encoding="bytes")
        self.label = label

    def find_class(self, module: str, name: str) -> Any:
        raise UnsafePickleError(
            f"{self.label}: refuses global {module}.{name}: only plain containers, strings and numbers are "
            "admitted (this pickle would import and may call code)"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickleError(f"{self.label}: refuses persistent id {pid!r}")


def load_plain(path: str | Path, text_encoding: str = "utf-8") -> Any:
    """Unpickle ``path`` admitting plain data only; byte strings are decoded with ``text_encoding``."""
    label = str(path)
    with open(path, "rb") as f:
        try:
            obj = _PlainUnpickler(f, label).load()
        except UnsafePickleError:
            raise
        except Exception as e:  # truncated or corrupt: pickle raises several unrelated types
            raise PickleFileError(f"{label}: not a readable pickle: {type(e).__name__}: {e}") from e
    return _decode(obj, label, text_encoding)


def _decode(obj: Any, label: str, encoding: str) -> Any:
    if isinstance(obj, bytes):
        try:
            return obj.decode(encoding)
        except UnicodeDecodeError as e:
            raise PickleFileError(f"{label}: byte string {obj[:40]!r}... is not {encoding}: {e}") from e
    if isinstance(obj, dict):
        return {_decode(k, label, encoding): _decode(v, label, encoding) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return type(obj)(_decode(v, label, encoding) for v in obj)
    return obj
