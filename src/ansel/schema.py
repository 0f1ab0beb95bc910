"""A hand-edited YAML file checked against its JSON Schema where it is read: one line naming the file,
the key path and (for an unknown key) the allowed ones. Light on purpose (no numpy, no torch): the
download step and the record wing check their files with it."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ansel.settings import ConfigError
from ansel.typos import nearest, typo_of
from ansel.yamlfile import read_yaml


def check_schema(instance: Any, schema_path: Path, label: str | Callable[[tuple], str]) -> None:
    """Refuse ``instance`` unless it obeys the JSON schema at ``schema_path``, in one line naming
    the key path (an unknown key: the key and the allowed ones). ``label`` names the file, or is
    asked, with the refused key's path, where that value came from."""
    import jsonschema

    schema = _schema(schema_path, schema_path.stat().st_mtime_ns)
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(instance))
    if error is None:
        return
    at = ".".join(str(p) for p in error.absolute_path)
    refused = tuple(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = error.schema.get("properties", {})
        unknown = [
            k
            for k in error.instance
            if k not in allowed and not any(re.search(p, k) for p in error.schema.get("patternProperties", {}))
        ]
        message = (
            f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"
            f"{typo_of(unknown[0], allowed) if len(unknown) == 1 else ''}; allowed: {', '.join(allowed)}"
        )
        refused += tuple(unknown[:1])
    else:
        message = error.message
        if error.validator == "required":
            message += _typo_hint(instance, refused)
        elif error.validator == "enum":
            message += typo_of(error.instance, error.validator_value)
    where = label if isinstance(label, str) else label(refused)
    raise ConfigError(f"{where}: {at + ': ' if at else ''}{message}")


def _typo_hint(instance: Any, path: tuple) -> str:
    """For an entry that lacks a required key: the configured entry beside it whose name is nearest, as
    a key mistyped in an override (``--config 'models={qa_cnnx: ...}'``) makes a new, incomplete entry."""
    if not path:
        return ""
    parent = instance
    for key in path[:-1]:
        parent = parent[key]
    if not isinstance(parent, dict):
        return ""
    near = nearest(path[-1], [k for k in parent if k != path[-1]])
    return f" (a new entry, or a typo of {near!r}?)" if near else ""


@functools.lru_cache(maxsize=None)
def _schema(path: Path, mtime_ns: int) -> dict:
    return read_yaml(path)  # libyaml's parser: PyYAML's own took ~40 ms of each table job for the paper schema
