"""Paper tables: seeds aggregated per cell, rendered beside the published value.

A cell is "ours" = mean ± sample std over seeds (n shown), from each run's metrics.json
(selected on dev; a timing from its timings file, ``ansel.targets.metric_file``), or for a column
with ``protocol: last`` from the last epoch of each run's log.csv (MatchZoo's protocol: the final
iteration, no selection); a model with an lr grid shows the grid point best on dev (``grid_choice``).
It is flagged (†) when |ours − published| > max(tolerance, 2·std), and only where the two are one
cell (``ansel.report.printable.comparable``: the same data, split and metric); a published value of
other data or another split is printed under a header naming its own cell, never under ours.
Tolerance is 1 point on a 0–100 scale (0.01 on a 0–1 scale, as the paper prints it).
The metrics and dataset_stats kinds produce the same cell frame (``CELL_COLUMNS``), so rendering is
shared; every kind writes its files through ``write_table``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd

from ansel.config import root, typo_of
from ansel.data.canonical import Dataset
from ansel.files import write_text_atomic
from ansel.published import METRIC_NAMES, PUBLISHED_KEY, PublishedFileError, metric_key, read_lines
from ansel.report.expected import EXPECTED, expected_split_metric
from ansel.report.printable import PROTOCOL_SUFFIX, Cell, comparable
from ansel.run_files import LogFileError, read_log, rebuild_log, stored
from ansel.specs import Column, Row, TableSpec
from ansel.targets import (
    CONTEXT_PUBLISHED,
    Run,
    Variant,
    benchmark_file,
    grid_points,
    lr_grid,
    metric_file,
    processed_dir,
    runs,
)

# row/column: the rendered table's labels; digits: decimals shown; differs: the † marker; na: no
# model of the row applies to the column's dataset (``ansel.targets.not_applicable``), shown n/a;
# published_cell: the published value's cell where it is not ours (other data or split), else empty.
CELL_COLUMNS = [
    "row",
    "column",
    "model",
    "dataset",
    "run_dataset",
    "split",
    "metric",
    "mean",
    "std",
    "n",
    "published",
    "digits",
    "differs",
    "na",
    "published_cell",
]


def read_values(path: Path, columns: list[str]) -> pd.DataFrame:
    """A CSV file of published values that has at least ``columns`` (``ansel.published.read_lines``
    refuses one that is not, naming it and the line), every field a string ('' where empty; data row
    i is line i + 2 but for blank lines): read as pandas reads it, a line cut short gave empty fields."""
    header, rows = read_lines(path, columns)
    return pd.DataFrame([fields for _, fields in rows], columns=header, dtype=str)


def refuse_duplicate_keys(df: pd.DataFrame, key: list[str], csv_path: Path) -> None:
    """Raise PublishedFileError naming the file, the line numbers (1 = the header) and the key of every
    key that more than one row of ``df`` (read from ``csv_path``, index = data row) holds: a lookup
    keeps one of them, so an edit to the other would be silently shadowed."""
    dup = df[df.duplicated(key, keep=False)]
    if dup.empty:
        return
    groups = [
        f"lines {', '.join(str(i + 2) for i in rows.index)}: " + ", ".join(f"{k}={v!r}" for k, v in zip(key, k_values))
        for k_values, rows in dup.groupby(key, sort=False)
    ]
    raise PublishedFileError(
        f"{csv_path}: duplicate key ({', '.join(key)}) in {len(groups)} place(s); keep one row of each: "
        + "; ".join(groups)
    )


def number(csv_path: Path, index: int, value: str) -> float:
    """The value of data row ``index`` of ``csv_path`` as a number, else PublishedFileError naming its line."""
    try:
        return float(value)
    except ValueError:  # the file's line: its header is line 1
        raise PublishedFileError(f"{csv_path}, line {index + 2}: value {value!r} is not a number") from None


def unknown_value(csv_path: Path, index: int, column: str, value: str, known: Collection[str]) -> PublishedFileError:
    """The error for data row ``index`` whose ``column`` is none of ``known``: the nearest as a typo."""
    return PublishedFileError(
        f"{csv_path}, line {index + 2}: unknown {column} {value!r}{typo_of(value, sorted(set(known)))}; "
        f"known: {', '.join(sorted(set(known)))}"
    )


def published_values(csv_path: Path) -> dict[tuple, float]:
    """{key (``PUBLISHED_KEY``, the metric as ``metric_key`` spells it): value} of every row of a
    published values file; a key two rows hold is an error, as is a value that is not a number."""
    df = read_values(csv_path, PUBLISHED_KEY + ["value"])
    df = df.assign(metric=[metric_key(m) for m in df.metric])
    refuse_duplicate_keys(df, PUBLISHED_KEY, csv_path)
    return {tuple(getattr(r, c) for c in PUBLISHED_KEY): number(csv_path, r.Index, r.value) for r in df.itertuples()}


def published_lookup(csv_path: Path, paper: str, table: str) -> dict[tuple, float]:
    """{(dataset, split, row label, metric): value} of one published table (``published_values``)."""
    return {key[2:]: v for key, v in published_values(csv_path).items() if key[:2] == (paper, table)}


def run_metric(run: Run, split: str, metric: str) -> float:
    """One metric of a run (from its metrics.json or timings file), with an error naming the file
    when it is missing (the ``table`` and ``figure`` verbs check every metrics.json they read against
    its run file first: ``ansel.evaluation.agreement.check_runs``)."""
    path = Path(metric_file(run, split, metric))
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; the run must be trained first (snakemake {path})")
    try:
        metrics = json.loads(path.read_text())
    except ValueError as e:
        raise ValueError(f"{path}: not valid JSON ({e}); delete it and rerun its target (snakemake {path})") from None
    if metric not in metrics.get(split, {}):
        raise KeyError(
            f"{path}: no {split}/{metric}; it has {', '.join(f'{s}/{m}' for s in metrics for m in metrics[s])}"
        )
    return metrics[split][metric]


def run_log(run: Run, columns: list[str]) -> pd.DataFrame:
    """A run's log.csv (one row per epoch; one not whole is refused: ``ansel.run_files.read_log``); one
    without an epoch or without one of ``columns`` is a LogFileError naming the file and the columns
    (test_<metric> columns exist only for a model with ``train.monitor_splits: [test]``)."""
    path = Path(run.dir) / "log.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; the run must be trained first (snakemake {path})")
    log = read_log(path)
    missing = [c for c in columns if c not in log]
    if missing or log.empty:
        lacks = f"no column{'s' * (len(missing) > 1)} {', '.join(map(repr, missing))}" if missing else "no epoch"
        if log.empty:  # only a model that trains no epoch logs a header alone
            fix = "its model trains no epoch (a random or lexical ranker): it has no per-epoch value"
        elif any(c.startswith("test_") for c in missing):
            fix = "test_ columns need the model's train.monitor_splits: [test] (retrain the run with it)"
        else:
            fix = rebuild_log(path)
        raise LogFileError(f"{path}: {lacks} (its columns: {', '.join(log.columns)}); {fix}")
    return log


def last_epoch_metric(run: Run, split: str, metric: str) -> float:
    """``split``/``metric`` at the run's last epoch (its log.csv's last row)."""
    return _epoch_metric(run, split, metric, best_by=None)


def best_split_epoch_metric(run: Run, split: str, metric: str) -> float:
    """``split``/``metric`` at the evaluation with the best P@1 on ``split`` itself (the first of
    ties): the MTAS authors' protocol, which reports the evaluation with the highest test Top-1
    (upstream-notes §1.5); after every epoch, or every ``train.monitor_every`` steps (the authors'
    cadence), whose best evaluation of each epoch is that epoch's row."""
    return _epoch_metric(run, split, metric, best_by="P@1")


