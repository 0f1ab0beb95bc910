"""The runs the papers' tables and figures read, as records, and the files they read and write
(DESIGN.md, principles 2, 5 and 10).

A run is a record (``Run``); its directory is how it is written to disk, never parsed back. Which
runs a spec asks for is ``ansel.paper_targets``' and each table kind's (``ansel.table_kinds``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ansel.config import ConfigError, model_config, run_config, variant_name
from ansel.evaluation.config import CATEGORY_METRICS, CLASSIFICATION_METRICS, METRICS
from ansel.models.registry import is_trained
from ansel.specs import Column, TableSpec

# the papers' published values (a table kind's ``published``: ansel.table_kinds)
PUBLISHED_RESULTS = "workflow/papers/published_results.csv"
# published values of the context rows (``context: true``; ansel.report.notes), in any paper's table
CONTEXT_PUBLISHED = "workflow/papers/context_results.csv"
# (split, metric) that a run's timings file holds instead of its metrics.json: wall time stays out
# of the run directory, whose files are the same bytes for the same seed.
TIMING_METRICS = {("train", "seconds_per_batch")}
# every metric a run reports (metrics.json, log.csv or its timings file): what a table column or figure may name
REPORTED_METRICS = METRICS + CLASSIFICATION_METRICS + CATEGORY_METRICS + sorted(m for _, m in TIMING_METRICS)


@dataclass(frozen=True)
class Variant:
    """A model config of params.yaml, with at most one value changed: ``point`` = (key, value), a
    figure's sweep point or a point of the model's lr grid."""

    model: str
    point: tuple[str, Any] | None = None

    @property
    def name(self) -> str:
        return variant_name(self.model, self.point)


@dataclass(frozen=True)
class Run:
    """One training run: (dataset, model variant, seed); runs sort by directory."""

    dataset: str
    variant: Variant
    seed: int

    @property
    def dir(self) -> str:
        return run_dir(self.dataset, self.variant.name, self.seed)

    def config(self, config: dict) -> dict:
        return run_config(config, self.dataset, self.variant.model, self.seed, self.variant.point)

    def __lt__(self, other: "Run") -> bool:
        return self.dir < other.dir


def seeds(config: dict, variant: Variant | None = None) -> list[int]:
    """The seeds of a model's runs: its own ``seeds`` count where its config sets one (a preset
    may give cheap rows more seeds than the rest), else the config's."""
    own = config.get("models", {}).get(variant.model if variant else None, {}).get("seeds")
    return list(range(1, int(own or config["seeds"]) + 1))


def runs(config: dict, dataset: str, variant: Variant) -> list[Run]:
    return [Run(dataset, variant, s) for s in seeds(config, variant)]


def seed_count(config: dict, models) -> str:
    """How many seeds the models' runs average: "5", or "2-5" where models differ."""
    counts = sorted({len(seeds(config, Variant(m))) for m in models}) or [len(seeds(config))]
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"


def run_dir(dataset: str, model: str, seed: int) -> str:
    return f"results/runs/{dataset}/{model}/seed{seed}"


def timings_file(run: Run) -> str:
    """The run's epochs' wall times, written by ``ansel train --timings``."""
    return f"results/timings/{run.dataset}/{run.variant.name}/seed{run.seed}.json"


def measured_peak_mb(run: Run) -> float | None:
    """The run's peak device memory in MB, from its timings file when it was trained on a GPU."""
    try:
        return json.loads(Path(timings_file(run)).read_text())["train"].get("peak_device_mb")
    except (OSError, ValueError, KeyError, AttributeError):
        return None


def metric_file(run: Run, split: str, metric: str) -> str:
    """The file that holds a run's ``split``/``metric``: its timings file or its metrics.json."""
    return timings_file(run) if (split, metric) in TIMING_METRICS else f"{run.dir}/metrics.json"


def value_file(run: Run, split: str, metric: str, protocol: str = "dev") -> str:
    """The file a table column or figure reads ``split``/``metric`` of a run from: under
    ``protocol: last`` or ``best_split`` its log.csv (an epoch's values: the last, MatchZoo's
    protocol, or the best on the split itself, MTAS's), else ``metric_file`` (the checkpoint
    selected on dev)."""
    if protocol == "benchmark":  # the table's step_times file (benchmark_file), not the run's
        return f"{run.dir}/metrics.json"
    return f"{run.dir}/log.csv" if protocol in ("last", "best_split") else metric_file(run, split, metric)


