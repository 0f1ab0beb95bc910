import json
import math
import os
import subprocess
import sys

import pandas as pd
import pytest

from ansel.evaluation.metrics import rank, ranking_metrics, read_trec_run, write_trec_run


def frame(rows):
    return pd.DataFrame(rows, columns=["qid", "aid", "label", "score"])


def test_single_positive_hand_computed():
    # ranking: a(0.9,-) b(0.5,+) c(0.1,-): first hit at rank 2
    m = ranking_metrics(frame([("q", "a", 0, 0.9), ("q", "b", 1, 0.5), ("q", "c", 0, 0.1)]))
    assert m["P@1"] == 0 and m["MAP"] == pytest.approx(0.5) and m["MRR"] == pytest.approx(0.5)
    assert m["nDCG@3"] == pytest.approx(1 / math.log2(3))


def test_multiple_positives_and_means_over_questions():
    rows = [
        ("q1", "a", 1, 0.9),
        ("q1", "b", 0, 0.8),
        ("q1", "c", 1, 0.7),
        ("q1", "d", 0, 0.1),
        ("q2", "e", 0, 0.9),
        ("q2", "f", 1, 0.2),
    ]
    m = ranking_metrics(frame(rows))
    ap1, ap2 = (1 + 2 / 3) / 2, 1 / 2
    assert m["MAP"] == pytest.approx((ap1 + ap2) / 2)
    assert m["MRR"] == pytest.approx((1 + 1 / 2) / 2)
    assert m["P@1"] == pytest.approx(0.5)
    idcg = 1 + 1 / math.log2(3)
    ndcg1 = (1 + 1 / math.log2(4)) / idcg
    assert m["nDCG@3"] == pytest.approx((ndcg1 + 1 / math.log2(3)) / 2)


def test_ties_broken_by_answer_id_descending_like_trec_eval():
    # b and c tie; trec_eval order puts "c" first, so the positive "b" is at rank 2.
    m = ranking_metrics(frame([("q", "b", 1, 0.5), ("q", "c", 0, 0.5), ("q", "a", 0, 0.1)]))
    assert m["P@1"] == 0 and m["MRR"] == pytest.approx(0.5)
    # and it does not depend on input order
    m2 = ranking_metrics(frame([("q", "c", 0, 0.5), ("q", "a", 0, 0.1), ("q", "b", 1, 0.5)]))
    assert m == m2


def test_questions_without_positive_are_dropped_or_zero_explicitly():
    rows = [("q1", "a", 1, 0.9), ("q1", "b", 0, 0.1), ("q2", "c", 0, 0.9), ("q2", "d", 0, 0.1)]
    dropped = ranking_metrics(frame(rows), "drop")
    zero = ranking_metrics(frame(rows), "zero")
    assert dropped["n_no_positive"] == 1 and dropped["MAP"] == 1.0
    assert zero["MAP"] == 0.5 and zero["P@1"] == 0.5
    with pytest.raises(ValueError, match="no_positive"):
        ranking_metrics(frame(rows), "ignore")


def test_trec_run_round_trip(tmp_path):
    df = frame([("q", "b", 1, 0.5), ("q", "c", 0, 0.5), ("q", "a", 0, 0.7)])
    write_trec_run(df, tmp_path / "run.trec", "x")
    back = read_trec_run(tmp_path / "run.trec")
    assert list(back.aid) == ["a", "c", "b"] and list(back["rank"]) == [1, 2, 3]
    assert list(rank(df).aid) == ["a", "c", "b"]


RANX = """import json, sys
from ranx import Qrels, Run, evaluate
qrels, run, metrics = json.load(sys.stdin)
print(json.dumps({k: float(v) for k, v in evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics).items()}))
"""


def test_agrees_with_ranx_on_random_rankings():
    """ranx is the reference implementation; ours must match it to float precision. ranx runs its
    Python source uncompiled (numba's NUMBA_DISABLE_JIT, in a process of its own): the same
    arithmetic in float64, without the minute of JIT compilation a new environment would pay."""
    import numpy as np

    rng = np.random.default_rng(0)
    rows = []
    for q in range(60):
        n = int(rng.integers(2, 30))
        labels = rng.random(n) < 0.2
        labels[rng.integers(n)] = True
        # coarse scores make ties frequent
        scores = rng.integers(0, 5, n) / 4
        rows += [(f"q{q}", f"a{q}-{i:02d}", int(labels[i]), float(scores[i])) for i in range(n)]
    df = frame(rows)
    ours = ranking_metrics(df)
    ranked = rank(df)
    qrels = {q: {a: 1 for a in g.aid[g.label > 0]} for q, g in ranked.groupby("qid")}
    run = {q: dict(zip(g.aid, -g["rank"].astype(float))) for q, g in ranked.groupby("qid")}
    names = ["precision@1", "map", "mrr", "ndcg@3", "ndcg@5"]
    done = subprocess.run(
        [sys.executable, "-c", RANX],
        input=json.dumps([qrels, run, names]),
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    ref = json.loads(done.stdout)
    for ours_name, ref_name in (
        ("P@1", "precision@1"),
        ("MAP", "map"),
        ("MRR", "mrr"),
        ("nDCG@3", "ndcg@3"),
        ("nDCG@5", "ndcg@5"),
    ):
        assert ours[ours_name] == pytest.approx(ref[ref_name], abs=1e-12), ours_name


def test_classification_metrics_by_hand():
    from ansel.evaluation.metrics import classification_metrics, split_metrics

    scored = pd.DataFrame(
        {"qid": list("abcde"), "aid": list("vwxyz"), "label": [1, 1, 0, 0, 1], "score": [2.0, -0.5, 0.3, -1.0, 0.0]}
    )  # 0.0 is not > 0: predicted 0
    # predictions 1, 0, 1, 0, 0: tp 1, fp 1, fn 2 -> accuracy 2/5, F1 = 2 / (2 + 3)
    assert classification_metrics(scored) == {"n_pairs": 5, "accuracy": 0.4, "F1": 0.4}
    assert split_metrics(scored, "classification") == classification_metrics(scored)
    with pytest.raises(ValueError, match="no pair"):
        classification_metrics(scored.iloc[:0])


@pytest.mark.parametrize("task", ["ranking", "classification"])
def test_a_nan_score_is_refused_not_ranked_last(task):
    """trec_eval's order of a NaN is the sort's accident; numpy's sort put it last, so a positive the
    model could not score counted as ranked at the bottom and metrics.json reported it."""
    from ansel.evaluation.metrics import split_metrics

    scored = frame([("q", "a", 0, 0.5), ("q", "b", 1, float("nan")), ("q", "c", 0, 0.1)])
    with pytest.raises(ValueError, match=r"1 of 3 scores are NaN \(first: question q answer b\)"):
        split_metrics(scored, task)