def _epoch_metric(run: Run, split: str, metric: str, best_by: str | None) -> float:
    """``split``/``metric`` of one epoch of the run's log.csv: the last, or the best on
    ``split``/``best_by``. A run that trained no epoch (no trainable parameters: random, lexical
    rows) has one state, the one metrics.json scored."""
    path = Path(run.dir) / "log.csv"
    if path.exists() and read_log(path).empty:
        return run_metric(run, split, metric)
    log = run_log(run, [f"{split}_{metric}"] + ([f"{split}_{best_by}"] if best_by else []))
    if not best_by:
        return float(log[f"{split}_{metric}"].iloc[-1])
    # an epoch row without an evaluation is empty (train.monitor_every: evaluated every N steps)
    by = log[f"{split}_{best_by}"].to_numpy(dtype=float)
    if np.isnan(by).all():
        raise LogFileError(f"{path}: no epoch scored {split} (its {split}_{best_by} column is empty)")
    return float(log[f"{split}_{metric}"].iloc[int(np.nanargmax(by))])


def run_value(run: Run, split: str, metric: str, protocol: str = "dev") -> float:
    """A run's ``split``/``metric`` under a protocol (``ansel.targets.value_file`` names the file):
    ``dev`` the checkpoint selected on dev, ``last`` the last epoch, ``best_split`` the epoch best
    on the column's own split by P@1 (selection on test, as the MTAS authors report)."""
    if protocol == "last":
        return last_epoch_metric(run, split, metric)
    if protocol == "best_split":
        return best_split_epoch_metric(run, split, metric)
    return run_metric(run, split, metric)


