"""What the papers ask for, as runs and output files (DESIGN.md, principles 5 and 10).

The Snakefile, the CLI and the tests derive every target from the paper specs through these
functions, so adding a row to a spec adds its runs. A run is a record (``Run``); its directory
is how it is written to disk, never parsed back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ansel.config import (
    ConfigError,
    dataset_name,
    load_paper,
    model_config,
    papers_dir,
    run_config,
    variant_name,
)
from ansel.evaluation.config import METRICS
from ansel.models.registry import is_trained
from ansel.table_kinds import kind_of

# the papers' published values (a table kind's ``published``: ansel.table_kinds)
PUBLISHED_RESULTS = "workflow/papers/published_results.csv"
# published values of the context rows (``context: true``; ansel.report.context), in any paper's table
CONTEXT_PUBLISHED = "workflow/papers/context_results.csv"
TABLE_EXTENSIONS = ("csv", "md", "tex", "html", "json")
FIGURE_EXTENSIONS = ("png", "pdf")
# What each figure kind reads from a run directory, and whether it reads the processed dataset.
FIGURE_RUN_FILES = {
    "learning_curves": ["log.csv"],
    "accuracy_by_length": ["run.trec"],
    "attention_maps": ["config.json", "model.pt", "run.trec"],
    "sweep": [],  # its metric's file (value_file)
    "accuracy_bars": [],  # its metric's file (value_file)
    "heatmap": [],  # its table's files (TableKind.inputs)
}
FIGURES_READING_DATA = {"accuracy_by_length", "attention_maps"}
# (split, metric) that a run's timings file holds instead of its metrics.json: wall time stays out
# of the run directory, whose files are the same bytes for the same seed.
TIMING_METRICS = {("train", "seconds_per_batch")}


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


def spec_table(config: dict, paper: str, table_id: str) -> dict:
    """A table's spec, checked: its kind is known, its ``baseline`` and ``claims`` name its rows, and
    (with a config) the kind's own checks (``TableKind.check``)."""
    for table in load_paper(paper).get("tables", []):
        if table["id"] == table_id:
            kind = kind_of(table)
            check_significance_rows(paper, table)
            if config:  # a heatmap's table by name alone ({}): checked where its own table is planned
                kind.check(config, paper, table)
            return table
    raise KeyError(f"papers.{paper}: spec has no table {table_id!r}")


def claim_pair(claim: str) -> tuple[str, str]:
    """(better, worse) row labels of a spec's claim, written as the paper states it: "A > B" (A's
    metric is higher than B's) or "A < B" (lower: ("B", "A"))."""
    for sign, order in ((" > ", 1), (" < ", -1)):
        parts = claim.split(sign)
        if (
            len(parts) == 2
            and all(p.strip() for p in parts)
            and not any(o in claim for o in (" > ", " < ") if o != sign)
        ):
            return tuple(p.strip() for p in parts[::order])
    raise ConfigError(f"claim {claim!r}: expected '<row label> > <row label>' or '<row label> < <row label>'")


def compared_pairs(table: dict) -> list[tuple[str, str]]:
    """(row, other) label pairs a metrics table's paired tests compare: each row with a model against
    the spec's ``baseline``, then each claim's (better, worse) not compared already (either way round)."""
    pairs: dict[frozenset, tuple[str, str]] = {}
    baseline = table.get("baseline")
    if baseline:
        for row in table["rows"]:
            if row.get("model") and row["label"] != baseline:
                pairs.setdefault(frozenset((row["label"], baseline)), (row["label"], baseline))
    for claim in table.get("claims", []):
        a, b = claim_pair(claim)
        pairs.setdefault(frozenset((a, b)), (a, b))
    return list(pairs.values())


