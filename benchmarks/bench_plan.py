"""The planner against reality: for each committed record's tables, the device-minutes `ansel plan`
predicts beside what the record's trainings measured.

A run's prediction comes from the other seeds of its shape (the planner's premise: a run's cost is
its shape's, not its seed's), through the planner's own formula (``plan_minutes``: epochs x
(batches per epoch from the processed data x seconds per batch + one dev scoring + a checkpoint)
+ the start-up; checkpoint and start-up fitted over the other records' timed runs on the device,
not this record's); the measured
time is each training job's wall time from its ``timings.json`` (start to end: imports, data and
model building, every epoch and its dev scoring; not the evaluation job). A record's wall time
(first start to last end) is printed beside: jobs ran two at a time on its 2 cores.

    python benchmarks/bench_plan.py [RECORD ...]   (default: every record under reports/ with timings)
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

import pandas as pd

from ansel.config import root
from ansel.plan import (
    Cost,
    Overhead,
    outside_seconds,
    plan_minutes,
    shape,
    timings_cost,
)


def runs_of(record: Path) -> list[tuple[dict, dict]]:
    """(config, timings["train"]) of each run of the record with a timings file and epochs."""
    found = []
    for timings in sorted(record.glob("runs/*/*/seed*/timings.json")):
        train = json.loads(timings.read_text())["train"]
        if [e for e in train["epochs"] if e["batches"]]:
            found.append((json.loads((timings.parent / "config.json").read_text()), train))
    return found


def overheads(records: list[Path]) -> dict[str, Overhead | None]:
    """{device: the ``Overhead`` fitted over the timed runs of ``records``}."""
    outside = defaultdict(list)
    for record in records:
        for _, train in runs_of(record):
            if seconds := outside_seconds(train):
                outside[timings_cost(train, "").device].append(seconds)
    return {device: Overhead.fit(runs) for device, runs in outside.items()}


def check(record: Path, others: list[Path]) -> list[dict]:
    runs, fitted = runs_of(record), overheads([r for r in others if r != record])
    by_shape = defaultdict(list)
    for cfg, train in runs:
        by_shape[shape(cfg)].append((cfg["seed"], timings_cost(train, "")))
    rows, examples = defaultdict(lambda: {"runs": 0, "predicted": 0.0, "measured": 0.0, "start": [], "end": []}), {}
    for cfg, train in runs:
        others = [c for seed, c in by_shape[shape(cfg)] if seed != cfg["seed"]]
        if not others:
            continue
        mine = Cost(
            statistics.median(c.seconds_per_batch for c in others),
            statistics.median(c.dev_seconds or 0 for c in others),
            others[0].device,
            "",
            batches=others[0].batches,
            overhead=fitted.get(others[0].device),
        )  # batches: a clone has no data
        minutes, _ = plan_minutes(cfg, {shape(cfg): mine}, examples)
        if minutes is None:
            continue
        row = rows[cfg["dataset"]]
        row["runs"] += 1
        row["predicted"] += minutes
        row["measured"] += (train["finished"] - train["started"]) / 60
        row["start"].append(train["started"])
        row["end"].append(train["finished"])
    return [
        {
            "record": record.name,
            "dataset": ds,
            "runs": r["runs"],
            "predicted": r["predicted"],
            "measured": r["measured"],
            "wall": (max(r["end"]) - min(r["start"])) / 60,
        }
        for ds, r in rows.items()
    ]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("records", nargs="*", type=Path)
    every = sorted(d for d in [*root().glob("reports/*"), *root().glob("reports/device/*")] if d.is_dir())
    records = p.parse_args().records or every
    rows = [
        {
            "record": r["record"],
            "dataset": r["dataset"],
            "runs": r["runs"],
            "predicted min": round(r["predicted"], 1),
            "measured min": round(r["measured"], 1),
            "ratio": round(r["predicted"] / r["measured"], 2),
            "record wall": round(r["wall"], 1),
        }
        for record in records
        for r in check(record, every)
    ]
    print(pd.DataFrame(rows).to_markdown(index=False) if rows else "no timed runs in these records")


if __name__ == "__main__":
    main()
