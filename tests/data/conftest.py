"""Shared fixtures: the dataset mirror (real files) and the small hand-written fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


def mirror_dir() -> Path:
    """$ANSEL_DATA_MIRROR, else ../shared/datasets relative to the repository root."""
    return Path(os.environ.get("ANSEL_DATA_MIRROR") or REPO.parent / "shared" / "datasets")


@pytest.fixture(scope="session")
def mirror() -> Path:
    return mirror_dir()


@pytest.fixture(scope="session")
def fetched(tmp_path_factory, mirror):
    """fetched(source, files=None) -> raw dir, fetched once per session from the mirror;
    skips (with the reason) when the mirror lacks the dataset's files."""
    from ansel.data.download import dataset_spec, fetch_dataset

    cache: dict[tuple, Path] = {}

    def get(name: str, files: list[str] | None = None) -> Path:
        key = (name, tuple(files or ()))
        if key not in cache:
            spec = dataset_spec(name)
            wanted = [f for f in spec["files"] if files is None or f["name"] in files]
            absent = [
                f["mirror"]["path"]
                for f in wanted
                if "group" not in f and not (mirror / spec["mirror_dir"] / f["mirror"]["path"]).exists()
            ]
            if absent or not (mirror / spec["mirror_dir"]).is_dir():
                pytest.skip(f"mirror {mirror} lacks {spec['mirror_dir']}/{absent or ''}")
            raw = tmp_path_factory.mktemp(name)
            fetch_dataset(name, raw, mirror, {"files": files} if files else None)
            cache[key] = raw
        return cache[key]

    return get