def significance_columns(config: dict, table: dict) -> list[dict]:
    """The columns a paired test over questions can use: ranking metrics (one value per question,
    from a run file) of the checkpoint selected on dev (run.trec), or of the last epoch (run_last.trec)
    where every compared row's model keeps it (``train.keep_last``); accuracy/F1 (pairs, not
    questions), timings and a best-epoch column have no per-question file."""
    models = {row["label"]: row.get("model") for row in table["rows"]}
    compared = {models[label] for pair in compared_pairs(table) for label in pair}
    keeps_last = (
        bool(compared)
        and any(c.get("protocol") == "last" for c in table["columns"])
        and all(_keeps_last(config, m) is not False for m in compared)
    )
    return [
        c
        for c in table["columns"]
        if c["metric"] in METRICS
        and (c.get("protocol", "dev") == "dev" or (c.get("protocol") == "last" and keeps_last))
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


def check_significance_rows(paper: str, table: dict) -> None:
    """The rows a table's ``baseline`` and ``claims`` name must be rows of it, with runs: refused
    while the DAG is built, naming the spec file, the table and the label."""
    where = f"{papers_dir() / f'{paper}.yaml'}: table {table['id']}"
    models = {row["label"]: row.get("model") for row in table.get("rows", [])}
    named = [("baseline", table["baseline"])] if "baseline" in table else []
    for claim in table.get("claims", []):
        try:
            better, worse = claim_pair(claim)
        except ConfigError as e:
            raise ConfigError(f"{where}: {e}") from None
        if better == worse:
            raise ConfigError(f"{where}: claim {claim!r} compares a row with itself")
        named += [(f"claim {claim!r}", better), (f"claim {claim!r}", worse)]
    for key, label in named:
        if label not in models:
            raise ConfigError(
                f"{where}: {key} names {label!r}, not a row of the table (rows: {', '.join(map(repr, models))})"
            )
        if not models[label]:
            raise ConfigError(
                f"{where}: {key} names {label!r}, a row kept as published (no model): it has no runs to test"
            )


def spec_figure(paper: str, figure_id: str) -> dict:
    """A figure's spec, with ``paper`` set (a preset's ``papers.<paper>.sweeps`` is looked up by it)."""
    for fig in load_paper(paper).get("figures", []):
        if fig["id"] == figure_id:
            return {**fig, "paper": paper}
    raise KeyError(f"papers.{paper}: spec has no figure {figure_id!r}")


def row_models(row: dict) -> list[str]:
    """The models a metrics table row runs: its ``model`` and its per-dataset ``models``."""
    return [m for m in [row.get("model"), *row.get("models", {}).values()] if m]


def cell_model(row: dict, col: dict) -> str | None:
    """The model a row runs on a column's dataset (the spec's name): the row's ``models`` entry for
    it where there is one (null: no model of the row applies there), else the row's ``model``."""
    return row.get("models", {}).get(col["dataset"], row.get("model"))


def not_applicable(row: dict, col: dict) -> bool:
    """A cell of a row with runs where none of its models applies: rendered n/a (a row without
    any model is a row kept as published)."""
    return cell_model(row, col) is None and bool(row_models(row))


def table_cells(config: dict, table: dict) -> list[tuple[dict, dict, str]]:
    """(row, column, resolved dataset) for every cell that is run; the row's ``model`` is the
    cell's (``cell_model``), so a row may run another model on one dataset."""
    datasets = {col["dataset"] for col in table["columns"]}
    for row in table["rows"]:
        if unknown := sorted(set(row.get("models", {})) - datasets):  # a typo would silently run `model`
            raise ConfigError(
                f"table {table.get('id')}: row {row['label']!r}: models names {', '.join(unknown)}, "
                f"not a dataset of the table's columns ({', '.join(sorted(datasets))})"
            )
    return [
        ({**row, "model": model}, col, dataset_name(config, col["dataset"]))
        for row in table["rows"]
        for col in table["columns"]
        if (model := cell_model(row, col))
    ]


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


def figure_metrics_runs(config: dict, figure: dict) -> list[Run]:
    """``metrics_runs`` of a figure (a heatmap's: its table's)."""
    if figure["kind"] == "heatmap":
        table = figure_table(figure)
        return kind_of(table).metrics_runs(config, table)
    return reading_metrics(_figure_inputs(config, figure), figure_runs(config, figure))


def reading_metrics(files: list[str], found: list[Run]) -> list[Run]:
    """The runs of ``found`` whose metrics.json is one of ``files``."""
    read = set(files)
    return [r for r in found if f"{r.dir}/metrics.json" in read]


def with_run_files(files: list[str], found: list[Run]) -> list[str]:
    """``files`` and the run.trec and processed dataset of each run of ``found`` (``TableKind.metrics_runs``): a table
    or figure shows a run's metrics only as its run file gives them."""
    return list(dict.fromkeys(files + [f for r in found for f in (f"{r.dir}/run.trec", processed_dir(r.dataset))]))


def significance_inputs(config: dict, table: dict) -> list[str]:
    """What a table's paired tests read (only a table with a ``baseline`` or ``claims``): the
    run.trec of every run of the compared rows, at every point of an lr grid (dev chooses among
    them), and the processed datasets of the tested columns (the labels)."""
    pairs, columns = compared_pairs(table), significance_columns(config, table)
    if not pairs or not columns:
        return []
    models = {row["label"]: row.get("model") for row in table["rows"]}
    compared = dict.fromkeys(models[label] for pair in pairs for label in pair)
    datasets = list(dict.fromkeys(dataset_name(config, c["dataset"]) for c in columns))
    trec = sorted(
        {r for m in compared for ds in datasets for _, v in grid_points(config, m) for r in runs(config, ds, v)}
    )
    protocols = dict.fromkeys(c.get("protocol", "dev") for c in columns)
    files = dict.fromkeys(run_file(config, r, p) for r in trec for p in protocols)
    return list(files) + [processed_dir(ds) for ds in datasets]


def spec_seed(config: dict, spec: dict, models: list[str]) -> int:
    """The one seed a single-run figure or table shows: the spec's ``seed``, else the first; it
    must be a seed of every model."""
    seed = spec.get("seed", 1)
    for model in models:
        known = seeds(config, Variant(model))
        if seed not in known:
            raise ConfigError(f"{spec['id']}: seed {seed} is not one of {model}'s seeds {known}")
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


def figure_models(figure: dict) -> list[str]:
    """The params.yaml models a figure reads (a sweep: the base of its derived runs), in spec order."""
    if figure["kind"] == "attention_maps":
        return [figure["model"]]
    if figure["kind"] == "sweep":
        swept = [p["model"] for p in figure["points"]] if "points" in figure else [figure["base_model"]]
        return list(dict.fromkeys([*swept, figure["reference_model"]]))
    if figure["kind"] == "heatmap":
        table = figure_table(figure)
        return kind_of(table).models(table)
    return list(dict.fromkeys([*figure["models"], *filter(None, [figure.get("reference_model")])]))


def figure_runs(config: dict, figure: dict) -> list[Run]:
    """The runs a figure reads, by kind."""
    kind = figure["kind"]
    if kind not in FIGURE_RUN_FILES:
        raise ConfigError(f"figure {figure['id']}: unknown kind {kind!r}; known: {', '.join(FIGURE_RUN_FILES)}")
    if kind == "heatmap":
        table = figure_table(figure)
        return kind_of(table).runs(config, table)
    ds = dataset_name(config, figure["dataset"])
    if kind == "attention_maps":
        return [Run(ds, Variant(figure["model"]), spec_seed(config, figure, figure_models(figure)))]
    if kind == "sweep":
        variants = [v for _, v in sweep_models(config, figure)] + [Variant(figure["reference_model"])]
    else:
        variants = [Variant(m) for m in figure_models(figure)]
    return sorted({r for v in variants for r in runs(config, ds, v)})


def figure_table(figure: dict) -> dict:
    """The metrics table of its paper whose cells a heatmap figure draws (spec key ``table``)."""
    table = spec_table({}, figure["paper"], figure["table"])
    if not kind_of(table).metric_grid:
        raise ConfigError(
            f"figure {figure['id']}: table {figure['table']!r} is of kind {kind_of(table).name!r}; "
            "a heatmap draws a metrics table"
        )
    return table


def figure_inputs(config: dict, figure: dict) -> list[str]:
    """``_figure_inputs``, with the run file and labels of every metrics.json read (``with_run_files``)."""
    if figure["kind"] == "heatmap":
        table = figure_table(figure)
        return kind_of(table).inputs(config, table)
    return with_run_files(_figure_inputs(config, figure), figure_metrics_runs(config, figure))


def _figure_inputs(config: dict, figure: dict) -> list[str]:
    files = [f"{r.dir}/{name}" for r in figure_runs(config, figure) for name in FIGURE_RUN_FILES[figure["kind"]]]
    if figure["kind"] in ("sweep", "accuracy_bars"):
        splits = figure["splits"] if figure["kind"] == "sweep" else [figure["split"]]
        files += dict.fromkeys(
            value_file(r, split, figure["metric"], figure.get("protocol", "dev"))
            for r in figure_runs(config, figure)
            for split in splits
        )
    if figure["kind"] in FIGURES_READING_DATA:
        files.append(processed_dir(dataset_name(config, figure["dataset"])))
    if "reference_published" in figure or "published_table" in figure:
        files.append(PUBLISHED_RESULTS)
    return files


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


def paper_items(config: dict, paper: str) -> tuple[list[dict], list[dict]]:
    """The specs of the tables and figures the preset asks of a paper; a paper without a
    ``tables`` (``figures``) list asks for all of its spec's."""
    spec, wanted = load_paper(paper), config["papers"][paper]
    tables = [spec_table(config, paper, t) for t in wanted.get("tables", [t["id"] for t in spec.get("tables", [])])]
    figures = [spec_figure(paper, f) for f in wanted.get("figures", [f["id"] for f in spec.get("figures", [])])]
    return tables, figures


def paper_outputs(config: dict, papers: list[str] | None = None) -> list[str]:
    """The tables' and figures' files of the papers (default: every paper the preset asks for)."""
    out = []
    for paper in papers or config["papers"]:
        tables, figures = paper_items(config, paper)
        out += [f"results/tables/{paper}/{t['id']}.{ext}" for t in tables for ext in TABLE_EXTENSIONS]
        out += [f"figures/{paper}/{f['id']}.{ext}" for f in figures for ext in FIGURE_EXTENSIONS]
    return out


def paper_inputs(config: dict) -> list[str]:
    """Every file the preset's tables and figures read (run files, statistics, processed data)."""
    files: set[str] = set()
    for paper in config["papers"]:
        tables, figures = paper_items(config, paper)
        files.update(f for t in tables for f in kind_of(t).inputs(config, t))
        files.update(f for fig in figures for f in figure_inputs(config, fig))
    return sorted(files)


def paper_runs(config: dict) -> list[Run]:
    """Every run the preset's tables and figures read."""
    found: set[Run] = set()
    for paper in config["papers"]:
        tables, figures = paper_items(config, paper)
        found.update(r for t in tables for r in kind_of(t).runs(config, t))
        found.update(r for fig in figures for r in figure_runs(config, fig))
    return sorted(found)
