"""``random``: the random-ranking reference row (``ansel.models.random_baseline``)."""

from __future__ import annotations

from dataclasses import dataclass

from ansel.models.hparams import HParams, hparam, positive
from ansel.models.registry import register


@dataclass
class RandomConfig(HParams):
    max_len: int = hparam(512, positive)


@register("random", RandomConfig, trained=False)
def build_random(cfg: RandomConfig, vocab_size: int, embeddings):
    from ansel.models.random_baseline import RandomRanker

    return RandomRanker(cfg.max_len)
