import math

import pandas as pd
import pytest

from ansel.report.by_length import accuracy_by_length, plot_accuracy_by_length, top_ranked

LENGTHS = {"a1": 5, "a2": 15, "a3": 25, "a4": 8, "a5": 40, "a6": 12}
# (qid, aid, label, score). q1 hit (len 5); q2 miss (len 25); q3 has two correct answers
# (longest 40) and a tie at 0.5 that goes to the larger id a6, a miss; q4 has no correct
# candidate and is left out; q5 hit (len 8).
CANDIDATES = [
    ("q1", "a1", 1, 0.9),
    ("q1", "a2", 0, 0.1),
    ("q2", "a3", 1, 0.2),
    ("q2", "a4", 0, 0.8),
    ("q3", "a2", 1, 0.5),
    ("q3", "a5", 1, 0.3),
    ("q3", "a6", 0, 0.5),
    ("q4", "a6", 0, 0.1),
    ("q4", "a4", 0, 0.2),
    ("q5", "a4", 1, 0.7),
    ("q5", "a1", 0, 0.6),
]


def tables(order=None):
    df = pd.DataFrame(CANDIDATES, columns=["qid", "aid", "label", "score"])
    if order is not None:
        df = df.iloc[order]
    return df[["qid", "aid", "score"]], df[["qid", "aid", "label"]]


def test_cumulative_accuracy_per_length_matches_hand_count():
    run, qrels = tables()
    curve = accuracy_by_length(run, qrels, LENGTHS)
    assert curve["max_length"].tolist() == [10, 20, 30, 40]
    assert curve["questions"].tolist() == [2, 2, 3, 4]
    assert curve["p_at_1"].tolist() == pytest.approx([1.0, 1.0, 2 / 3, 0.5])


def test_result_does_not_depend_on_row_order():
    run, qrels = tables(order=[10, 6, 3, 0, 8, 4, 1, 9, 2, 7, 5])
    assert accuracy_by_length(run, qrels, LENGTHS)["p_at_1"].tolist() == pytest.approx([1.0, 1.0, 2 / 3, 0.5])
    assert top_ranked(run).set_index("qid").loc["q3", "aid"] == "a6"


def test_explicit_thresholds_and_empty_bucket():
    run, qrels = tables()
    curve = accuracy_by_length(run, qrels, LENGTHS, thresholds=[4, 8, 100])
    assert curve["questions"].tolist() == [0, 2, 4]
    assert math.isnan(curve["p_at_1"][0])
    assert curve["p_at_1"][1:].tolist() == pytest.approx([1.0, 0.5])


def test_missing_answer_length_is_named():
    run, qrels = tables()
    with pytest.raises(KeyError, match="a5"):
        accuracy_by_length(run, qrels, {k: v for k, v in LENGTHS.items() if k != "a5"})


def test_plot_writes_png_and_pdf(tmp_path):
    run, qrels = tables()
    curve = accuracy_by_length(run, qrels, LENGTHS)
    plot_accuracy_by_length({"AP-CNN": curve, "QA-CNN": curve.assign(p_at_1=0.3)}, tmp_path / "fig3")
    assert (tmp_path / "fig3.png").stat().st_size > 0 and (tmp_path / "fig3.pdf").stat().st_size > 0
