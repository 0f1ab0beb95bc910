"""Accuracy (P@1) against answer length, as in dos Santos et al. (2016), Figs 3-4.

The paper plots "the aggregated accuracy ... for answers up to a certain length": the point at
length x is P@1 over the questions whose ground-truth answers are at most x tokens long. A
question with several correct answers is placed by its longest one (all its answers are
"up to" x). Questions without a correct candidate are left out, as in evaluation.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")  # cluster nodes and CI have no display
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ansel.report.plotting import save


def top_ranked(run: pd.DataFrame) -> pd.DataFrame:
    """The first-ranked candidate (qid, aid, score) of each question.

    Ties go to the larger answer id, trec_eval's convention, so results never depend on row order.
    """
    _require(run, ["qid", "aid", "score"], "run")
    ordered = run.sort_values(["qid", "score", "aid"], ascending=[True, False, False], kind="mergesort")
    return ordered.drop_duplicates("qid")[["qid", "aid", "score"]].reset_index(drop=True)


def question_lengths(qrels: pd.DataFrame, answer_lengths: Mapping[str, int]) -> pd.Series:
    """Per qid, the token length of its longest correct answer."""
    _require(qrels, ["qid", "aid", "label"], "labels")
    positives = qrels[qrels["label"] > 0]
    missing = sorted(set(positives["aid"]) - set(answer_lengths))
    if missing:
        raise KeyError(f"answer lengths lack {len(missing)} correct answers, e.g. {missing[:3]}")
    lengths = positives["aid"].map(answer_lengths).astype(int)
    return lengths.groupby(positives["qid"]).max().rename("answer_length")


def accuracy_by_length(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    answer_lengths: Mapping[str, int],
    thresholds: Sequence[int] | None = None,
    step: int = 10,
) -> pd.DataFrame:
    """P@1 of the questions whose correct answers have at most ``max_length`` tokens.

    ``run``: (qid, aid, score) of every scored candidate; ``qrels``: (qid, aid, label);
    ``answer_lengths``: aid -> tokens. ``thresholds`` default to multiples of ``step`` up to the
    longest correct answer. Returns columns max_length, questions, p_at_1 (NaN where no question).
    """
    top = top_ranked(run)
    lengths = question_lengths(qrels, answer_lengths)
    lengths = lengths[lengths.index.isin(top["qid"])]
    if lengths.empty:
        raise ValueError("no question in the run has a correct answer")
    correct_pairs = set(zip(qrels.loc[qrels["label"] > 0, "qid"], qrels.loc[qrels["label"] > 0, "aid"]))
    hit = pd.Series([(q, a) in correct_pairs for q, a in zip(top["qid"], top["aid"])], index=top["qid"])
    hit = hit.reindex(lengths.index).astype(float)
    if thresholds is None:
        thresholds = range(step, int(np.ceil(lengths.max() / step)) * step + 1, step)
    rows = []
    for x in thresholds:
        within = lengths <= x
        rows.append(
            {
                "max_length": int(x),
                "questions": int(within.sum()),
                "p_at_1": float(hit[within].mean()) if within.any() else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def plot_accuracy_by_length(curves: Mapping[str, pd.DataFrame], prefix: Path, title: str | None = None) -> None:
    """One line per model (label -> ``accuracy_by_length`` frame, optionally with a ``p_at_1_std``
    column drawn as a ± band, e.g. over seeds); writes prefix.png and prefix.pdf."""
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for label, curve in curves.items():
        (line,) = ax.plot(curve["max_length"], curve["p_at_1"], marker="o", markersize=3, label=label)
        if "p_at_1_std" in curve:
            ax.fill_between(
                curve["max_length"],
                curve["p_at_1"] - curve["p_at_1_std"],
                curve["p_at_1"] + curve["p_at_1_std"],
                color=line.get_color(),
                alpha=0.2,
            )
    ax.set_xlabel("answer length up to (tokens)")
    ax.set_ylabel("accuracy (P@1)")
    if title:  # wrapped: a spec's title (which dataset stood in) is longer than the 5-inch axes
        ax.set_title(textwrap.fill(title, 55), fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend()
    save(fig, prefix)


def _require(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise KeyError(f"{what} table lacks column(s) {missing}; has {list(frame.columns)}")
