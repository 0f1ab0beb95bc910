"""Interfaces shared by every model.

Token ids are LongTensors [B, L] with 0 as padding; masks are bool [B, L], True on real tokens.
A ``Ranker`` maps a batch of (question, answer) pairs to one score each. A ``SiameseRanker``
encodes each side independently, so evaluation can encode each distinct answer once and
score a question against its whole pool with one matrix product.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

PAD = 0


def padding_mask(ids: torch.Tensor) -> torch.Tensor:
    return ids != PAD


class Ranker(nn.Module):
    siamese = False

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        """Scores [B] for token-id batches q [B, Lq] and a [B, La]."""
        raise NotImplementedError


class SiameseRanker(Ranker):
    siamese = True

    def encode_question(self, q: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError

    def encode_answer(self, a: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError

    def similarity(self, qv: torch.Tensor, av: torch.Tensor) -> torch.Tensor:
        """Row-wise cosine of two [B, H] batches."""
        return F.cosine_similarity(qv, av, dim=-1, eps=1e-8)

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return self.similarity(self.encode_question(q), self.encode_answer(a))
