"""What a preset will cost before it runs (``ansel plan``): per table and figure, its runs,
epochs, batches per epoch, and device-minutes from per-batch costs measured by earlier runs.

``ansel plan --measure`` times the shapes no run has measured yet (a few batches and one dev
scoring each, on this machine's device) into ``results/costs/<device>.json``, which later plans
read like any other measurement.

A cost is measured per run *shape* (dataset, architecture, hyperparameters, batch size,
negatives, truncation): what one training step and one dev scoring cost depends on these, not
on the seed, learning rate or epochs. Sources are directories holding ``results/runs`` (each
run's config.json) and ``results/timings`` (``ansel train --timings``; per epoch the training
loop's seconds and batches, and ``dev_seconds``); records made before timings had their own file
keep ``seconds_per_batch`` in ``log.csv``. Runs of no measured shape are listed, not guessed.
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ansel import targets as T
from ansel.config import root

SHAPE_KEYS = ("arch", "hparams", "max_len_q", "max_len_a")
TRAIN_SHAPE_KEYS = ("batch_size", "negatives", "max_batches")


def shape(cfg: dict) -> str:
    """The part of a run config its per-batch cost depends on."""
    return json.dumps({"dataset": cfg["dataset"], **{k: cfg.get(k) for k in SHAPE_KEYS},
                       **{k: cfg["train"].get(k) for k in TRAIN_SHAPE_KEYS}}, sort_keys=True)


@dataclass
class Cost:
    seconds_per_batch: float
    dev_seconds: float | None  # per epoch; None: not measured (older records)
    device: str
    source: str


def measured_costs(sources: list[Path]) -> dict[str, Cost]:
    """{shape: the cost measured by a run of that shape}; a later source wins over an earlier one."""
    costs: dict[str, Cost] = {}
    for src in sources:
        for path in sorted(src.glob("results/costs/*.json")):
            costs |= {key: Cost(**c, source=str(path)) for key, c in json.loads(path.read_text()).items()}
        for config in sorted(src.glob("results/runs/*/*/seed*/config.json")):
            cfg = json.loads(config.read_text())
            cost = _run_cost(src, config.parent, cfg)
            if cost:
                costs[shape(cfg)] = cost
    return costs


def _run_cost(src: Path, run_dir: Path, cfg: dict) -> Cost | None:
    timings = src / "results/timings" / cfg["dataset"] / cfg["model"] / f"{run_dir.name}.json"
    if timings.exists():
        train = json.loads(timings.read_text())["train"]
        epochs = [e for e in train["epochs"] if e["batches"]]
        if not epochs:
            return None
        dev = [e["dev_seconds"] for e in epochs if "dev_seconds" in e]
        return Cost(sum(e["seconds"] for e in epochs) / sum(e["batches"] for e in epochs),
                    sum(dev) / len(dev) if dev else None, train.get("device", "?"), str(timings))
    log = run_dir / "log.csv"
    if log.exists():
        rows = [r for r in csv.DictReader(log.open()) if r.get("seconds_per_batch")]
        if rows:
            return Cost(sum(float(r["seconds_per_batch"]) for r in rows) / len(rows), None, f"record {src}", str(log))
    return None


def measure(config: dict, sources: list[Path], out_dir: Path, batches: int = 3, report=print) -> Path | None:
    """Time every run shape of ``config`` that ``sources`` have not measured and whose dataset is
    processed; each cost goes to ``out_dir/<device>.json`` as soon as it is measured (merged with
    what the file holds), so an interrupted measurement keeps what it did."""
    from ansel.data.batches import RunData
    from ansel.data.vocab import Vocab, run_vocab_file
    from ansel.evaluation.evaluate import dev_evaluator, eval_data
    from ansel.evaluation.config import EvalConfig
    from ansel.models.io import save_text
    from ansel.settings import parse
    from ansel.training.config import TrainConfig
    from ansel.training.trainer import measure_costs

    known = measured_costs(sources)
    todo = {}
    for run in T.paper_runs(config):
        cfg = run.config(config)
        if shape(cfg) not in known and (root() / run_vocab_file(cfg, T.processed_dir(cfg["dataset"]))).exists():
            todo.setdefault(shape(cfg), cfg)
    path, loaded = None, {}
    for i, (key, cfg) in enumerate(sorted(todo.items()), 1):
        processed = root() / T.processed_dir(cfg["dataset"])
        lengths = (cfg["dataset"], cfg["max_len_q"], cfg["max_len_a"], cfg.get("vocab"))
        if lengths not in loaded:
            loaded[lengths] = RunData.load(processed, Vocab.load(root() / run_vocab_file(cfg, processed)),
                                           *lengths[1:3])
        ev = parse(EvalConfig, cfg["eval"], "eval")
        data = eval_data(loaded[lengths], ev)
        dev = dev_evaluator(data, parse(TrainConfig, cfg["train"], "train").dev_split, ev)
        cost = measure_costs(cfg, data, dev, batches)
        path = out_dir / f"{cost['device'].replace(':', '')}.json"
        costs = {**(json.loads(path.read_text()) if path.exists() else {}), key: cost}
        path.parent.mkdir(parents=True, exist_ok=True)
        save_text(path, json.dumps(costs, indent=2, sort_keys=True) + "\n")
        report(f"[{i}/{len(todo)}] {cfg['dataset']} {cfg['model']}: {cost['seconds_per_batch']:.4f} s/batch, "
               f"dev scoring {cost['dev_seconds']:.1f} s")
    return path


def batches_per_epoch(cfg: dict, positives: dict[str, int | None]) -> int | None:
    """Training batches of one epoch: the train split's positive pairs in batches, or max_batches."""
    n = positives.get(cfg["dataset"])
    if n is None:
        return None
    batches = math.ceil(n / cfg["train"]["batch_size"])
    return min(batches, cfg["train"]["max_batches"]) if cfg["train"].get("max_batches") else batches


