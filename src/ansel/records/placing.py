"""A record changes only as a whole (DESIGN.md principle 16): ``ansel gpu-unpack`` and ``ansel collect-record``
build the new record in a staging directory beside it (a copy of the old one, the new runs checked
and added, its tables rendered), and only then rename it into place, all under a lock on the records'
folder; anything refused or failing on the way leaves the record as it was.

A record holds runs of one setting: its ``record.json`` names its preset and overrides, and every run
in it is the resolved config of that setting for its directory (the device a run trained on aside).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from ansel.evaluation.agreement import check_run
from ansel.files import write_text_atomic
from ansel.jsonfile import read_json
from ansel.records.layout import FINISHED_FILES, RECORD_FILE, RecordRefused


@contextlib.contextmanager
def staged_record(dest: Path) -> Iterator[Path]:
    """A staging copy of the record ``dest`` beside it (empty where there is none yet), to change freely;
    ``replace_tree(stage, dest)`` puts it in place; removed whatever happens. The caller holds
    ``locked(dest.parent)`` from before the copy until it is placed."""
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=f".{dest.name}.") as tmp:
        stage = Path(tmp) / dest.name
        if dest.exists():
            shutil.copytree(dest, stage, symlinks=True)
        else:
            stage.mkdir()
        yield stage


def check_setting(stage: Path, preset: str, overrides: dict, where: str) -> None:
    """Refuse runs of ``preset`` with ``overrides`` (from ``where``) into a record of another setting."""
    path = stage / RECORD_FILE
    if not path.exists():
        return
    held = read_json(path)
    if (held.get("preset"), held.get("config") or {}) != (preset, overrides or {}):
        raise RecordRefused(
            f"{where}: runs of preset {preset!r} with overrides {overrides or {}} cannot go into "
            f"the record of preset {held.get('preset')!r} with overrides {held.get('config') or {}} "
            f"({path.name} of {stage.name}): a record holds runs of one setting; give another record"
        )


def write_setting(stage: Path, about: dict) -> None:
    """The record's setting (``preset``, ``config``: the overrides) and what else ``about`` says."""
    write_text_atomic(stage / RECORD_FILE, json.dumps(about, indent=1) + "\n")


def settings(cfg: dict) -> dict:
    """A run's resolved config without the device it trained on (a kit's runs train on ``cuda``)."""
    train = {k: v for k, v in (cfg.get("train") or {}).items() if k != "device"}
    return {**cfg, "train": train}


def first_difference(a, b, path: str = "") -> str:
    """Where two resolved configs first differ, as ``key.path: a vs b``."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key, "<absent>") != b.get(key, "<absent>"):
                return first_difference(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{path}.{key}".lstrip("."))
    return f"{path or 'the config'}: {json.dumps(a)} vs {json.dumps(b)}"


def check_same_setting(run_cfg: dict, expected: dict, where: str, against: str) -> None:
    """Refuse a run whose config (``where``) is not ``expected`` (``against`` says whose it is)."""
    if settings(run_cfg) != settings(expected):
        raise RecordRefused(
            f"{where}: trained with other settings than {against} "
            f"({first_difference(settings(run_cfg), settings(expected))}): a record holds runs of "
            "one resolved config; nothing was placed"
        )


def check_finished(run: Path, trec: str, processed: Path) -> None:
    """A finished run (its metrics.json present) has every file of one, and its metrics.json is what its
    run file ``trec`` gives on ``processed``'s labels."""
    if missing := [n for n in (*FINISHED_FILES, trec) if not (run / n).is_file()]:
        raise RecordRefused(
            f"{run}: a finished run (metrics.json) without {', '.join(missing)}: half written; nothing was placed"
        )
    try:
        check_run(run, processed, run / trec)
    except (ValueError, FileNotFoundError) as e:
        raise RecordRefused(f"{e}; nothing was placed") from None
