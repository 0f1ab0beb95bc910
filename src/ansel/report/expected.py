"""Rows computed, not run: a metric's exact expectation under a uniformly random ranking of each
question's candidates (a spec row with ``expected: random``), from the column's candidate pools.

For a question with n candidates of which k are positive (binary relevance), every permutation
equally likely, by linearity of expectation:

- P@1: k / n (the first candidate is a positive);
- MRR: E[1 / rank of the first positive] = sum_{r=1}^{n-k+1} (1/r) C(n-r, k-1) / C(n, k)
  (the first positive is at rank r when the r-1 candidates above it are negatives);
- MAP: (1/k) sum_r (1/r) E[rel(r) * #positives in ranks 1..r]
  = (1/n) (H_n + (k-1)/(n-1) (n - H_n)), H_n the n-th harmonic number (1 when n = 1);
- nDCG@K: sum_{r<=K} (k/n) / log2(r+1), over the ideal DCG of min(k, K) positives.

The split's value is their mean over the questions the evaluation scores: those with a positive
(``no_positive: drop``), or all with 0 for those without (``zero``), on the same draw of questions
where the dataset's ``eval`` scores a sample (``ansel.data.batches.RunData.sample_questions``).
With 5 candidates and 1 positive: P@1 0.2, MRR (1 + 1/2 + 1/3 + 1/4 + 1/5) / 5 = 0.4567.
"""

from __future__ import annotations

from math import log2

import pandas as pd

from ansel.evaluation.config import METRICS

EXPECTED = {"random": "the exact expectation under a uniformly random ranking of each question's candidates"}


def expected_random(n: int, k: int) -> dict[str, float]:
    """The expected ranking metrics (``METRICS``) of one question with ``n`` candidates, ``k`` of
    them positive, under a uniformly random permutation; 0 for every metric when k = 0."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"a question needs 1 or more candidates and 0 <= positives <= candidates: n={n}, k={k}")
    if k == 0:
        return dict.fromkeys(METRICS, 0.0)
    harmonic = sum(1.0 / r for r in range(1, n + 1))
    # P(first positive at rank r) = C(n-r, k-1) / C(n, k), as a running product (no huge binomials):
    # the r-1 candidates above it negative, then a positive among the n-r+1 left
    mrr, above_negative = 0.0, 1.0
    for r in range(1, n - k + 2):
        mrr += above_negative * k / (n - r + 1) / r
        above_negative *= (n - k - r + 1) / (n - r + 1)
    out = {"P@1": k / n, "MRR": mrr, "MAP": 1.0 if n == 1 else (harmonic + (k - 1) / (n - 1) * (n - harmonic)) / n}
    for cut in (3, 5):
        dcg = sum(k / n / log2(r + 1) for r in range(1, min(n, cut) + 1))
        out[f"nDCG@{cut}"] = dcg / sum(1.0 / log2(r + 1) for r in range(1, min(k, cut) + 1))
    return {m: out[m] for m in METRICS}


def pools(cands: pd.DataFrame) -> pd.DataFrame:
    """Per question of a split's candidates (qid, label): n (candidates) and k (positives)."""
    positive = cands.assign(pos=cands.label.to_numpy() > 0)
    return positive.groupby("qid", sort=True).agg(n=("pos", "size"), k=("pos", "sum"))


def expected_split_metric(cands: pd.DataFrame, metric: str, no_positive: str = "drop") -> float:
    """The mean over a split's questions of ``metric``'s expectation (``expected_random``),
    those without a positive dropped or counted 0, as ``ansel.evaluation.metrics.ranking_metrics``."""
    if metric not in METRICS:
        raise KeyError(f"no expectation under a random ranking for metric {metric!r}; known: {', '.join(METRICS)}")
    if no_positive not in ("drop", "zero"):
        raise ValueError(f"no_positive must be 'drop' or 'zero', not {no_positive!r}")
    q = pools(cands)
    if not (q.k > 0).any():
        raise ValueError("no question has a positive candidate; nothing to evaluate")
    kept = q if no_positive == "zero" else q[q.k > 0]
    shapes = kept.groupby(["n", "k"]).size()  # questions per (n, k): each shape's expectation computed once
    return float(
        sum(count * expected_random(int(n), int(k))[metric] for (n, k), count in shapes.items()) / shapes.sum()
    )
