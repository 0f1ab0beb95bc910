"""Dataset statistics as the papers tabulate them (GGSA Table 1, AP's dataset table, MTAS Table 2,
aMV-LSTM Table 2), measured on canonical tables.

Statistic names (the ``statistic`` column of workflow/papers/dataset_stats_published.csv):
  questions, pairs, positives, negatives, q_with_positive, q_with_both (≥1 positive and ≥1
  negative), candidates_per_q (mean), avg_q_len / avg_a_len (mean tokens over the distinct
  questions / distinct answers), avg_pos_a_len (mean tokens over distinct positive answers),
  vocabulary (distinct tokens over those questions and answers).
One row per split and a row ``all`` over every split together.
"""

from __future__ import annotations

import pandas as pd

from ansel.data.canonical import Dataset

STATISTICS = [
    "questions",
    "pairs",
    "positives",
    "negatives",
    "q_with_positive",
    "q_with_both",
    "candidates_per_q",
    "avg_q_len",
    "avg_a_len",
    "avg_pos_a_len",
    "vocabulary",
]


def dataset_stats(ds: Dataset) -> pd.DataFrame:
    qtok = ds.questions.set_index("qid").tokens
    atok = ds.answers.set_index("aid").tokens
    parts = dict(ds.splits)
    if parts:
        parts["all"] = pd.concat(parts.values(), ignore_index=True)
    rows = [{"split": split, **_measure(c, qtok, atok)} for split, c in parts.items()]
    return pd.DataFrame(rows, columns=["split", *STATISTICS])


def _mean_len(tokens: pd.Series) -> float:
    return float(tokens.map(len).mean()) if len(tokens) else 0.0


def _measure(c: pd.DataFrame, qtok: pd.Series, atok: pd.Series) -> dict:
    per_q = c.groupby("qid").label.agg(["min", "max", "size"])
    qs, as_ = qtok.loc[pd.unique(c.qid)], atok.loc[pd.unique(c.aid)]
    positives = int(c.label.sum())
    return {
        "questions": len(qs),
        "pairs": len(c),
        "positives": positives,
        "negatives": len(c) - positives,
        "q_with_positive": int((per_q["max"] == 1).sum()),
        "q_with_both": int(((per_q["max"] == 1) & (per_q["min"] == 0)).sum()),
        "candidates_per_q": float(per_q["size"].mean()) if len(per_q) else 0.0,
        "avg_q_len": _mean_len(qs),
        "avg_a_len": _mean_len(as_),
        "avg_pos_a_len": _mean_len(atok.loc[pd.unique(c.aid[c.label == 1])]),
        "vocabulary": len(set().union(*qs.map(set), *as_.map(set))),
    }
