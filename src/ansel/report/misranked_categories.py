"""Tables of kind misranked_categories (MTAS's Table 7): the categories of a random draw of the
questions a model ranks wrongly.

A question is misranked when its top-ranked candidate (rank 1 in the run's run.trec) is not a
correct answer; questions without a correct candidate are left out, as evaluation drops them.
Each seed's run has its own misranked questions; from each, ``sample`` are drawn (all when fewer)
with ``numpy.random.default_rng(seed)`` over the sorted qids, and counted per category. A row per
category of the split's questions, in the order of the mean count: that count (mean ± std over
seeds), its share of the draw, and the category's share of all the split's questions, so that an
over-represented category stands out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ansel.data.canonical import Dataset
from ansel.report.tables import CELL_COLUMNS, render, split_labels, split_run
from ansel.specs import TableSpec
from ansel.targets import Run, processed_dir

COLUMNS = ("misranked drawn", "share of the draw (%)", "share of the split (%)")


def misranked_questions(run_trec: Path, labels: pd.DataFrame, split: str) -> list[str]:
    """The sorted qids of ``split`` whose rank-1 candidate in ``run_trec`` is not correct, among
    the questions with a correct candidate (``labels``: qid, aid, label)."""
    top = split_run(run_trec, split).sort_values(["qid", "rank"]).drop_duplicates("qid")
    top = top.merge(labels[["qid", "aid", "label"]], on=["qid", "aid"], how="left")
    answerable = set(labels.qid[labels.label > 0])
    return sorted(top.qid[top.qid.isin(answerable) & ~(top.label > 0)])


def draw(qids: list[str], sample: int, seed: int) -> list[str]:
    """``sample`` of ``qids`` (all when fewer), drawn without replacement by the seed."""
    if len(qids) <= sample:
        return list(qids)
    picked = np.random.default_rng(seed).choice(len(qids), size=sample, replace=False)
    return [qids[i] for i in sorted(picked)]


def misranked_counts(table: TableSpec, runs: list[Run]) -> tuple[pd.DataFrame, pd.Series, list[tuple[int, int, int]]]:
    """(counts [category x seed] of each seed's draw, each category's questions in the split,
    [(seed, misranked, answerable questions)]) over ``runs`` (the model's seeds)."""
    split = table.split
    data = Dataset.load(processed_dir(table.run_dataset))
    labels = split_labels(data, split, f"table {table.id}")
    category = data.questions.set_index("qid").category.reindex(labels.qid.unique()).fillna("(none)").astype(str)
    counts, seen = {}, []
    answerable = labels.qid[labels.label > 0].nunique()
    for run in runs:
        wrong = misranked_questions(Path(run.dir) / "run.trec", labels, split)
        picked = draw(wrong, table.sample, table.seed)
        counts[run.seed] = category.loc[picked].value_counts()
        seen.append((run.seed, len(wrong), answerable))
    frame = pd.DataFrame(counts).reindex(sorted(category.unique())).fillna(0).astype(int)
    return frame, category.value_counts(), seen


def render_misranked(table: TableSpec, runs: list[Run], notes: list[str], prefix: Path) -> None:
    """prefix.{csv,md,tex,html,json}: a row per category, ``COLUMNS``."""
    counts, in_split, seen = misranked_counts(table, runs)
    shares = counts / counts.sum().where(counts.sum() > 0, 1) * 100
    split_share = in_split.reindex(counts.index).fillna(0) / in_split.sum() * 100
    order = counts.mean(axis=1).sort_values(ascending=False, kind="stable").index
    records = []
    for cat in order:
        for column, values in (
            (COLUMNS[0], counts.loc[cat]),
            (COLUMNS[1], shares.loc[cat]),
            (COLUMNS[2], pd.Series([split_share[cat]])),
        ):
            v = values.to_numpy(dtype=float)
            records.append(
                {
                    "row": cat,
                    "column": column,
                    "model": table.model,
                    "dataset": table.dataset,
                    "run_dataset": table.run_dataset,
                    "split": table.split,
                    "metric": column,
                    "mean": v.mean(),
                    "std": v.std(ddof=1) if len(v) > 1 else 0.0,
                    "n": len(v),
                    "published": np.nan,
                    "digits": 1,
                    "differs": False,
                    "na": False,
                }
            )
    cells = pd.DataFrame.from_records(records, columns=CELL_COLUMNS)
    drawn = "; ".join(
        f"seed {s}: {min(w, table.sample)} drawn of {w} misranked among {n} questions" for s, w, n in seen
    )
    notes = notes + [
        f"Misranked: the rank-1 candidate is not a correct answer (questions without one left out). "
        f"Per run, {table.sample} misranked {table.split} questions drawn (all when fewer; "
        f"numpy default_rng({table.seed}) over the sorted qids), counted per category: {drawn}."
    ]
    render(
        cells,
        table,
        notes,
        prefix,
        "ours = mean ± sample std over the model's seeds, one draw per seed; "
        "share of the split = the category's questions among all the split's questions (one value).",
        show_n=False,
    )
