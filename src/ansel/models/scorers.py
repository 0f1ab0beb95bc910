"""Scorers: the composition's vectors -> one score per pair [B]."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.hparams import SCORERS


class CosineScorer(nn.Module):
    """Cosine of the last dim (pairwise hinge loss, margin 0.1)."""

    def forward(self, vq: torch.Tensor, va: torch.Tensor) -> torch.Tensor:
        return F.cosine_similarity(vq, va, dim=-1, eps=1e-8)


class MLPScorer(nn.Module):
    """Two-layer MLP on [v_q, v_a] -> softmax over (irrelevant, relevant) (pointwise loss).

    Returns the positive-class log-odds logit_1 - logit_0: sigmoid(score) is the softmax's p_1,
    so binary cross-entropy with logits on the score is the paper's two-class cross-entropy,
    and ranking by the score ranks by p_1.
    """

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(2 * dim, hidden), nn.Tanh(), nn.Linear(hidden, 2))

    def forward(self, vq: torch.Tensor, va: torch.Tensor) -> torch.Tensor:
        logits = self.mlp(torch.cat([vq, va], dim=-1))
        return logits[..., 1] - logits[..., 0]


class SumOverHops(nn.Module):
    """A scorer of [B, hops, H] pairs: the sum of ``scorer`` over hops (multihop attention)."""

    def __init__(self, scorer: nn.Module):
        super().__init__()
        self.scorer = scorer

    def forward(self, vq: torch.Tensor, va: torch.Tensor) -> torch.Tensor:
        return self.scorer(vq, va).sum(1)


def make_scorer(name: str, dim: int) -> nn.Module:
    """The scorer a config names (``hparams.SCORERS``) for vectors of width ``dim``."""
    if name == "cosine":
        return CosineScorer()
    if name == "mlp":
        return MLPScorer(dim, dim)
    raise ValueError(f"unknown scorer {name!r}; known: {', '.join(SCORERS)}")
