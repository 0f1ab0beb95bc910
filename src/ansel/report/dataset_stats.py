"""Tables of kind ``dataset_stats``: our canonical datasets' statistics beside the papers'.

Spec: ``columns`` are statistic names of ``ansel.data.stats.STATISTICS``; each row is
``{label, dataset, splits, published: {paper, table, dataset}}`` and renders one line per
split plus ``all`` (the whole corpus, where papers give vocabulary and average lengths).
``published`` says which rows of workflow/papers/dataset_stats_published.csv describe the
same protocol (default: this paper, this table, the row's dataset); cells join on
(split, statistic). Ours are read from ``results/stats/<dataset>.csv`` (rule dataset_stats).
A value is flagged (†) when, rounded to the published value's printed decimals, it differs.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from pathlib import Path

import pandas as pd

from ansel.config import ConfigError
from ansel.data.stats import STATISTICS
from ansel.report.tables import CELL_COLUMNS, number, read_values, refuse_duplicate_keys, unknown_value
from ansel.specs import Row, TableSpec
from ansel.targets import stats_file

COUNTS = {"questions", "pairs", "positives", "negatives", "q_with_positive", "q_with_both", "vocabulary"}


def published_stats(csv_path: Path, datasets: Collection[str], splits: Collection[str]) -> pd.DataFrame:
    """The published statistics: (paper, table, dataset, split, statistic) -> value text ('' = not found).
    A line whose dataset is none of ``datasets`` (configured or aliased names), whose split is none of
    ``splits`` (any dataset's, or ``all``) or whose statistic is unknown matches no cell: refused naming
    the line, as are a value that is not a number and a key another line holds."""
    key = ["paper", "table", "dataset", "split", "statistic"]
    df = read_values(csv_path, [*key, "value"])
    refuse_duplicate_keys(df, key, csv_path)
    known = {"dataset": datasets, "split": ["all", *splits], "statistic": STATISTICS}
    for r in df.itertuples():
        for column, values in known.items():
            if getattr(r, column) not in values:
                raise unknown_value(csv_path, r.Index, column, getattr(r, column), values)
        if r.value:  # '' = not published
            number(csv_path, r.Index, r.value)
    return df.set_index(key).value


def published_source(table: TableSpec, row: Row) -> dict:
    return {"paper": table.paper, "table": table.id, "dataset": row.dataset, **row.published}


def sources_note(table: TableSpec) -> str:
    return "published values: " + "; ".join(
        "{label} from {paper}/{table} ({dataset})".format(label=row.label, **published_source(table, row))
        for row in table.rows
    )


def measured_stats(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; made by rule dataset_stats (snakemake {path})")
    return pd.read_csv(path).set_index("split")


def _differs(ours: float, published: str) -> bool:
    decimals = len(published.partition(".")[2])
    return round(ours, decimals) != float(published)


def aggregate_stats(table: TableSpec, published: pd.Series, stats_dir: Path | None = None) -> pd.DataFrame:
    """One cell per (row, split, statistic): ours (n = 1: one measurement) and the published value."""
    unknown = [c for c in table.statistics if c not in STATISTICS]
    if unknown:
        raise ConfigError(f"table {table.id}: unknown statistic(s) {unknown}; known: {', '.join(STATISTICS)}")
    records = []
    for row in table.rows:
        ds = str(row.run_dataset)  # every dataset_stats row names one (the schema)
        path = Path(stats_file(ds)) if stats_dir is None else Path(stats_dir) / f"{ds}.csv"
        ours = measured_stats(path)
        source = published_source(table, row)
        splits = list(row.splits if row.splits is not None else [s for s in ours.index if s != "all"])
        splits += [] if "all" in splits else ["all"]
        for split in splits:
            if split not in ours.index:
                raise KeyError(
                    f"table {table.id}, row {row.label}: {path} has no split {split!r} (it has {', '.join(ours.index)})"
                )
            for stat in table.statistics:
                value = float(ours.loc[split, stat])
                pub = published.get((source["paper"], source["table"], source["dataset"], split, stat), "")
                records.append(
                    {
                        "row": f"{row.label} {split}",
                        "column": stat,
                        "model": "",
                        "dataset": row.dataset,
                        "run_dataset": ds,
                        "split": split,
                        "metric": stat,
                        "mean": value,
                        "std": 0.0,
                        "n": 1,
                        "published": float(pub) if pub else math.nan,
                        "digits": 0 if stat in COUNTS else 2,
                        "differs": bool(pub) and _differs(value, pub),
                    }
                )
    return pd.DataFrame.from_records(records, columns=CELL_COLUMNS)


LEGEND = (
    "ours = measured on our canonical tables (`all` = every split together); published = the source "
    "named per row; † = differs at the published value's printed precision; — = not published."
)