def split_run(path: Path, split: str) -> pd.DataFrame:
    """(qid, aid, rank, score) of one split of a run.trec, whose qids are written ``<split>:<qid>``;
    ranked by the written scores as the evaluation ranks them (trec_eval's ties), not by the file's
    rank column, which could say otherwise."""
    from ansel.evaluation.metrics import rank, read_trec_run

    if not stored(path).exists():
        raise FileNotFoundError(f"{path}: missing; the run must be trained first (snakemake {path})")
    run = read_trec_run(path)
    rows = run[run.qid.str.startswith(f"{split}:")]
    if rows.empty:
        found = sorted(run.qid.str.partition(":")[0].unique())
        raise KeyError(f"{path}: no rows of split {split!r}; it has {', '.join(found)}")
    return rank(rows.assign(qid=rows.qid.str.slice(len(split) + 1))[["qid", "aid", "score"]])[
        ["qid", "aid", "rank", "score"]
    ]


def split_labels(data: Dataset, split: str, where: str) -> pd.DataFrame:
    if split not in data.splits:
        raise KeyError(f"{where}: dataset {data.name} has no split {split!r}; it has {', '.join(data.splits)}")
    return data.splits[split]


def grid_choice(config: dict, model: str, dataset: str) -> tuple[float, Variant, float]:
    """(lr, variant run, dev mean) of the point of the model's lr grid whose mean over seeds of its
    ``select_metric`` on its dev split is best (never a test split); ties go to the earlier point.
    A model without a grid is its one point (dev mean NaN: nothing to choose)."""
    points = grid_points(config, model)
    if len(points) == 1:
        return (*points[0], math.nan)
    grid = lr_grid(config, model)
    assert grid is not None  # a model of more than one point has a grid
    scored = [
        (float(np.mean([run_metric(r, grid.split, grid.metric) for r in runs(config, dataset, v)])), lr, v)
        for lr, v in points
    ]
    dev, lr, v = max(scored, key=lambda t: t[0])  # max keeps the first of equal values
    return lr, v, dev


def grid_notes(config: dict, table: TableSpec) -> list[str]:
    """One note per (dataset, grid): the lr each row's cells show ("every row" when all agree);
    one note for all one-point grids, where nothing is chosen."""
    chosen: dict[tuple, dict[str, str]] = {}  # key -> {row label: lr}, in row order
    for cell in table.cells:
        model, ds = cell.model, cell.dataset
        if grid := lr_grid(config, model):
            key = (None, None, None, grid.lrs) if len(grid.lrs) == 1 else (ds, grid.split, grid.metric, grid.lrs)
            chosen.setdefault(key, {})[cell.row.label] = f"{grid_choice(config, model, ds)[0]:g}"
    notes = []
    for (ds, split, metric, grid), rows in chosen.items():
        if len(grid) == 1:
            notes.append(f"lr {grid[0]:g} for every row (a one-point grid: nothing chosen on dev)")
            continue
        shown = (
            f"every row {next(iter(rows.values()))}"
            if len(rows) > 1 and len(set(rows.values())) == 1
            else "; ".join(f"{label} {lr}" for label, lr in rows.items())
        )
        notes.append(
            f"lr chosen per row on {ds} {split} {metric} (mean over seeds) from the grid "
            f"{{{', '.join(f'{lr:g}' for lr in grid)}}}: {shown}"
        )
    return notes


