"""Context rows of a metrics table (``context: true`` in a spec), not the paper's rows: the lexical
baselines the pipeline computes (``ansel.evaluation.lexical``), or a model trained here in another
source's setting (MV-LSTM as MatchZoo 1.0 configures it). Their published values come from other
sources, in workflow/papers/context_results.csv (dataset, split, model = the params.yaml model,
metric, value, source), whatever the paper and table they are shown in."""

from __future__ import annotations

import pandas as pd

from ansel.config import root
from ansel.models.registry import is_trained
from ansel.specs import Row, TableSpec
from ansel.targets import CONTEXT_PUBLISHED

_COLUMNS = ["dataset", "split", "model", "metric", "value", "source"]


def _results() -> pd.DataFrame:
    path = root() / CONTEXT_PUBLISHED
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in _COLUMNS if c not in df]
    if missing:
        raise KeyError(f"{path}: missing column(s) {', '.join(missing)}; it has {', '.join(df.columns)}")
    return df


def context_rows(table: TableSpec) -> list[Row]:
    return [row for row in table.rows if row.context]


def context_lookup() -> dict[tuple, float]:
    """{(dataset, split, model, metric): value} of every context result."""
    return {(r.dataset, r.split, r.model, r.metric): float(r.value) for r in _results().itertuples()}


def context_notes(config: dict, table: TableSpec) -> list[str]:
    """What the table's context rows are and where their published values come from: the untrained
    (lexical) rows, and rows trained here that the paper does not report (another source's setting)."""
    rows = context_rows(table)
    if not rows:
        return []
    results = _results()
    results = results[results.dataset.isin({c.published_dataset for c in table.columns})]

    def named(group: list[Row]) -> tuple[str, str]:
        sources = [
            f"{row.label}: {'; '.join(dict.fromkeys(results[results.model == row.model].source))}"
            for row in group
            if (results.model == row.model).any()
        ]
        return ", ".join(row.label for row in group), (": " + " | ".join(sources) if sources else "")

    untrained = [row for row in rows if not is_trained(config["models"][row.model]["arch"])]
    trained = [row for row in rows if row not in untrained]
    notes = []
    if untrained:
        labels, sources = named(untrained)
        notes.append(
            f"Context rows ({labels}): deterministic lexical baselines computed by the pipeline from the "
            "canonical tokens (ansel.evaluation.lexical; one run), not the paper's; their published values "
            f"are other papers' (workflow/papers/context_results.csv){sources}."
        )
    if trained:
        labels, sources = named(trained)
        notes.append(
            f"Context rows trained here ({labels}): not the paper's rows, trained by the pipeline in "
            "another source's setting (params.yaml says which), so the deviations below leave them out; "
            f"their published values are that source's (workflow/papers/context_results.csv){sources}."
        )
    return notes
