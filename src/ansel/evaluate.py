"""Score every candidate of a split, rank, and compute the metrics (dev selection and final report)."""
from __future__ import annotations

import pandas as pd

from ansel import scoring
from ansel.metrics import ranking_metrics
from ansel.rundata import RunData


def score_split(model, data: RunData, split: str, batch_size: int = 256) -> pd.DataFrame:
    cands, qi, ai = data.pairs(split)
    out = cands[["qid", "aid", "label"]].copy()
    out["score"] = scoring.score(model, data.q_ids, data.a_ids, qi, ai, batch_size)
    return out


def evaluate_split(model, data: RunData, split: str, no_positive: str = "drop",
                   batch_size: int = 256) -> tuple[pd.DataFrame, dict[str, float]]:
    scored = score_split(model, data, split, batch_size)
    return scored, ranking_metrics(scored, no_positive)
