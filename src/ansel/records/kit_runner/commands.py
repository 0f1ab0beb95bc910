"""The command lines of a kit run's jobs: ``ansel train`` then ``ansel evaluate`` (on the device, and
for a record's untrained rows on the CPU at unpack), each with the run's config on the chosen device."""

from __future__ import annotations

import sys
from pathlib import Path


def with_device(cfg: dict, device: str) -> dict:
    """The run config on ``device`` (``auto`` leaves the run's own setting)."""
    return cfg if device == "auto" else {**cfg, "train": {**cfg["train"], "device": device}}


def python_cmd(*args: str) -> list[str]:
    return [sys.executable, *args]


def run_commands(run: dict, run_dir: Path, data_root: Path, threads: int) -> list[list[str]]:
    """``ansel train`` (config.json of ``run_dir``, timings beside it, no dvclive) then ``ansel evaluate``
    of a kit run whose data lie under ``data_root``."""
    ansel, processed = python_cmd("-m", "ansel.cli"), str(data_root / run["processed"])
    train = [
        *ansel,
        "train",
        "--config",
        str(run_dir / "config.json"),
        "--processed",
        processed,
        "--run-dir",
        str(run_dir),
        "--timings",
        str(run_dir / "timings.json"),
        "--no-progress",
        "--no-dvclive",
        "--threads",
        str(threads),
    ]
    if run["embeddings"]:
        train += ["--embeddings", str(data_root / run["embeddings"])]
    evaluate = [*ansel, "evaluate", "--processed", processed, "--run-dir", str(run_dir), "--threads", str(threads)]
    return [train, evaluate] + ([[*evaluate, "--last"]] if run["config"].get("train", {}).get("keep_last") else [])