def protocol_notes(table: TableSpec, benchmark: dict | None = None) -> list[str]:
    """What a "(last epoch)", "(best epoch on it)" or "(benchmark)" column is, when the table has one
    (``benchmark``: the table's step_times file)."""
    protocols = {c.protocol for c in table.columns}
    notes = []
    if benchmark:
        sizes = sorted({(m["batch_size"], m["max_len_q"], m["max_len_a"]) for m in benchmark["models"].values()})
        notes.append(
            "(benchmark) columns: each row's training step (forward, backward, optimizer) timed alone by "
            f"`ansel step-times` on {benchmark['device']} ({benchmark['threads']} threads): batch and lengths "
            f"{', '.join(f'{b} x {q}/{a}' for b, q, a in sizes)} (question/answer; every text that long, "
            f"none trimmed), a warm-up step excluded, mean ± std over {benchmark['rounds']} rounds of "
            f"{benchmark['batches']} steps, the rows taking turns; the paper's seconds are on its own "
            "hardware: compare ratios"
        )
        protocols.discard("benchmark")
    if "last" in protocols:
        notes.append(
            "(last epoch) columns = the paper's protocol: each run's value at its last training epoch "
            "(log.csv), no selection (MatchZoo reports the final iteration)"
        )
    if "best_split" in protocols:
        notes.append(
            "(best epoch on it) columns = the paper's protocol: each run's value at the evaluation whose P@1 "
            "on that same split is highest (log.csv; the split scored after every epoch, or every "
            "train.monitor_every steps where a model sets it: the authors' cadence), i.e. selected on the "
            "split it reports, as the MTAS authors selected on test Top-1"
        )
    if protocols - {"dev"}:
        notes.append(
            "the other columns use the checkpoint selected on dev; published values are the same rows beside "
            "both, so the gap between the two column groups is what the selection protocol is worth"
        )
    return notes


def benchmark(table: TableSpec) -> dict | None:
    """The table's step_times file (``ansel.targets.benchmark_file``), None where no column is timed so."""
    if not any(c.protocol == "benchmark" for c in table.columns):  # a metrics table's columns
        return None
    path = Path(benchmark_file(table.paper, table.id))
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; time the table's rows first (snakemake {path})")
    return json.loads(path.read_text())


# context rows (``context: true`` in a spec), not the paper's: their published values are other sources',
# in workflow/papers/context_results.csv (dataset, split, model = the params.yaml model, metric, value, source)
_CONTEXT_COLUMNS = ["dataset", "split", "model", "metric", "value", "source"]


def context_results() -> pd.DataFrame:
    """workflow/papers/context_results.csv, its columns checked (naming the file)."""
    return read_values(root() / CONTEXT_PUBLISHED, _CONTEXT_COLUMNS)


def context_lookup() -> dict[tuple, float]:
    """{(dataset, split, model, metric): value} of every context result."""
    return {(r.dataset, r.split, r.model, r.metric): float(r.value) for r in context_results().itertuples()}


def eval_candidates(config: dict, dataset: str, split: str) -> tuple[pd.DataFrame, str]:
    """A (resolved) dataset's candidates of ``split`` as its runs' evaluation scores them (the
    dataset's ``eval`` sample, when it asks for one), and its ``no_positive`` rule; read from
    data/processed/<dataset>."""
    from ansel.data.batches import sample_split
    from ansel.data.canonical import Dataset

    data = Dataset.load(processed_dir(dataset))
    if split not in data.splits:
        raise KeyError(f"{processed_dir(dataset)}: no split {split!r}; it has {', '.join(data.splits)}")
    ev = config.get("datasets", {}).get(dataset, {}).get("eval", {})
    cands = data.splits[split]
    if ev.get("sample_questions"):  # the same draw as the runs' (ansel.evaluation.evaluate.eval_data)
        cands = sample_split(cands, ev["sample_questions"], ev.get("sample_seed", 0))
    return cands, ev.get("no_positive", "drop")


def expected_value(config: dict, row: Row, dataset: str, split: str, metric: str) -> float:
    """A computed row's value (``row.expected``) on a (resolved) dataset's split."""
    kind = row.expected
    if kind not in EXPECTED:
        raise KeyError(f"row {row.label!r}: expected {kind!r} is not one of {', '.join(EXPECTED)}")
    cands, no_positive = eval_candidates(config, dataset, split)
    return expected_split_metric(cands, metric, no_positive)


