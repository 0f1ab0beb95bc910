"""Helpers of the records' tests (issue 54): a finished run's place in a record, kit.json records and
archive members made of it, and a folder's snapshot to prove nothing outside a record changed."""

import json
import os
from pathlib import Path

import pytest

from ansel.records.kit_unpack import unpack

RUN = "runs/synthetic_en/qa_cnn/seed1"  # the finished run's folder in a record


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every file (its bytes) and link (its target) under ``folder``, links not followed."""
    found = {}
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(top) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                found[rel] = f"-> {os.readlink(path)}"
            elif path.is_file():
                found[rel] = path.read_bytes()
            else:
                found[rel] = "dir"
    return found


def kit_record(name: str = "rec", run_config: dict | None = None, **keys) -> dict:
    """A kit.json record holding the finished run (``run_config``: its config.json's content)."""
    runs = [{"dir": RUN, "config": run_config}] if run_config is not None else []
    return {
        "name": name,
        "preset": "smoke",
        "config": {},
        "about": "a test record",
        "items": {},
        "runs": runs,
        "cpu_runs": [],
        "measure": None,
        "bench": [],
        **keys,
    }


def run_members(files: dict[str, bytes], record: str = "rec", run: str = RUN, skip: tuple = ()) -> dict[str, bytes]:
    """A finished run's archive members (run.trec gzipped), without ``skip``."""
    return {
        f"{record}/{run}/{n}": files[n]
        for n in ("metrics.json", "config.json", "log.csv", "run.trec.gz", "timings.json")
        if n not in skip
    }


def unpack_refused(archive: Path, home: Path, match: str) -> None:
    """Unpacking ``archive`` into ``home``'s reports/device/ is refused with ``match``; nothing under
    ``home``'s folder changed (the checkout, the record, an ``outside/`` beside it), no staging left."""
    before = snapshot(home.parent)
    with pytest.raises(SystemExit, match=match):
        unpack([archive], device_minutes=1.0, dest=home / "reports/device")
    assert snapshot(home.parent) == before


def trained(
    home: Path, files: dict[str, bytes], run, config: dict, skip: tuple = (), config_text: str | None = None
) -> None:
    """The finished run's ``files`` as ``run`` (an ``ansel.targets.Run``) trained in the checkout
    ``home`` under ``config``, less ``skip``; ``config_text``: its config.json instead."""
    folder = home / run.dir
    folder.mkdir(parents=True)
    for name in ("metrics.json", "log.csv", "run.trec"):
        if name not in skip:
            (folder / name).write_bytes(files[name])
    (folder / "config.json").write_text(
        config_text if config_text is not None else json.dumps(run.config(config), indent=2, sort_keys=True) + "\n"
    )
