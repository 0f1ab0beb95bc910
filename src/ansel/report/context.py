"""Context rows of a metrics table (``context: true`` in a spec): the lexical baselines the pipeline
computes (``ansel.evaluation.lexical``), not the paper's. Their published values come from other
papers, in workflow/papers/context_results.csv (dataset, split, model = the params.yaml model,
metric, value, source), whatever the paper and table they are shown in."""
from __future__ import annotations

import pandas as pd

from ansel.config import root
from ansel.targets import CONTEXT_PUBLISHED

_COLUMNS = ["dataset", "split", "model", "metric", "value", "source"]


def _results() -> pd.DataFrame:
    path = root() / CONTEXT_PUBLISHED
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in _COLUMNS if c not in df]
    if missing:
        raise KeyError(f"{path}: missing column(s) {', '.join(missing)}; it has {', '.join(df.columns)}")
    return df


def context_rows(table: dict) -> list[dict]:
    return [row for row in table["rows"] if row.get("context")]


def context_lookup() -> dict[tuple, float]:
    """{(dataset, split, model, metric): value} of every context result."""
    return {(r.dataset, r.split, r.model, r.metric): float(r.value) for r in _results().itertuples()}


def context_notes(table: dict) -> list[str]:
    """What the table's context rows are and where their published values come from."""
    rows = context_rows(table)
    if not rows:
        return []
    results = _results()
    results = results[results.dataset.isin({c.get("published_dataset", c["dataset"]) for c in table["columns"]})]
    sources = [f"{row['label']}: {'; '.join(dict.fromkeys(results[results.model == row['model']].source))}"
               for row in rows if (results.model == row["model"]).any()]
    return ["Context rows (" + ", ".join(row["label"] for row in rows) + "): deterministic lexical baselines "
            "computed by the pipeline from the canonical tokens (ansel.evaluation.lexical; one run), not the "
            "paper's; their published values are other papers' (workflow/papers/context_results.csv)"
            + (": " + " | ".join(sources) if sources else "") + "."]
