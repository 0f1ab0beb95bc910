"""Paper tables: seeds aggregated per cell, rendered beside the published value.

A cell is "ours" = mean ± sample std over seeds (n shown), from each run's metrics.json
(selected on dev). It is flagged (†) when |ours − published| > max(tolerance, 2·std);
tolerance is 1 point on a 0–100 scale (0.01 on a 0–1 scale, as the paper prints it).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ansel.targets import run_dir, seeds, table_cells


def published_lookup(csv_path: Path, paper: str, table: str) -> dict[tuple, float]:
    df = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    df = df[(df.paper == paper) & (df.table == table)]
    return {(r.dataset, r.split, r.model, r.metric): float(r.value) for r in df.itertuples()}


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
                for s in seeds(config):
                    path = Path(run_dir(resolved, row["model"], s)) / "metrics.json"
                    metrics = json.loads(path.read_text())
                    values.append(metrics[col["split"]][col["metric"]])
            scale = 100.0 if not math.isnan(pub) and pub > 1.0 else 1.0
            v = np.asarray(values, dtype=float) * scale
            mean = float(v.mean()) if len(v) else math.nan
            std = float(v.std(ddof=1)) if len(v) > 1 else (0.0 if len(v) else math.nan)
            tol = 1.0 if scale == 100.0 else 0.01
            differs = bool(len(v) and not math.isnan(pub) and abs(mean - pub) > max(tol, 2 * std))
            records.append({"row": row["label"], "model": row.get("model") or "", "dataset": col["dataset"],
                            "run_dataset": resolved if key in run_cells else "", "split": col["split"],
                            "metric": col["metric"], "mean": mean, "std": std, "n": len(v),
                            "published": pub, "differs": differs})
    return pd.DataFrame.from_records(records)


def _fmt(x: float, digits: int) -> str:
    return "—" if math.isnan(x) else f"{x:.{digits}f}"


def pivot(cells: pd.DataFrame) -> pd.DataFrame:
    """Rows = table rows; per column two entries: ours (mean ± std, n) and published."""
    out = {}
    for r in cells.itertuples():
        digits = 2 if (r.published > 1.0 or r.mean > 1.0) else 4
        ours = "—" if r.n == 0 else f"{_fmt(r.mean, digits)} ± {_fmt(r.std, digits)} (n={r.n}){' †' if r.differs else ''}"
        col = f"{r.dataset} {r.split} {r.metric}"
        out.setdefault(r.row, {})[f"{col} ours"] = ours
        out[r.row][f"{col} published"] = _fmt(r.published, digits)
    return pd.DataFrame.from_dict(out, orient="index")


def render(cells: pd.DataFrame, table: dict, notes: list[str], prefix: Path) -> None:
    prefix.parent.mkdir(parents=True, exist_ok=True)
    cells.to_csv(prefix.with_suffix(".csv"), index=False)
    wide = pivot(cells)
    caption = table.get("caption", table["id"])
    all_notes = list(table.get("notes", [])) + notes + [
        "ours = mean ± sample std over seeds, model selected on dev; † = differs from published by more than "
        "max(1 point, 2·std)."]
    md = [f"**{caption}**", "", wide.to_markdown(), ""]
    md += [f"- {n}" for n in all_notes]
    prefix.with_suffix(".md").write_text("\n".join(md) + "\n")
    tex = wide.to_latex(escape=True, caption=caption, label=f"tab:{table['id']}")
    tex += "".join(f"% {n}\n" for n in all_notes)
    prefix.with_suffix(".tex").write_text(tex)
