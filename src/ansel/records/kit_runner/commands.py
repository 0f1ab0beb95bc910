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


def run_commands(
    run: dict, run_dir: Path, data_root: Path, threads: int, seeds: list[int] | None = None
) -> list[list[str]]:
    """``ansel train`` (config.json of ``run_dir``, timings beside it, no dvclive) then ``ansel evaluate``
    of a kit run whose data lie under ``data_root``; with ``seeds``, the run's row at these seeds as one
    stacked training (``--seeds``: ``run_dir`` names each seed's folder with ``{seed}``, the first seed's
    config.json read) then each seed's evaluation."""
    ansel, processed = python_cmd("-m", "ansel.cli"), str(data_root / run["processed"])
    dirs = [Path(str(run_dir).replace("{seed}", str(s))) for s in seeds] if seeds else [run_dir]
    train = [
        *ansel,
        "train",
        "--config",
        str(dirs[0] / "config.json"),
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
    if seeds:
        train += ["--seeds", ",".join(map(str, seeds))]
    if run["embeddings"]:
        train += ["--embeddings", str(data_root / run["embeddings"])]
    last = run["config"].get("train", {}).get("keep_last")
    evaluations = []
    for d in dirs:
        evaluate = [*ansel, "evaluate", "--processed", processed, "--run-dir", str(d), "--threads", str(threads)]
        evaluations += [evaluate] + ([[*evaluate, "--last"]] if last else [])
    return [train, *evaluations]
