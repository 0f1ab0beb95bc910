"""JSON files the project reads (measured costs, a run's config.json, its timings): a file cut short
or of the wrong shape is refused naming it, not with a bare JSONDecodeError or KeyError."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ansel.settings import ConfigError


def read_json(path: Path, kind: type = dict) -> Any:
    """The JSON document of ``path``, which must be a ``kind`` (a JSON object by default)."""
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: missing") from None
    except ValueError as e:
        raise ConfigError(f"{path}: not valid JSON ({e}): restore or delete it") from None
    if not isinstance(value, kind):
        raise ConfigError(
            f"{path}: expected a JSON {'object' if kind is dict else kind.__name__}, got {type(value).__name__}"
        )
    return value
