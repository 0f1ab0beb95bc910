"""Paired significance tests over questions: does one run's metric differ from another's on the
same questions? (PyTerrier's ``Experiment(baseline=..., correction="holm")`` is the reference.)

Per-question values come from a split of a run.trec and the split's labels through
``ansel.evaluation.metrics.per_question``: the numbers whose means are metrics.json's. Two
two-sided tests of the per-question differences over the questions both runs score:

- paired t-test: ``scipy.stats.ttest_rel``;
- randomisation test (Fisher's, as in Smucker et al., CIKM 2007): ``scipy.stats.permutation_test``
  on the differences with ``permutation_type="samples"``, which flips each difference's sign at
  random; 9,999 resamples from a fixed seed (the exact distribution when 2^n is no larger);
  its p value to the bit, drawn and summed without scipy's per-resample copies (``randomisation_p``).
  Not ranx's ``fisher_randomization_test``: it draws in numba-parallel threads, so its p value
  depends on the thread count, and ranx costs seconds of import and JIT compilation per process.

The paper's claims are judged by ``seed_bootstrap``, whose resampling covers the seeds too.

Holm–Bonferroni (``holm``) adjusts a family of p values: scipy has no Holm correction
(``false_discovery_control`` is Benjamini–Hochberg/Yekutieli) and statsmodels is not a dependency.
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ansel.evaluation.metrics import per_question

TESTS = ("t", "randomisation")
RESAMPLES = 9999
SEED = 0


def question_values(ranked: pd.DataFrame, labels: pd.DataFrame, no_positive: str, where: str) -> pd.DataFrame:
    """Every ranking metric per question (index qid) of one split of a run: ``ranked`` has qid, aid
    and score (a run.trec's rows), ``labels`` qid, aid, label (the split's candidates). Questions
    without a positive are left out under ``no_positive: drop``, count 0 under ``zero``, as in the
    run's metrics.json."""
    merged = ranked[["qid", "aid", "score"]].merge(labels[["qid", "aid", "label"]], on=["qid", "aid"], how="left")
    unlabelled = merged[merged.label.isna()]
    if not unlabelled.empty:
        first = unlabelled.iloc[0]
        raise KeyError(
            f"{where}: {len(unlabelled)} ranked candidates are not candidates of the dataset's split, "
            f"e.g. question {first.qid} answer {first.aid}"
        )
    values = per_question(merged.assign(label=merged.label.astype(int)))
    return values if no_positive == "zero" else values[values.n_pos > 0]


