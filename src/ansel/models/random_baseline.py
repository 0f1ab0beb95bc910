"""The random-ranking reference row: a fixed pseudo-random score per (question, answer) text.

It has no trainable parameters (the trainer skips training), and a pair's score depends only
on its token ids, so it is the same whatever the batch or the order of scoring.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ansel.models.base import Ranker
from ansel.models.registry import register

_MOD = 2_147_483_647  # a Mersenne prime: multiply-add hashing modulo it mixes well


@dataclass
class RandomConfig:
    seed: int = 0
    max_len: int = 512


class RandomRanker(Ranker):
    def __init__(self, cfg: RandomConfig):
        super().__init__()
        g = torch.Generator().manual_seed(cfg.seed)
        self.register_buffer("wq", torch.randint(1, 65_536, (cfg.max_len,), generator=g))
        self.register_buffer("wa", torch.randint(1, 65_536, (cfg.max_len,), generator=g))

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        hq = (q * self.wq[: q.size(1)]).sum(1) % _MOD
        ha = (a * self.wa[: a.size(1)]).sum(1) % _MOD
        return ((hq * 48_271 + ha) % _MOD).double().div(_MOD).float()


@register("random", RandomConfig)
def build_random(cfg: RandomConfig, vocab_size: int, embeddings: np.ndarray | None) -> RandomRanker:
    return RandomRanker(cfg)
