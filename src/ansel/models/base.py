"""Interfaces shared by every model.

Token ids are LongTensors [B, L] with 0 as padding; masks are bool [B, L], True on real tokens.
A ``Ranker`` maps a batch of (question, answer) pairs to one score each. A ``SiameseRanker``
encodes each side independently, so evaluation can encode each distinct answer once and
score a question against its whole pool with ``similarity`` of the cached vectors. An
``InteractionRanker`` also encodes each side alone, but into per-token states that only a
pairwise interaction (a match matrix, a convolved image) turns into a score: evaluation encodes
each distinct text once and runs only ``interact`` per pair.
"""

from __future__ import annotations

import torch
from torch import nn

from ansel.data.vocab import PAD  # the vocabulary's padding id

__all__ = ["PAD", "InteractionRanker", "Ranker", "SiameseRanker", "padding_mask"]


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

    def similarity(self, qv: torch.Tensor, av: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        """Scores [B] of row-aligned question and answer vectors."""
        raise NotImplementedError

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return self.similarity(self.encode_question(q), self.encode_answer(a))


class InteractionRanker(Ranker):
    """Sides are tuples of batch-first tensors whose widths are fixed by the model (not by the
    batch's longest text), or whose positions past a batch's width are masked out (a side's own
    mask: MTAS), so the sides of different batches concatenate row-wise, zero-filled."""

    def encode_question_side(self, q: torch.Tensor) -> tuple[torch.Tensor, ...]:  # pragma: no cover
        raise NotImplementedError

    def encode_answer_side(self, a: torch.Tensor) -> tuple[torch.Tensor, ...]:  # pragma: no cover
        raise NotImplementedError

    def interact(
        self, q_side: tuple[torch.Tensor, ...], a_side: tuple[torch.Tensor, ...]
    ) -> torch.Tensor:  # pragma: no cover
        """Scores [B] of row-aligned question and answer sides."""
        raise NotImplementedError

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return self.interact(self.encode_question_side(q), self.encode_answer_side(a))
