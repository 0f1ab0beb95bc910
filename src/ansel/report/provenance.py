"""Where a table cell comes from: its runs (directory, seed), the git commit that trained each and
the sha256 of the pretrained vectors it read (both recorded in its timings file by ``ansel train``),
a hash of each run's resolved config, and the sha256 of the raw files its dataset was made from (the
download's manifest).

A table's JSON twin carries this per cell; its notes name the commits and checksums once.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from ansel.report.tables import grid_choice
from ansel.specs import TableSpec
from ansel.targets import Run, raw_manifest, runs, timings_file


def _read_json(path: str | Path) -> dict:
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: missing; the run or download must be made first (snakemake {path})") from None
    except ValueError as e:
        raise ValueError(f"{path}: not JSON ({e})") from None


def run_provenance(run: Run) -> dict:
    """{run, seed, commit (None: trained outside a git checkout or before commits were recorded),
    config_sha256 (of the resolved config as canonical JSON), vectors_sha256 (``ansel.training.
    trainer.vectors_sha256``; None: no pretrained vectors, or trained before they were recorded)}."""
    config = _read_json(f"{run.dir}/config.json")
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    train = _read_json(timings_file(run)).get("train", {})
    return {
        "run": run.dir,
        "seed": run.seed,
        "commit": train.get("commit"),
        "config_sha256": digest,
        "vectors_sha256": train.get("vectors_sha256"),
    }


def raw_checksums(config: dict, dataset: str) -> dict[str, str]:
    """{raw file (relative to data/raw/<source>/): sha256} of the dataset's download."""
    entries = _read_json(raw_manifest(config, dataset))
    return {name: e["sha256"] if isinstance(e, dict) else e for name, e in sorted(entries.items())}


def cell_provenance(config: dict, runs: list[Run]) -> dict:
    """A cell's provenance: every run's ``run_provenance`` and its datasets' raw files
    ({dataset, file, sha256}). Both are lists: `dvc metrics show` lists a JSON twin's numbers and
    strings but not lists, so the provenance stays out of its table."""
    return {
        "runs": [run_provenance(r) for r in runs],
        "raw_sha256": [
            {"dataset": d, "file": f, "sha256": h}
            for d in sorted({r.dataset for r in runs})
            for f, h in raw_checksums(config, d).items()
        ],
    }


def table_provenance(config: dict, table: TableSpec) -> dict[tuple[str, str], dict]:
    """{(row label, column label): cell_provenance} of a metrics table's cells that show runs (at the
    lr grid point dev chose, as ``ansel.report.tables.aggregate``)."""
    out = {}
    for cell in table.cells:
        _, variant, _ = grid_choice(config, cell.model, cell.dataset)
        out[(cell.row.label, cell.column.label)] = cell_provenance(config, runs(config, cell.dataset, variant))
    return out


def _runs(n: int) -> str:
    return f"{n} run{'s' * (n > 1)}"


def provenance_note(cells: list[dict]) -> str:
    """One sentence naming, for all of a table's cells, the commits that trained the runs, the
    pretrained vectors they read where recorded and the raw files' sha256 (first 12 hex digits; the
    JSON twin has them whole)."""
    by_run = {r["run"]: r["commit"] or "unknown (not trained in a git checkout)" for c in cells for r in c["runs"]}
    raw: dict[str, dict[str, str]] = {}
    for entry in (e for c in cells for e in c["raw_sha256"]):
        raw.setdefault(entry["dataset"], {})[entry["file"]] = entry["sha256"]
    if not by_run:
        return ""
    commits = Counter(by_run.values())
    trained = "; ".join(f"{c} ({_runs(n)})" if len(commits) > 1 else c for c, n in commits.items())
    data = "; ".join(f"{d}: " + ", ".join(f"{f} {h[:12]}" for f, h in files.items()) for d, files in raw.items())
    vectors = {r["run"]: r.get("vectors_sha256") for c in cells for r in c["runs"]}
    read = Counter(h for h in vectors.values() if h)
    read_note = (
        "; pretrained vectors sha256 " + ", ".join(f"{h[:12]} ({_runs(n)})" for h, n in read.items()) if read else ""
    )
    return f"Provenance: runs trained at commit {trained}{read_note}; raw data sha256 (download manifests) {data}."
