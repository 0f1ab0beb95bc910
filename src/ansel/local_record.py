"""A record of runs trained in this checkout (``ansel record``): the finished runs of a preset's tables
and figures copied from ``results/`` into ``reports/<name>/`` in every record's layout, and those
items rendered from them by the normal rules (``gpukit.tables``) once all their runs are there.

A long table can so be trained in parts (a model, some seeds), each part collected and committed as it
finishes: the record keeps what earlier parts collected, and renders when the last part is in. A run
is collected only if its ``config.json`` is the preset's resolved config for it: a run left in
``results/runs/`` by another preset (same path, other epochs) is named, never mixed in.
"""
from __future__ import annotations

import json
from pathlib import Path

from ansel import targets as T
from ansel.config import ConfigError, load, root
from ansel.gpukit.build import _copy, item_runs
from ansel.gpukit.device import _gzip
from ansel.gpukit.tables import render_record_tables
from ansel.jsonfile import read_json

RUN_FILES = ("metrics.json", "config.json", "log.csv")
# Of the formats the rules write, what a CPU record keeps: the table, its data, its cells' provenance, the figure.
KEPT = (".md", ".csv", ".json", ".png")


def parse_items(items: list[str]) -> dict[str, list[str]]:
    """``["amvlstm/table3", ...]`` as {paper: [item, ...]}."""
    spec: dict[str, list[str]] = {}
    for text in items:
        paper, _, item = text.partition("/")
        if not paper or not item:
            raise ConfigError(f"--items: {text!r}: write paper/item (e.g. amvlstm/table3)")
        spec.setdefault(paper, []).append(item)
    return spec


def collect(preset: str, items: dict[str, list[str]], out: Path, report=print) -> dict[str, list[str]]:
    """Copy the finished runs of ``items`` ({paper: [table or figure id]}) under ``preset`` into ``out``,
    render the items whose runs are all in ``out``, and return {item: its runs still missing}."""
    config = load(preset=preset)
    runs: set[T.Run] = set()
    for paper, ids in items.items():
        for item in ids:
            runs.update(item_runs(config, paper, item)[1])
    copied, other, missing = 0, [], 0
    for run in sorted(runs):
        src, dst = root() / run.dir, out / run.dir.removeprefix("results/")
        if not (src / "metrics.json").exists() or not (src / "run.trec").exists():
            missing += not (dst / "metrics.json").exists()
            continue
        if read_json(src / "config.json") != json.loads(json.dumps(run.config(config))):
            other.append(run.dir)
            continue
        for name in RUN_FILES:
            _copy(src / name, dst / name)
        timings = root() / f"results/timings/{run.dataset}/{run.variant.name}/seed{run.seed}.json"
        if timings.exists():
            _copy(timings, dst / "timings.json")
        _gzip(src / "run.trec", dst / "run.trec.gz")
        copied += 1
    report(f"{out}: {copied} runs copied from results/runs, {missing} not trained yet")
    if other:
        report(f"{len(other)} runs trained with other settings than preset {preset!r} (not copied), "
               f"e.g. {other[0]}")
    placed, waiting = render_record_tables({"items": items, "preset": preset}, out)
    for f in placed:
        if f.suffix in KEPT:
            report(f"rendered {f}")
        else:
            f.unlink()
    for item, runs_left in waiting.items():
        report(f"{item}: waits for {len(runs_left)} runs (e.g. {runs_left[0]})")
    return waiting