def aggregate(config: dict, table: TableSpec, published: dict[tuple, float]) -> pd.DataFrame:
    """One row per (row label, column): ours mean/std/n over seeds and the published value (looked
    up under the column's ``published_dataset`` and ``published_split``, default its own)."""
    records = []
    run_cells = {(c.row.label, c.column.label): (c.dataset, c.model) for c in table.cells}
    bench = benchmark(table)
    context = context_lookup() if any(row.context for row in table.rows) else {}  # other papers' values, by model

    def published_value(row: Row, col: Column) -> float:
        where = (col.published_dataset, col.published_split)
        return (
            context.get((*where, row.model, col.metric), math.nan)
            if row.context
            else published.get(col.published_cell(row.label), math.nan)
        )

    # ranking and classification metrics (0-1) are printed as percentages in a column whose published
    # values are (every row of it alike, those without a published value too); others (seconds) never are
    percent_columns = {
        col.label
        for col in table.columns
        if col.metric in METRIC_NAMES.values() and any(published_value(row, col) > 1.0 for row in table.rows)
    }
    for row in table.rows:
        for col in table.columns:
            key = (row.label, col.label)
            pub = published_value(row, col)
            values = []
            resolved, model = run_cells.get(key, (col.dataset, None))
            if key in run_cells and col.protocol == "benchmark":
                assert bench is not None  # a benchmark column's table has one
                values = bench["models"][model]["seconds_per_batch"]
            elif key in run_cells:
                _, variant, _ = grid_choice(config, model, resolved)
                values = [run_value(r, col.split, col.metric, col.protocol) for r in runs(config, resolved, variant)]
            elif row.expected:  # computed from the candidate pools, not run (ansel.report.expected)
                resolved = col.run_dataset
                values = [expected_value(config, row, resolved, col.split, col.metric)]
            scale = 100.0 if key[1] in percent_columns else 1.0
            v = np.asarray(values, dtype=float) * scale
            mean = float(v.mean()) if len(v) else math.nan
            std = float(v.std(ddof=1)) if len(v) > 1 else (0.0 if len(v) else math.nan)
            tol = 1.0 if scale == 100.0 else 0.01
            protocol = col.protocol
            pub_cell = Cell(col.published_dataset, col.published_split, col.published_metric, protocol)
            one_cell = comparable(Cell(resolved, col.split, col.metric, protocol), pub_cell, config["datasets"])
            differs = bool(one_cell and len(v) and not math.isnan(pub) and abs(mean - pub) > max(tol, 2 * std))
            records.append(
                {
                    "row": row.label,
                    "column": key[1],
                    "model": model or "",
                    "dataset": col.dataset,
                    "run_dataset": resolved if key in run_cells or row.expected else "",
                    "split": col.split,
                    "metric": col.metric,
                    "mean": mean,
                    "std": std,
                    "n": len(v),
                    "published": pub,
                    "differs": differs,
                    "na": row.not_applicable(col),
                    "published_cell": "" if one_cell or math.isnan(pub) else f"{pub_cell}{PROTOCOL_SUFFIX[protocol]}",
                }
            )
    cells = pd.DataFrame.from_records(records, columns=CELL_COLUMNS)
    # one precision per column: 2 decimals where it is in percent or every value of it exceeds 1 (seconds
    # of the paper's hardware), else 4 (ours in seconds beside the paper's 1.28 s)
    smallest = cells.melt("column", ["mean", "published"]).dropna().groupby("column")["value"].min()
    cells["digits"] = np.where(cells.column.isin(percent_columns) | cells.column.map(smallest).gt(1.0), 2, 4)
    return cells


def _fmt(x: float, digits: int) -> str:
    return "—" if math.isnan(x) else f"{x:.{digits}f}"


def _ours(r, show_n: bool = True) -> str:
    """mean ± std (n, unless ``show_n`` is off: every row has the same seed count, said once in the
    notes), then the significance mark against the baseline row (ansel.report.significance: a
    ``mark`` column, only in tables that declare a baseline) and †."""
    if r.n == 0:
        return "n/a" if r.na is True else "—"  # na is NaN in a dataset_stats frame
    spread = f" ± {_fmt(r.std, r.digits)}" + (f" (n={r.n})" if show_n else "") if r.n > 1 else ""
    marks = [getattr(r, "mark", ""), "†" if r.differs else ""]
    return " ".join([f"{_fmt(r.mean, r.digits)}{spread}", *filter(None, marks)])


def ours_headers(cells: pd.DataFrame) -> dict[str, str]:
    """{column: the head of its "ours" values}: the column itself, or where a preset replaced its
    dataset (``dataset_alias``: every value of it comes from one other dataset), the column with the
    data the values come from named first, "<stand-in> (stand-in for <dataset>) <split> <metric>".
    Published values keep the column's own (the paper's) dataset."""
    heads = {}
    for column, group in cells.groupby("column", sort=False):
        datasets = set(group.dataset)
        resolved = set(group.run_dataset.dropna()) - {""}
        ds = next(iter(datasets))
        if len(datasets) == 1 and len(resolved) == 1 and resolved != datasets and str(column).startswith(f"{ds} "):
            heads[column] = f"{next(iter(resolved))} (stand-in for {ds}){str(column)[len(ds) :]}"
        else:
            heads[column] = column
    return heads