def benchmark_file(paper: str, table_id: str) -> str:
    """A table's ``protocol: benchmark`` values: its rows' training steps timed (``ansel step-times``)."""
    return f"results/benchmarks/{paper}/{table_id}.json"


def processed_dir(dataset: str) -> str:
    return f"data/processed/{dataset}"


def stats_file(dataset: str) -> str:
    return f"results/stats/{dataset}.csv"


def significance_columns(config: dict, table: TableSpec) -> list[Column]:
    """The columns a paired test over questions can use: ranking metrics (one value per question,
    from a run file) of the checkpoint selected on dev (run.trec), or of the last epoch (run_last.trec)
    where every compared row's model keeps it (``train.keep_last``); accuracy/F1 (pairs, not
    questions), timings and a best-epoch column have no per-question file."""
    models = {row.label: row.model for row in table.rows}
    compared = {models[label] for pair in table.compared_pairs for label in pair}
    keeps_last = (
        bool(compared)
        and any(c.protocol == "last" for c in table.columns)
        and all(_keeps_last(config, m) is not False for m in compared)
    )
    return [
        c
        for c in table.columns
        if c.metric in METRICS and (c.protocol == "dev" or (c.protocol == "last" and keeps_last))
    ]


def _keeps_last(config: dict, model: str) -> bool | None:
    """Whether a model's runs keep their last epoch's weights (``train.keep_last``); None where that is
    moot: a model that trains nothing (a lexical row) has one state, its run.trec's."""
    entry = config.get("models", {}).get(model, {})
    if "arch" in entry and not is_trained(entry["arch"]):
        return None
    return entry.get("train", {}).get("keep_last", False)


def run_file(config: dict, run: Run, protocol: str) -> str:
    """The per-question run file of a run at a column's protocol (``significance_columns``): the
    last epoch's (run_last.trec) where the model keeps it, else the dev-selected one (run.trec)."""
    last = protocol == "last" and _keeps_last(config, run.variant.model)
    return f"{run.dir}/{'run_last.trec' if last else 'run.trec'}"


def grid_points(config: dict, model: str) -> list[tuple[float, Variant]]:
    """(lr, variant) per point of the model's ``train.lr_grid`` -- the tables show the point best
    on dev -- the point at the model's own ``lr`` being the model itself; without a grid,
    [(lr, model)]. A config that does not carry the model (a report's slice without it) knows no
    grid: [(None, model)]."""
    if model not in config.get("models", {}):
        return [(None, Variant(model))]
    train = model_config(config, model)["train"]
    if "lr_grid" not in train:
        return [(train.get("lr"), Variant(model))]
    return [(lr, Variant(model) if lr == train.get("lr") else Variant(model, ("lr", lr))) for lr in train["lr_grid"]]


@dataclass(frozen=True)
class LrGrid:
    """A model's ``train.lr_grid`` and what the tables choose its point on: the mean over seeds of
    ``metric`` on ``split`` (its dev split, never a test split)."""

    lrs: tuple[float, ...]
    split: str
    metric: str


def lr_grid(config: dict, model: str) -> LrGrid | None:
    """The model's lr grid; None where it has none or the config does not carry the model."""
    if model not in config.get("models", {}):
        return None
    train = model_config(config, model)["train"]
    if "lr_grid" not in train:
        return None
    return LrGrid(tuple(train["lr_grid"]), train.get("dev_split", "dev"), train["select_metric"])


def raw_manifest(config: dict, dataset: str) -> str:
    """The download manifest of the raw files a (resolved) dataset is preprocessed from."""
    return f"data/raw/{config['datasets'][dataset]['source']}/manifest.json"


def provenance_inputs(config: dict, runs: list[Run]) -> list[str]:
    """The files ``ansel.report.provenance`` reads for these runs: timings (the commit), configs
    and the datasets' download manifests."""
    return list(
        dict.fromkeys(
            [f for r in runs for f in (timings_file(r), f"{r.dir}/config.json")]
            + [raw_manifest(config, d) for d in sorted({r.dataset for r in runs})]
        )
    )


