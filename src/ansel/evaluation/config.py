"""Typed evaluation settings: a dataset's ``eval`` block. Torch-free (checked at DAG build)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ansel.settings import check

# The metrics every run reports (ansel.evaluation.metrics computes them), by the dataset's task:
# ranking a question's candidates, or classifying each (question, candidate) pair (QuoraQP).
METRICS = ["P@1", "MAP", "MRR", "nDCG@3", "nDCG@5"]
CLASSIFICATION_METRICS = ["accuracy", "F1"]
# A model that also classifies each question's category (MTAS): over the split's questions whose
# category is a training class; precision, recall and F1 macro-averaged over those classes
CATEGORY_METRICS = ["category_accuracy", "category_precision", "category_recall", "category_F1"]


@dataclass(frozen=True)
class EvalConfig:
    splits: list[str]  # scored with the dev-selected weights; each must be a split of the dataset
    no_positive: Literal["drop", "zero"] = "drop"  # questions without a positive: excluded, or scored 0
    task: Literal["ranking", "classification"] = "ranking"
    # A budget's size: each split scored on a seeded draw of this many of its questions (None: all)
    sample_questions: int | None = None
    sample_seed: int = 0

    def __post_init__(self) -> None:
        check(len(self.splits) > 0, "splits", "needs at least one split")
        check(len(set(self.splits)) == len(self.splits), "splits", f"{self.splits} names a split twice")
        check(
            self.sample_questions is None or self.sample_questions >= 1,
            "sample_questions",
            f"{self.sample_questions}: must be >= 1 (or null: every question)",
        )
