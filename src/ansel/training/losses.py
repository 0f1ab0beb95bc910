"""Training losses over the scores of (question, positive) and (question, negative) pairs."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ansel.training.config import TrainConfig


def pair_loss(s_pos: torch.Tensor, s_neg: torch.Tensor, t: TrainConfig) -> torch.Tensor:
    """``hinge``: mean max(0, margin - s(q, a+) + s(q, a-)); ``pointwise``: binary cross-entropy
    with the scores as logits of "is a correct answer" (positives 1, negatives 0)."""
    if t.loss == "hinge":
        return F.relu(t.margin - s_pos + s_neg).mean()
    logits = torch.cat([s_pos, s_neg])
    return F.binary_cross_entropy_with_logits(logits, torch.cat([torch.ones_like(s_pos), torch.zeros_like(s_neg)]))
