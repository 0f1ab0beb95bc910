"""Training losses over the scores of (question, positive) and (question, negative) pairs."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ansel.training.config import TrainConfig


def pair_loss(s_pos: torch.Tensor, s_neg: torch.Tensor, t: TrainConfig) -> torch.Tensor:
    """``hinge``: max(0, margin - s(q, a+) + s(q, a-)); ``pointwise``: binary cross-entropy with the
    scores as logits of "is a correct answer" (positives 1, negatives 0); averaged over the batch,
    or summed (``rank_reduction``)."""
    if t.loss == "hinge":
        assert t.margin is not None  # TrainConfig refuses a hinge loss without one
        loss = F.relu(t.margin - s_pos + s_neg)
        return loss.sum() if t.rank_reduction == "sum" else loss.mean()
    logits = torch.cat([s_pos, s_neg])
    return F.binary_cross_entropy_with_logits(
        logits, torch.cat([torch.ones_like(s_pos), torch.zeros_like(s_neg)]), reduction=t.rank_reduction
    )


def category_loss(logits: torch.Tensor, category: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the questions' categories (-1: none, left out; 0 when none has one)."""
    total = F.cross_entropy(logits, category, ignore_index=-1, reduction="sum")
    return total / (category >= 0).sum().clamp(min=1)
