"""What a record holds on disk, the one layout every writer and reader of a record uses.

A record is a folder under ``reports/`` (a device record under ``reports/device/``): ``record.json`` (its
setting: preset and overrides), ``runs/<dataset>/<model>/seed<k>/`` (each run's files below, the run
file gzipped), the tables and figures rendered from them, a README; a device record adds ``costs/``,
``bench/``, ``results/benchmarks/`` (a table's step times), ``device.json``, ``leases.json`` and ``logs/``.
The kit's runner on the GPU image writes this layout too, so this module imports only the standard
library, ``ansel.names`` and ``ansel.run_files``.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from ansel.names import plain_name
from ansel.run_files import stored

DEVICE_DIR = "reports/device"  # the device records, one folder each
RECORD_FILE = "record.json"  # the record's setting
KIT_FILE = "kit.json"  # a kit's records, jobs and runs (in the kit, and in its archive)
LEASES_FILE = "leases.json"  # a device record's leases in time order
FINISHED_FILES = ("metrics.json", "config.json", "log.csv")  # and the run file (run.trec or run.trec.gz)
RUN_FILES = (*FINISHED_FILES, "timings.json", "run.trec.gz")  # what a record keeps of a finished run
# a run with train.keep_last adds its last epoch's evaluation (the protocol of a paper reporting it)
LAST_RUN_FILES = ("metrics_last.json", "run_last.trec.gz")
UNFINISHED_FILES = {"config.json", "job.log", "state.pt"}  # what an unfinished run brings back
DEVICE_PARTS = {"device.json", "costs", "bench", "results", "runs"}  # what a kit's archive holds of a record


class RecordRefused(ValueError):
    """A record change refused before anything was placed; the message names the files."""


def run_name(cfg: dict, where: str) -> str:
    """``runs/<dataset>/<model>/seed<k>`` of a run's config, each name checked as a plain name."""
    try:
        return "runs/{}/{}/seed{}".format(
            *(plain_name(cfg.get(k), f"{where}: {k}") for k in ("dataset", "model", "seed"))
        )
    except ValueError as e:
        raise RecordRefused(str(e)) from None


def finished(run_dir: Path) -> bool:
    """Trained and evaluated: its metrics.json and its run file (plain where it ran, gzipped in a record)."""
    return (run_dir / "metrics.json").exists() and stored(run_dir / "run.trec").exists()


def gzip_file(src: Path, dst: Path) -> None:
    """gzip with no name or time in the header: the same run file, the same bytes."""
    with open(src, "rb") as f, open(dst, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as g:
        shutil.copyfileobj(f, g)


def copy_path(src: Path, dst: Path) -> None:
    """A file or a folder (no Python caches) to ``dst``, its parent folders made."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    else:
        shutil.copy2(src, dst)


def setting_args(preset: str, overrides: dict) -> list[str]:
    """``snakemake --config`` values of a record's setting: its preset and overrides (YAML flow, as JSON)."""
    return [f"preset={preset}", *(f"{k}={json.dumps(v)}" for k, v in overrides.items())]
