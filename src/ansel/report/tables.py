"""Paper tables: seeds aggregated per cell, rendered beside the published value.

A cell is "ours" = mean ± sample std over seeds (n shown), from each run's metrics.json
(selected on dev; a timing from its timings file, ``ansel.targets.metric_file``); a model with an
lr grid shows the grid point best on dev (``grid_choice``).
It is flagged (†) when |ours − published| > max(tolerance, 2·std);
tolerance is 1 point on a 0–100 scale (0.01 on a 0–1 scale, as the paper prints it).
Every table kind produces the same cell frame (``CELL_COLUMNS``), so rendering is shared.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ansel.config import model_config
from ansel.evaluation.metrics import METRICS
from ansel.targets import Run, Variant, grid_points, metric_file, runs, table_cells

# row/column: the rendered table's labels; digits: decimals shown; differs: the † marker.
CELL_COLUMNS = ["row", "column", "model", "dataset", "run_dataset", "split", "metric",
                "mean", "std", "n", "published", "digits", "differs"]


def published_lookup(csv_path: Path, paper: str, table: str) -> dict[tuple, float]:
    df = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    df = df[(df.paper == paper) & (df.table == table)]
    return {(r.dataset, r.split, r.model, r.metric): float(r.value) for r in df.itertuples()}


def run_metric(run: Run, split: str, metric: str) -> float:
    """One metric of a run (from its metrics.json or timings file), with an error naming the file
    when it is missing."""
    path = Path(metric_file(run, split, metric))
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; the run must be trained first (snakemake {path})")
    metrics = json.loads(path.read_text())
    if metric not in metrics.get(split, {}):
        raise KeyError(f"{path}: no {split}/{metric}; it has {', '.join(f'{s}/{m}' for s in metrics for m in metrics[s])}")
    return metrics[split][metric]


def grid_choice(config: dict, model: str, dataset: str) -> tuple[float, Variant, float]:
    """(lr, variant run, dev mean) of the point of the model's lr grid whose mean over seeds of its
    ``select_metric`` on its dev split is best (never a test split); ties go to the earlier point.
    A model without a grid is its one point (dev mean NaN: nothing to choose)."""
    points = grid_points(config, model)
    if len(points) == 1:
        return (*points[0], math.nan)
    train = model_config(config, model)["train"]
    split, metric = train.get("dev_split", "dev"), train["select_metric"]
    scored = [(float(np.mean([run_metric(r, split, metric) for r in runs(config, dataset, v)])), lr, v)
              for lr, v in points]
    dev, lr, v = max(scored, key=lambda t: t[0])  # max keeps the first of equal values
    return lr, v, dev


def grid_notes(config: dict, table: dict) -> list[str]:
    """One note per (dataset, grid): the lr each row's cells show ("every row" when all agree);
    one note for all one-point grids, where nothing is chosen."""
    chosen: dict[tuple, dict[str, str]] = {}  # key -> {row label: lr}, in row order
    for row, _, ds in table_cells(config, table):
        train = model_config(config, row["model"])["train"] if row["model"] in config.get("models", {}) else {}
        if "lr_grid" in train:
            grid = tuple(train["lr_grid"])
            key = (None, None, None, grid) if len(grid) == 1 else (ds, train.get("dev_split", "dev"),
                                                                  train["select_metric"], grid)
            chosen.setdefault(key, {})[row["label"]] = f"{grid_choice(config, row['model'], ds)[0]:g}"
    notes = []
    for (ds, split, metric, grid), rows in chosen.items():
        if len(grid) == 1:
            notes.append(f"lr {grid[0]:g} for every row (a one-point grid: nothing chosen on dev)")
            continue
        shown = (f"every row {next(iter(rows.values()))}" if len(rows) > 1 and len(set(rows.values())) == 1
                 else "; ".join(f"{label} {lr}" for label, lr in rows.items()))
        notes.append(f"lr chosen per row on {ds} {split} {metric} (mean over seeds) from the grid "
                     f"{{{', '.join(f'{lr:g}' for lr in grid)}}}: {shown}")
    return notes


def aggregate(config: dict, paper: str, table: dict, published: dict[tuple, float]) -> pd.DataFrame:
    """One row per (row label, column): ours mean/std/n over seeds and the published value."""
    records = []
    run_cells = {(row["label"], col["dataset"], col["split"], col["metric"]): (row, col, ds)
                 for row, col, ds in table_cells(config, table)}
    for row in table["rows"]:
        for col in table["columns"]:
            key = (row["label"], col["dataset"], col["split"], col["metric"])
            pub = published.get((col["dataset"], col["split"], row["label"], col["metric"]), math.nan)
            values = []
            resolved = col["dataset"]
            if key in run_cells:
                _, _, resolved = run_cells[key]
                _, variant, _ = grid_choice(config, row["model"], resolved)
                values = [run_metric(r, col["split"], col["metric"]) for r in runs(config, resolved, variant)]
            # ranking metrics (0-1) may be printed as percentages; other metrics (seconds) never are
            percent = col["metric"] in METRICS and not math.isnan(pub) and pub > 1.0
            scale = 100.0 if percent else 1.0
            v = np.asarray(values, dtype=float) * scale
            mean = float(v.mean()) if len(v) else math.nan
            std = float(v.std(ddof=1)) if len(v) > 1 else (0.0 if len(v) else math.nan)
            tol = 1.0 if scale == 100.0 else 0.01
            differs = bool(len(v) and not math.isnan(pub) and abs(mean - pub) > max(tol, 2 * std))
            records.append({"row": row["label"], "column": f"{col['dataset']} {col['split']} {col['metric']}",
                            "model": row.get("model") or "", "dataset": col["dataset"],
                            "run_dataset": resolved if key in run_cells else "", "split": col["split"],
                            "metric": col["metric"], "mean": mean, "std": std, "n": len(v),
                            "published": pub, "digits": 2 if (pub > 1.0 or mean > 1.0) else 4,
                            "differs": differs})
    return pd.DataFrame.from_records(records, columns=CELL_COLUMNS)


def _fmt(x: float, digits: int) -> str:
    return "—" if math.isnan(x) else f"{x:.{digits}f}"


def _ours(r) -> str:
    if r.n == 0:
        return "—"
    spread = f" ± {_fmt(r.std, r.digits)} (n={r.n})" if r.n > 1 else ""
    return f"{_fmt(r.mean, r.digits)}{spread}{' †' if r.differs else ''}"


def pivot(cells: pd.DataFrame) -> pd.DataFrame:
    """Rows = table rows; per column two entries: ours (mean ± std, n) and published."""
    out: dict[str, dict[str, str]] = {}
    for r in cells.itertuples():
        out.setdefault(r.row, {})[f"{r.column} ours"] = _ours(r)
        out[r.row][f"{r.column} published"] = _fmt(r.published, r.digits)
    return pd.DataFrame.from_dict(out, orient="index")


def nested(cells: pd.DataFrame) -> dict:
    """{row: {column: {mean, std, n, published}}} (NaN as null): the table as DVC metrics."""
    def num(x):
        return None if isinstance(x, float) and math.isnan(x) else x

    out: dict[str, dict] = {}
    for r in cells.itertuples():
        out.setdefault(r.row, {})[r.column] = {"mean": num(float(r.mean)), "std": num(float(r.std)),
                                               "n": int(r.n), "published": num(float(r.published))}
    return out


def render(cells: pd.DataFrame, table: dict, notes: list[str], prefix: Path, legend: str | None = None) -> None:
    """prefix.{csv,md,tex,json}; ``legend`` explains "ours" and † (default: the seed aggregate)."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    cells.to_csv(prefix.with_suffix(".csv"), index=False)
    wide = pivot(cells)
    caption = table.get("caption", table["id"])
    all_notes = list(table.get("notes", [])) + notes + [legend or (
        "ours = mean ± sample std over seeds, model selected on dev; † = differs from published by more than "
        "max(1 point, 2·std).")]
    md = [f"**{caption}**", "", wide.to_markdown(disable_numparse=True), ""]
    md += [f"- {n}" for n in all_notes]
    prefix.with_suffix(".md").write_text("\n".join(md) + "\n")
    tex = wide.to_latex(escape=True, caption=caption, label=f"tab:{table['id']}")
    tex += "".join(f"% {n}\n" for n in all_notes)
    prefix.with_suffix(".tex").write_text(tex)
    prefix.with_suffix(".json").write_text(json.dumps(nested(cells), indent=1, ensure_ascii=False) + "\n")
