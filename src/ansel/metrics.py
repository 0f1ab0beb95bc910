"""Ranking metrics from scored candidates, computed with ranx.

Tie-breaking (documented, deterministic): candidates are ranked by score descending, and
equal scores by answer id *descending* — trec_eval's convention, so numbers match trec_eval
on the written run file and never depend on file order.
Questions without a positive candidate cannot be ranked meaningfully; the dataset's
``no_positive`` protocol says what happens: ``drop`` excludes them from the mean (counted in
``n_no_positive``), ``zero`` counts each as 0 in every metric. Either way it is explicit.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from numba.core.errors import NumbaTypeSafetyWarning
from ranx import Qrels, Run, evaluate

# ranx's compiled kernels cast ids internally; the warning is about its internals, not our data.
warnings.filterwarnings("ignore", category=NumbaTypeSafetyWarning)

RANX_NAMES = {"P@1": "precision@1", "MAP": "map", "MRR": "mrr", "nDCG@3": "ndcg@3", "nDCG@5": "ndcg@5"}
METRICS = list(RANX_NAMES)


def rank(scored: pd.DataFrame) -> pd.DataFrame:
    """Add a 1-based ``rank`` per qid under the tie-breaking rule above; rows sorted by (qid, rank)."""
    out = scored.sort_values(["qid", "score", "aid"], ascending=[True, False, False], kind="mergesort")
    out = out.reset_index(drop=True)
    out["rank"] = out.groupby("qid").cumcount() + 1
    return out


def ranking_metrics(scored: pd.DataFrame, no_positive: str = "drop") -> dict[str, float]:
    """Mean metrics over questions. ``scored`` has qid, aid, label, score."""
    if no_positive not in ("drop", "zero"):
        raise ValueError(f"no_positive must be 'drop' or 'zero', not {no_positive!r}")
    ranked = rank(scored)
    has_pos = ranked.groupby("qid").label.max() > 0
    kept = ranked[ranked.qid.isin(has_pos[has_pos].index)]
    n_no_pos = int((~has_pos).sum())
    result: dict[str, float] = {"n_questions": int(has_pos.size), "n_no_positive": n_no_pos}
    if kept.empty:
        raise ValueError("no question has a positive candidate; nothing to evaluate")
    qids = kept.qid.astype(str).to_numpy()
    aids = kept.aid.astype(str).to_numpy()
    pos = kept.label.to_numpy() > 0
    qrels = Qrels.from_dict(_nested(qids[pos], aids[pos], np.ones(int(pos.sum()))))
    # Scores handed to ranx are strictly decreasing in our rank, so ranx cannot re-break ties.
    run = Run.from_dict(_nested(qids, aids, -kept["rank"].to_numpy().astype(float)))
    per_query = evaluate(qrels, run, [RANX_NAMES[m] for m in METRICS], return_mean=False)
    denominator = has_pos.size if no_positive == "zero" else int(has_pos.sum())
    for m in METRICS:
        values = np.asarray(per_query[RANX_NAMES[m]], dtype=np.float64)
        result[m] = float(values.sum() / denominator)
    return result


def _nested(qids, aids, values) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for q, a, v in zip(qids, aids, values):
        out.setdefault(q, {})[a] = float(v)
    return out


def write_trec_run(scored: pd.DataFrame, path, run_name: str) -> None:
    ranked = rank(scored)
    with open(path, "w") as f:
        for r in ranked.itertuples(index=False):
            f.write(f"{r.qid} Q0 {r.aid} {r.rank} {r.score:.8f} {run_name}\n")


def read_trec_run(path) -> pd.DataFrame:
    df = pd.read_csv(path, sep=" ", header=None, names=["qid", "q0", "aid", "rank", "score", "run"],
                     dtype={"qid": str, "aid": str})
    return df[["qid", "aid", "rank", "score"]]
