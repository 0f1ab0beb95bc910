"""Ranking metrics of scored candidates: P@1, MAP, MRR, nDCG@3, nDCG@5; and the pair
classification metrics (accuracy, F1 of the positive class) where a score > 0 predicts label 1.

Tie-breaking (documented, deterministic): candidates are ranked by score descending, and
equal scores by answer id *descending* — trec_eval's convention, so numbers match trec_eval
on the written run file and never depend on file order.
Questions without a positive candidate cannot be ranked meaningfully; the dataset's
``no_positive`` protocol says what happens: ``drop`` excludes them from the mean (counted in
``n_no_positive``), ``zero`` counts each as 0 in every metric. Either way it is explicit.
A NaN score is refused, never ranked: trec_eval's comparisons are all false for it, so its place
there is the sort's accident, and numpy's sort would quietly put it last.

Why not ranx here: ranx costs ~5 s to import and ~8 s of JIT compilation in every new process
(measured on this 2-core machine), more than a smoke-sized training run, and every training
job is a new process. These are a few vectorised lines instead; tests check them against
ranx (tests/evaluation/test_metrics.py), which stays the reference.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ansel.evaluation.config import METRICS
from ansel.run_files import stored


def _ranking(scored: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the rows' order under the tie-breaking rule above, sorted by qid; the positions in that order
    where each question's rows start; each ordered row's 1-based rank in its question)."""
    qid, aid = pd.factorize(scored.qid, sort=True)[0], pd.factorize(scored.aid, sort=True)[0]
    order = np.lexsort((-aid, -scored.score.to_numpy(), qid))  # stable, as pandas' multi-key sort_values
    first = np.flatnonzero(np.r_[len(order) > 0, np.diff(qid[order]) != 0])  # each question's first row
    return order, first, np.arange(1, len(order) + 1) - np.repeat(first, np.diff(np.r_[first, len(order)]))


def rank(scored: pd.DataFrame) -> pd.DataFrame:
    """Add a 1-based ``rank`` per qid under the tie-breaking rule above; rows sorted by (qid, rank)."""
    order, _, ranks = _ranking(scored)
    out = scored.iloc[order].reset_index(drop=True)
    out["rank"] = ranks
    return out


