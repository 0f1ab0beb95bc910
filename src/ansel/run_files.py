"""A run's run file in either of its two forms: plain where the run was made (``results/runs/...``),
gzipped where a record keeps it (``reports/<record>/runs/...``), which renders its tables from there
as it is (``ansel.records.render``)."""

from __future__ import annotations

from pathlib import Path


def stored(path: str | Path) -> Path:
    """The file ``path`` (a run's ``run.trec``, say) as its directory holds it: itself, or ``path``.gz
    where only that is there; ``path`` where neither is (the workflow has yet to write it)."""
    path = Path(path)
    gz = path.with_name(path.name + ".gz")
    return gz if not path.exists() and gz.exists() else path