def pivot(cells: pd.DataFrame, show_n: bool = True) -> pd.DataFrame:
    """Rows = table rows; per column ours (mean ± std, n) and, for a column with any published
    value, published beside it (a table with none has only ours, headed by the column). The head
    of ours names the data they come from where the preset replaced the column's dataset
    (``ours_headers``)."""
    with_published = set(cells.column[cells.published.notna()])
    suffix = " ours" if with_published else ""
    heads = ours_headers(cells)
    # a published value of another cell (other data or split) is headed by its own cell, never by ours
    other: dict[str, str] = {}
    for r in cells.itertuples():
        if isinstance(r.published_cell, str) and r.published_cell:
            other.setdefault(r.column, r.published_cell)
    out: dict[str, dict[str, str]] = {}
    for r in cells.itertuples():
        out.setdefault(r.row, {})[f"{heads[r.column]}{suffix}"] = _ours(r, show_n)
        if r.column in with_published:
            head = f"{other[r.column]} published (another cell: no †)" if r.column in other else f"{r.column} published"
            out[r.row][head] = _fmt(r.published, r.digits)
    return pd.DataFrame.from_dict(out, orient="index")


def nested(cells: pd.DataFrame, provenance: dict[tuple, dict] | None = None) -> dict:
    """{row: {column: {mean, std, n, published[, provenance]}}} (NaN as null): the table as DVC
    metrics; ``provenance`` (``ansel.report.provenance.table_provenance``) by (row, column)."""

    def num(x):
        return None if isinstance(x, float) and math.isnan(x) else x

    out: dict[str, dict] = {}
    for r in cells.itertuples():
        cell = {
            "mean": num(float(r.mean)),
            "std": num(float(r.std)),
            "n": int(r.n),
            "published": num(float(r.published)),
        }
        if provenance and (r.row, r.column) in provenance:
            cell["provenance"] = provenance[(r.row, r.column)]
        out.setdefault(r.row, {})[r.column] = cell
    return out


def render(
    cells: pd.DataFrame,
    table: TableSpec,
    notes: list[str],
    prefix: Path,
    legend: str | None = None,
    extra_json: dict | None = None,
    provenance: dict[tuple, dict] | None = None,
    show_n: bool = True,
) -> None:
    """prefix.{csv,md,tex,html,json}; ``legend`` explains "ours" and † (default: the seed aggregate);
    ``extra_json``: keys the .json holds beside the rows (a table's "significance"); ``provenance``
    per cell into the .json; ``show_n``: the seed count in each cell (off: the notes say it once)."""
    legend = legend or "ours = mean ± sample std over seeds, model selected on dev" + (
        "; † = differs from published by more than max(1 point, 2·std), only where the two are one cell "
        "(same data, split and metric)."
        if cells.published.notna().any()
        else "."
    )
    write_table(
        cells, pivot(cells, show_n), nested(cells, provenance) | (extra_json or {}), table, notes + [legend], prefix
    )


def write_table(
    long: pd.DataFrame, wide: pd.DataFrame, as_json: dict, table: TableSpec, notes: list[str], prefix: Path
) -> None:
    """prefix.csv (``long``), .md, .tex and .html (``wide``, the caption, the spec's notes and
    ``notes``) and .json (``as_json``, DVC's metrics)."""
    long_csv = long.to_csv(index=False)
    caption = table.caption
    all_notes = list(table.notes) + notes
    md = [f"**{caption}**", "", wide.to_markdown(disable_numparse=True), ""]
    md += [f"- {n}" for n in all_notes]
    tex = wide.to_latex(escape=True, caption=caption, label=f"tab:{table.id}")
    tex += "".join(f"% {n}\n" for n in all_notes)
    # The HTML report shows this fragment (workflow/report/workflow.rst inlines it); the charset
    # keeps ± and † readable where it is opened on its own.
    items = "".join(f"<li>{escape(n)}</li>" for n in all_notes)
    html = (
        f'<meta charset="utf-8">\n<p><strong>{escape(caption)}</strong></p>\n'
        f"{wide.to_html(escape=True)}\n<ul>{items}</ul>\n"
    )
    for suffix, text in (
        (".csv", long_csv),
        (".md", "\n".join(md) + "\n"),
        (".tex", tex),
        (".html", html),
        (".json", json.dumps(as_json, indent=1, ensure_ascii=False) + "\n"),
    ):
        write_text_atomic(prefix.with_suffix(suffix), text)