def _per_question(scored: pd.DataFrame) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(each question's row in qid order, {n_pos or metric: its value per question}).

    In numpy over each question's run of ranked rows: a table job calls this hundreds of times,
    where pandas' groupby overhead, and then its frames' (2026-11-30: 2.5 -> 0.8 ms a split of 800
    rows), were most of its cost. Sums are ``np.add.reduceat`` over the same rows in the same order,
    as pandas 3 sums sorted groups, so floats are unchanged."""
    order, starts, rank_of = _ranking(scored)
    pos = scored.label.to_numpy()[order] > 0
    ranks = rank_of.astype(np.float64)
    hits = pos.astype(np.int64)
    before = np.cumsum(hits) - hits  # positives above each row, then less those of earlier questions
    hits_so_far = hits + before - np.repeat(before[starts], np.diff(np.r_[starts, len(order)]))
    n_pos = np.add.reduceat(hits, starts)
    # precision at each positive's rank; summed per question and divided by #positives = AP
    ap = np.add.reduceat(np.where(pos, hits_so_far / ranks, 0.0), starts)
    values = {
        "n_pos": n_pos,
        "P@1": np.maximum.reduceat(pos & (ranks == 1), starts).astype(float),
        "MRR": np.maximum.reduceat(np.where(pos, 1.0 / ranks, 0.0), starts),
        "MAP": ap / n_pos.clip(min=1),
    }
    gain = np.where(pos, 1.0 / np.log2(ranks + 1.0), 0.0)
    for k in (3, 5):
        dcg = np.add.reduceat(np.where(ranks <= k, gain, 0.0), starts)
        ideal = np.array([float(np.sum(1.0 / np.log2(np.arange(2, n + 2)))) for n in range(k + 1)])[n_pos.clip(max=k)]
        values[f"nDCG@{k}"] = np.where(n_pos > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)
    return order[starts], values


def per_question(scored: pd.DataFrame) -> pd.DataFrame:
    """One row per question (index qid, sorted): its metrics and the number of positives (binary relevance)."""
    rows, values = _per_question(scored)
    return pd.DataFrame(values, index=pd.Index(scored.qid.iloc[rows], name="qid"))


def ranking_metrics(scored: pd.DataFrame, no_positive: str = "drop") -> dict[str, float]:
    """Mean metrics over questions. ``scored`` has qid, aid, label, score."""
    if no_positive not in ("drop", "zero"):
        raise ValueError(f"no_positive must be 'drop' or 'zero', not {no_positive!r}")
    _, q = _per_question(scored)
    has_pos = q["n_pos"] > 0
    if not has_pos.any():
        raise ValueError("no question has a positive candidate; nothing to evaluate")
    result: dict[str, float] = {"n_questions": len(has_pos), "n_no_positive": int((~has_pos).sum())}
    for m in METRICS:  # a float64 array's mean: its pairwise sum / count, as pandas' Series.mean
        result[m] = float((q[m] if no_positive == "zero" else q[m][has_pos]).mean())
    return result


def classification_metrics(scored: pd.DataFrame) -> dict[str, float]:
    """Accuracy and F1 of label 1 over pairs, predicting 1 where the score (a log-odds) is > 0."""
    if scored.empty:
        raise ValueError("no pair to evaluate")
    pred, gold = scored.score.to_numpy() > 0, scored.label.to_numpy() > 0
    tp = int((pred & gold).sum())
    wrong = int((pred != gold).sum())
    f1 = 2 * tp / (2 * tp + wrong) if tp + wrong else 0.0
    return {"n_pairs": int(len(scored)), "accuracy": float((pred == gold).mean()), "F1": float(f1)}


def category_metrics(gold: np.ndarray, predicted: np.ndarray, n_classes: int) -> dict[str, float]:
    """Accuracy, and precision, recall and F1 macro-averaged over the ``n_classes`` training
    classes (scikit-learn: F1 is the mean of the classes' F1, not the F1 of the mean precision
    and recall; a class never predicted has precision 0), of questions' predicted categories."""
    from sklearn.metrics import precision_recall_fscore_support

    if len(gold) == 0:
        raise ValueError("no question with a training category to classify")
    p, r, f, _ = precision_recall_fscore_support(
        gold, predicted, labels=np.arange(n_classes), average="macro", zero_division=0
    )
    return {
        "n_categorised": int(len(gold)),
        "category_accuracy": float((gold == predicted).mean()),
        "category_precision": float(p),
        "category_recall": float(r),
        "category_F1": float(f),
    }


def split_metrics(scored: pd.DataFrame, task: str, no_positive: str = "drop") -> dict[str, float]:
    """The metrics of a dataset's task (``EvalConfig.task``); ValueError where a score is NaN."""
    nan = scored.score.isna().to_numpy()
    if nan.any():
        first = scored[nan].iloc[0]
        raise ValueError(
            f"{int(nan.sum())} of {len(scored)} scores are NaN (first: question {first.qid} answer {first.aid}): "
            "a NaN has no rank; the model's output is not a number there (a diverged run, or a pair it cannot score)"
        )
    if task == "classification":
        return classification_metrics(scored)
    return ranking_metrics(scored, no_positive)


def write_trec_run(scored: pd.DataFrame, path, run_name: str) -> None:
    """One line per candidate, in ``rank`` order.

    trec_eval ignores the rank column and re-sorts by the written score (then docno descending),
    so the score must be written exactly: rounded (e.g. to 8 decimals), distinct scores become
    ties that trec_eval breaks by docno, and its metrics drift from metrics.json. ``repr`` of the
    float64 value (exact for float32 model scores and float64 lexical ones) is the shortest text
    that ``atof``/``float`` read back to the same double, so written ties are exactly in-memory ties.
    (trec_eval then keeps it as a C float: float64 scores equal to float32 precision tie there.)
    """
    ranked = rank(scored)
    columns = (ranked[c].tolist() for c in ("qid", "aid", "rank"))  # Python objects: no row tuples
    with open(path, "w") as f:
        f.writelines(
            f"{q} Q0 {a} {r} {s!r} {run_name}\n" for q, a, r, s in zip(*columns, ranked.score.astype(float).tolist())
        )


def read_trec_run(path) -> pd.DataFrame:
    """qid, aid, rank, score of a run file, plain or gzipped (``ansel.run_files.stored``)."""
    found = stored(path)
    if not found.exists():
        raise FileNotFoundError(f"{path}: missing" + ("" if found.suffix == ".gz" else f", and no {found.name}.gz"))
    df = pd.read_csv(
        found, sep=" ", header=None, names=["qid", "q0", "aid", "rank", "score", "run"], dtype={"qid": str, "aid": str}
    )
    return df[["qid", "aid", "rank", "score"]]