def train_positives(processed: Path) -> int | None:
    path = processed / "candidates-train.parquet"
    return int((pd.read_parquet(path, columns=["label"]).label == 1).sum()) if path.exists() else None


def plan(config: dict, sources: list[Path]) -> pd.DataFrame:
    """One row per table or figure with runs: runs, epochs, batches per epoch, measured runs and
    the device-minutes of those (training steps plus each epoch's dev scoring where measured)."""
    costs = measured_costs(sources)
    rows, positives = [], {}
    for paper in config["papers"]:
        tables, figures = T.paper_items(config, paper)
        items = [(t["id"], T.table_runs(config, t)) for t in tables if T.table_kind(t) == "metrics"]
        items += [(f["id"], T.figure_runs(config, f)) for f in figures]
        for item, item_runs in items:
            rows.append({"paper": paper, "item": item, **_estimate(config, item_runs, costs, positives)})
    every = sorted(set(T.paper_runs(config)))  # a run read by a table and a figure is trained once
    rows.append({"paper": "all", "item": "(each run once)", **_estimate(config, every, costs, positives)})
    return pd.DataFrame(rows)


def _estimate(config: dict, item_runs: list[T.Run], costs: dict[str, Cost], positives: dict) -> dict:
    minutes, measured, epochs, batches, devices = 0.0, 0, set(), set(), set()
    for run in item_runs:
        cfg = run.config(config)
        if cfg["dataset"] not in positives:
            positives[cfg["dataset"]] = train_positives(root() / T.processed_dir(cfg["dataset"]))
        n = batches_per_epoch(cfg, positives)
        epochs.add(cfg["train"]["epochs"])
        batches.add(n if n is not None else "?")
        cost = costs.get(shape(cfg))
        if cost and n is not None:
            measured += 1
            devices.add(cost.device)
            minutes += cfg["train"]["epochs"] * (n * cost.seconds_per_batch + (cost.dev_seconds or 0)) / 60
    return {"runs": len(item_runs), "epochs": _span(epochs), "batches/epoch": _span(batches),
            "measured runs": measured, "device-minutes (measured runs)": round(minutes, 1),
            "measured on": ", ".join(sorted(devices)) or "-"}


def _span(values: set) -> str:
    known = sorted(v for v in values if v != "?")
    text = "" if not known else str(known[0]) if len(known) == 1 else f"{known[0]}-{known[-1]}"
    return text + ("?" if "?" in values else "") if known else "?"
