"""Dataset statistics as the papers tabulate them (GGSA Table 1, AP's dataset table, MTAS Table 2,
aMV-LSTM Table 2), measured on canonical tables.

Statistic names (the ``statistic`` column of workflow/papers/dataset_stats_published.csv):
  questions, pairs, positives, q_with_positive, q_with_both (≥1 positive and ≥1 negative),
  candidates_per_q (mean), avg_q_len / avg_a_len (mean tokens over the split's distinct
  questions / distinct answers), avg_pos_a_len (mean tokens over its positive answers),
  vocabulary (distinct tokens over the split's questions and answers).
"""
from __future__ import annotations

import pandas as pd

from ansel.data.canonical import Dataset

STATISTICS = ["questions", "pairs", "positives", "q_with_positive", "q_with_both", "candidates_per_q",
              "avg_q_len", "avg_a_len", "avg_pos_a_len", "vocabulary"]


def dataset_stats(ds: Dataset) -> pd.DataFrame:
    """One row per split (plus ``all`` for the vocabulary over every split), columns STATISTICS."""
    qlen = ds.questions.set_index("qid").tokens
    alen = ds.answers.set_index("aid").tokens
    rows = []
    for split, c in ds.splits.items():
        per_q = c.groupby("qid").label.agg(["min", "max", "size"])
        qs, as_ = pd.unique(c.qid), pd.unique(c.aid)
        pos = pd.unique(c.aid[c.label == 1])
        vocab = set().union(*qlen.loc[qs].map(set), *alen.loc[as_].map(set)) if len(c) else set()
        rows.append({
            "split": split, "questions": len(qs), "pairs": len(c), "positives": int(c.label.sum()),
            "q_with_positive": int((per_q["max"] == 1).sum()),
            "q_with_both": int(((per_q["max"] == 1) & (per_q["min"] == 0)).sum()),
            "candidates_per_q": float(per_q["size"].mean()) if len(qs) else 0.0,
            "avg_q_len": float(qlen.loc[qs].map(len).mean()) if len(qs) else 0.0,
            "avg_a_len": float(alen.loc[as_].map(len).mean()) if len(as_) else 0.0,
            "avg_pos_a_len": float(alen.loc[pos].map(len).mean()) if len(pos) else 0.0,
            "vocabulary": len(vocab),
        })
    out = pd.DataFrame(rows, columns=["split", *STATISTICS])
    all_vocab = set().union(*ds.questions.tokens.map(set), *ds.answers.tokens.map(set))
    total = {"split": "all", **{k: None for k in STATISTICS}, "vocabulary": len(all_vocab)}
    return pd.concat([out, pd.DataFrame([total])], ignore_index=True)