def reading_metrics(files: list[str], found: list[Run]) -> list[Run]:
    """The runs of ``found`` whose metrics.json is one of ``files``."""
    read = set(files)
    return [r for r in found if f"{r.dir}/metrics.json" in read]


def with_run_files(files: list[str], found: list[Run]) -> list[str]:
    """``files`` and the run.trec and processed dataset of each run of ``found`` (``TableKind.metrics_runs``): a table
    or figure shows a run's metrics only as its run file gives them."""
    return list(dict.fromkeys(files + [f for r in found for f in (f"{r.dir}/run.trec", processed_dir(r.dataset))]))


def significance_inputs(config: dict, table: TableSpec) -> list[str]:
    """What a table's paired tests read (only a table with a ``baseline`` or ``claims``): the
    run.trec of every run of the compared rows, at every point of an lr grid (dev chooses among
    them), and the processed datasets of the tested columns (the labels)."""
    pairs, columns = table.compared_pairs, significance_columns(config, table)
    if not pairs or not columns:
        return []
    models = {row.label: row.model for row in table.rows}
    compared = dict.fromkeys(models[label] for pair in pairs for label in pair)
    datasets = list(dict.fromkeys(c.run_dataset for c in columns))
    trec = sorted(
        {r for m in compared for ds in datasets for _, v in grid_points(config, m) for r in runs(config, ds, v)}
    )
    protocols = dict.fromkeys(c.protocol for c in columns)
    files = dict.fromkeys(run_file(config, r, p) for r in trec for p in protocols)
    return list(files) + [processed_dir(ds) for ds in datasets]


def spec_seed(config: dict, seed: int, item: str, models: list[str]) -> int:
    """The one seed a single-run figure or table (``item``, its id) shows, the spec's (default the
    first): it must be a seed of every model."""
    for model in models:
        known = seeds(config, Variant(model))
        if seed not in known:
            raise ConfigError(f"{item}: seed {seed} is not one of {model}'s seeds {known}")
    return seed


def sweep_values(config: dict, figure: dict) -> list:
    """The spec's ``values`` (or its ``points``' values), or the preset's
    ``papers.<paper>.sweeps.<figure id>`` (fewer points)."""
    if "points" in figure:
        return [p["value"] for p in figure["points"]]
    sweeps = config.get("papers", {}).get(figure.get("paper"), {}).get("sweeps", {})
    return sweeps.get(figure["id"], figure["values"])


def sweep_models(config: dict, figure: dict) -> list[tuple[object, Variant]]:
    """(value, variant) per swept value: the spec's ``points`` (a model per value), or the base
    model with ``x`` at the value, or the base model itself at its own value."""
    if "points" in figure:
        return [(p["value"], Variant(p["model"])) for p in figure["points"]]
    base, x = figure["base_model"], figure["x"]
    m = model_config(config, base)
    from ansel.models.registry import parse_hparams  # torch-free, as in config.model_config

    base_value = getattr(parse_hparams(m["arch"], m["hparams"]), x, None)
    points = []
    for value in sweep_values(config, figure):
        if not isinstance(value, (int, float)):  # bool is an int: JSON writes it true/false
            raise ConfigError(f"figure {figure['id']}: sweep value {value!r} of {x} is not a number or boolean")
        points.append((value, Variant(base) if value == base_value else Variant(base, (x, value))))
    return points


def report_config(config: dict) -> dict:
    """The slice of the config every table or figure job reads (so only it triggers re-rendering)."""
    return {
        "preset": config["preset"],
        "seeds": config["seeds"],
        "dataset_alias": config.get("dataset_alias", {}),
        # provenance: the raw manifests
        "datasets": {d: {"source": config["datasets"][d]["source"]} for d in config["datasets"]},
    }


def models_config(config: dict, models: list[str]) -> dict:
    """What ``model_config`` needs to resolve these models (hparams, train, the preset's scale)."""
    return {
        "models": {m: config["models"][m] for m in models},
        "train": config["train"],
        "scale": config.get("scale", {}),
    }
