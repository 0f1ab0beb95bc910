"""The one assembly of a ranker: embed -> encoder -> composition -> scorer (DESIGN.md principle 4).

``embed`` maps token ids [B, L] to vectors [B, L, D] (word embedding, dropout, positions), the
encoder follows the contract of ``encoders.py``, the composition that of ``compositions.py``,
and the scorer maps the composition's vectors to scores [B]. Question and answer share the
embedding and, unless an answer encoder is given (GGSA's two encoders), the encoder. ``assemble`` picks the siamese form whenever nothing couples the
two texts, so that evaluation can encode each distinct text once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ansel.models.base import Ranker, SiameseRanker
from ansel.models.compositions import Pooling
from ansel.models.layers import masked_mean, read_ids


@dataclass
class Sides:
    """What a ranker reads each text with: the shared embedding, the encoder (and the answer's
    own, where given) and ``read_padding`` (``layers.read_ids``)."""

    embed: nn.Module
    encoder: nn.Module
    answer_encoder: nn.Module | None = None
    read_padding: int = 0


class EncodedSides:
    """Both rankers' ``Sides``, held as the ranker's own modules (their state-dict keys), and the
    encoding of one side by them."""

    def hold(self, sides: Sides) -> None:
        self.read_padding = sides.read_padding
        self.embed = sides.embed
        self.encoder = sides.encoder
        if sides.answer_encoder is not None:  # absent, the state dict is a shared encoder's, as ever
            self.answer_encoder = sides.answer_encoder

    def encode_side(self, ids: torch.Tensor, answer: bool = False, **context) -> tuple[torch.Tensor, torch.Tensor]:
        """One side's encoder states and mask (h, m)."""
        ids, mask = read_ids(ids, self.read_padding)
        return (getattr(self, "answer_encoder", self.encoder) if answer else self.encoder)(
            self.embed(ids), mask, **context
        )


class PooledRanker(EncodedSides, SiameseRanker):
    """embed -> encoder (the answer's own where given) -> pooling of each side on its own -> scorer."""

    def __init__(self, sides: Sides, pooling: Pooling, scorer: nn.Module):
        super().__init__()
        self.hold(sides)
        self.pooling = pooling
        self.scorer = scorer

    def encode_question(self, ids: torch.Tensor) -> torch.Tensor:
        return self.pooling.pool(*self.encode_side(ids))

    def encode_answer(self, ids: torch.Tensor) -> torch.Tensor:
        return self.pooling.pool(*self.encode_side(ids, answer=True))

    def similarity(self, qv: torch.Tensor, av: torch.Tensor) -> torch.Tensor:
        return self.scorer(qv, av)


class PairRanker(EncodedSides, Ranker):
    """embed -> encoder -> composition over both sides -> scorer.

    With ``question_context`` (iGGSA) the answer encoder also reads the question vector
    c_q = mean of the question's encoder states (GGSA eq. 5). Without it a text's states do not
    depend on the other side, so scoring encodes each distinct text once (``encode_side``) and
    ``compare`` pairs them.
    """

    def __init__(self, sides: Sides, composition: nn.Module, scorer: nn.Module, question_context: bool = False):
        super().__init__()
        self.hold(sides)
        self.composition = composition
        self.scorer = scorer
        self.question_context = question_context

    def states(self, q: torch.Tensor, a: torch.Tensor):
        """Encoder states and masks of both sides: (hq, mq, ha, ma)."""
        hq, mq = self.encode_side(q)
        context = {"context": masked_mean(hq, mq)} if self.question_context else {}
        return hq, mq, *self.encode_side(a, answer=True, **context)

    def compare(self, hq, mq, ha, ma) -> torch.Tensor:
        """Scores [B] of row-aligned encoder states."""
        return self.scorer(*self.composition(hq, mq, ha, ma))

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return self.compare(*self.states(q, a))

    @torch.no_grad()
    def attention(self, q: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The composition's attention weights over encoder positions (σq [B, M'], σa [B, L']),
        for heat maps; compositions with such weights (attentive pooling) have ``attention``.

        For a CNN encoder position j is the k-word window ending at token j (wide convolution,
        M' = M + k - 1); ``ansel.report.attention_maps.window_to_tokens`` maps it to tokens.
        """
        return self.composition.attention(*self.states(q, a))


def assemble(
    embed: nn.Module,
    encoder: nn.Module,
    composition: nn.Module,
    scorer: nn.Module,
    question_context: bool = False,
    answer_encoder: nn.Module | None = None,
    read_padding: int = 0,
) -> Ranker:
    """The ranker: siamese when the composition pools each side on its own and the answer
    encoder does not read the question; ``answer_encoder``: the answer's own encoder (default:
    the question's, shared); ``read_padding``: fixed-width inputs, padding read (``layers.read_ids``)."""
    sides = Sides(embed, encoder, answer_encoder, read_padding)
    if isinstance(composition, Pooling) and not question_context:
        return PooledRanker(sides, composition, scorer)
    return PairRanker(sides, composition, scorer, question_context)
