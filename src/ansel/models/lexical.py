"""A lexical context row as a model: no parameters (the trainer trains nothing); its scores come
from the candidates' tokens, which a forward over vocabulary ids cannot see, so evaluation scores
it with ``ansel.evaluation.lexical`` (``ansel.evaluation.evaluate.score_split``)."""

from __future__ import annotations

import torch

from ansel.models.base import Ranker


class LexicalRanker(Ranker):
    def __init__(self, method: str, hparams):
        super().__init__()
        self.method, self.hparams = method, hparams

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        raise TypeError(
            f"lexical scorer {self.method!r} reads tokens, not ids: score it with ansel.evaluation.evaluate.score_split"
        )
