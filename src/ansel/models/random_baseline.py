"""The random-ranking reference row: a fixed pseudo-random score per (question, answer) text.

It has no trainable parameters (the trainer skips training); its hash weights are drawn from
torch's generator, which the trainer seeds with the run's seed, so seeds give different
random rankings. A pair's score depends only on its token ids, whatever the batch.
"""

from __future__ import annotations

import torch

from ansel.models.base import Ranker

_MOD = 2_147_483_647  # a Mersenne prime: multiply-add hashing modulo it mixes well


class RandomRanker(Ranker):
    def __init__(self, max_len: int):
        super().__init__()
        self.register_buffer("wq", torch.randint(1, 65_536, (max_len,)))
        self.register_buffer("wa", torch.randint(1, 65_536, (max_len,)))

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        hq = (q * self.wq[: q.size(1)]).sum(1) % _MOD
        ha = (a * self.wa[: a.size(1)]).sum(1) % _MOD
        return ((hq * 48_271 + ha) % _MOD).double().div(_MOD).float()
