"""The known name a misspelt one most likely meant, for messages that name both: one place for every
check of keys and values (schema, typed settings, read options, published labels)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def nearest(name: Any, known: Iterable[Any]) -> str | None:
    """The known name nearest ``name`` (what a typo of it most likely meant), or None."""
    near = difflib.get_close_matches(str(name), [str(k) for k in known], n=1)
    return near[0] if near else None


def typo_of(name: Any, known: Iterable[Any]) -> str:
    """For a message: `` (typo of 'x'?)`` with the known name nearest ``name``, or '' where none is near."""
    near = nearest(name, known)
    return f" (typo of {near!r}?)" if near else ""