def _mean_difference(d: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(d, axis=axis)


def randomisation_p(d: np.ndarray) -> float:
    """Two-sided p value of ``scipy.stats.permutation_test((d,), mean, permutation_type="samples",
    n_resamples=RESAMPLES, rng=default_rng(SEED))``, to the bit. Past 2^n > RESAMPLES (else scipy's
    exact enumeration, cheap) scipy builds index arrays per resample and question, most of a
    table job's CPU; here the same flips are one array draw (``_signs``): scipy flips a
    difference where ``rng.permuted`` swaps its pair (d, -d), which draws one 32-bit number per
    pair, resample-major, and swaps where its low bit is 0. The null means sum the questions in
    order, as scipy's do, and
    scipy's tolerance and +1 correction follow (tests check p and null against scipy)."""
    n = len(d)
    if 2**n <= RESAMPLES:
        return float(
            stats.permutation_test(
                (d,), _mean_difference, permutation_type="samples", vectorized=True, n_resamples=RESAMPLES
            ).pvalue
        )
    return float(_two_sided_p(d.mean(), _null_means(d)))


def _null_means(d: np.ndarray) -> np.ndarray:
    # each product is exactly ±d (a sign is ±1), summed over the questions in order: ~7x np.where's speed
    return (_signs(len(d)) * d[:, None]).sum(axis=0) / len(d)


@functools.cache
def _signs(n: int) -> np.ndarray:
    """(n, RESAMPLES) int8, question-major: each resample's sign of each difference (1 where it keeps
    it). The same for every test on n questions (one seed), so drawn once per n."""
    draws = np.random.default_rng(SEED).integers(0, 2**32, size=(RESAMPLES, n), dtype=np.uint32)
    signs = np.ascontiguousarray(np.where((draws.T & 1) == 1, 1, -1).astype(np.int8))
    signs.flags.writeable = False
    return signs


def _two_sided_p(observed: float, null: np.ndarray) -> float:
    gamma = abs(np.finfo(float).eps * 100 * observed)  # scipy's: equal in theory, apart by rounding
    below = (np.count_nonzero(null <= observed + gamma) + 1) / (RESAMPLES + 1)
    above = (np.count_nonzero(null >= observed - gamma) + 1) / (RESAMPLES + 1)
    return min(1.0, 2 * min(below, above))


def paired_tests(a: pd.Series, b: pd.Series) -> dict:
    """``a`` − ``b`` (per-question values, indexed by qid) over the questions both have: n, the mean
    difference and the two-sided p value of each test (``TESTS``). Identical values give p = 1."""
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").dropna()
    if len(both) < 2:
        raise ValueError(f"{len(both)} question(s) in common: a paired test needs at least 2")
    d = (both.a - both.b).to_numpy(dtype=float)
    result = {"n": len(d), "difference": float(d.mean())}
    if not d.any():  # no difference at all: ttest_rel's t is 0/0
        return result | {test: 1.0 for test in TESTS}
    result["t"] = float(stats.ttest_rel(both.a, both.b).pvalue)
    result["randomisation"] = randomisation_p(d)
    return result


def seed_bootstrap(a: pd.DataFrame, b: pd.DataFrame, resamples: int = RESAMPLES, chunk: int = 1000) -> dict:
    """Two-level paired bootstrap of ``a`` − ``b`` (per-question values, index qid, a column per
    seed) over the questions every seed of both rows scores: each resample draws the questions with
    replacement (the same for both rows: paired) and each row's seeds with replacement, so the p value
    carries the spread between seeds as well as between questions (a pooled test over questions
    alone does not). Statistic: the mean over questions of each row's seed-averaged value, a − b;
    two-sided percentile p = 2 min(P*(stat <= 0), P*(stat >= 0)), +1-smoothed, capped at 1."""
    both = pd.concat([a.add_prefix("a"), b.add_prefix("b")], axis=1, join="inner").dropna()
    if len(both) < 2:
        raise ValueError(f"{len(both)} question(s) in common: a paired test needs at least 2")
    x, y = both[[f"a{c}" for c in a.columns]].to_numpy(float), both[[f"b{c}" for c in b.columns]].to_numpy(float)
    result = {"n": len(both), "difference": float(x.mean(axis=1).mean() - y.mean(axis=1).mean())}
    rng = np.random.default_rng(SEED)
    below = above = 0
    for start in range(0, resamples, chunk):
        r = min(chunk, resamples - start)
        questions = _weights(rng.integers(0, len(both), (r, len(both))), len(both))
        stat = np.einsum(
            "rn,ns,rs->r", questions, x, _weights(rng.integers(0, x.shape[1], (r, x.shape[1])), x.shape[1])
        ) - np.einsum("rn,ns,rs->r", questions, y, _weights(rng.integers(0, y.shape[1], (r, y.shape[1])), y.shape[1]))
        below, above = below + int((stat <= 0).sum()), above + int((stat >= 0).sum())
    return result | {"bootstrap": float(min(1.0, 2 * min(below + 1, above + 1) / (resamples + 1)))}


def _weights(draws: np.ndarray, size: int) -> np.ndarray:
    """Each row of draws (indices into ``size`` items) as the items' weights, summing to 1."""
    rows = len(draws)  # one bincount over all rows at once: each row's draws offset into its own block
    counts = np.bincount((draws + size * np.arange(rows)[:, None]).ravel(), minlength=rows * size)
    return counts.reshape(rows, size) / draws.shape[1]


def holm(p: Sequence[float]) -> np.ndarray:
    """Holm–Bonferroni adjusted p values, in the input's order: the i-th smallest of m is multiplied
    by m − i + 1 (i from 1), made non-decreasing in that order and capped at 1. Rejecting where the
    adjusted p < alpha controls the family-wise error rate at alpha."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p, kind="stable")
    factors = len(p) - np.arange(len(p))
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(factors * p[order]))
    return adjusted
