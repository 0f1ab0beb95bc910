"""The device records ``reports/device/records.yaml`` declares, each checked against its schema, and what
one selects: its preset's config with its overrides, the runs of its tables and figures."""

from __future__ import annotations

from pathlib import Path

from ansel import targets as T
from ansel.config import ConfigError, load, root
from ansel.records.items import item_runs
from ansel.schema import check_schema
from ansel.yamlfile import read_yaml

RECORDS = "reports/device/records.yaml"
RECORDS_SCHEMA = "workflow/schemas/records.schema.yaml"


def declared_records(path: Path | None = None) -> dict[str, dict]:
    """The declared records, each checked against workflow/schemas/records.schema.yaml."""
    path = path or root() / RECORDS
    declared = read_yaml(path) or {}  # an empty file declares no record
    check_schema(declared, root() / RECORDS_SCHEMA, str(path))
    for name, rec in declared.items():
        if not ({"bench", "measure", "runs", "speed"} & set(rec)):
            raise ConfigError(f"{path}: {name}: no job (give bench, measure, speed or runs)")
    return declared


def record_config(rec: dict) -> dict:
    return load(**{"preset": rec.get("preset", "full"), **rec.get("config", {})})


def record_runs(config: dict, spec: dict, where: str) -> list[T.Run]:
    """The runs of the record's tables and figures ({paper: [table or figure id]}), optionally only
    ``models`` and ``seeds``."""
    found: set[T.Run] = set()
    for paper, items in spec.get("items", {}).items():
        for item in items:
            try:
                found.update(item_runs(config, paper, item)[1])
            except ConfigError as e:
                raise ConfigError(f"{where}.items.{e}") from None
    models, seeds = spec.get("models"), spec.get("seeds")
    return sorted(
        r for r in found if (models is None or r.variant.name in models) and (seeds is None or r.seed in seeds)
    )
