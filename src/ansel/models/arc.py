"""The ARC-I and ARC-II modules and what the MatchZoo-family models here share (MatchPyramid too):
``TextSides`` and ``output_layers`` (hyperparameters and MatchZoo's layouts: ``ansel.models.archs.arc``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.base import Ranker, SiameseRanker
from ansel.models.hparams import TextMatchConfig
from ansel.models.layers import OutputHead, fixed_length, unit_rows, word_embedding


def output_layers(cfg: TextMatchConfig, features: int):
    """Flatten, Dropout(cfg.dropout), ``OutputHead(features, cfg.classes)``: the top of every
    MatchZoo 1.x model here."""
    return nn.Sequential(nn.Flatten(), nn.Dropout(cfg.dropout), OutputHead(features, cfg.classes))


class TextSides(nn.Module):
    """Token ids of text 1 (side 0: the question) or text 2 (side 1: the answer) -> [B, C, maxlen]:
    the ids post-padded or truncated to the side's fixed length, their word vectors from the one
    shared table (C = embedding_dim; unit rows where ``normalize_embeddings``) and, given a kernel, the side's own Conv1D ('same' padding,
    no activation), as ARC-I and ARC-II convolve each text with its own weights."""

    def __init__(
        self,
        cfg: TextMatchConfig,
        vocab_size: int,
        embeddings,
        kernel_count: int | None = None,
        kernel_size: int | None = None,
    ):
        super().__init__()
        if cfg.normalize_embeddings:
            embeddings = unit_rows(embeddings)
        self.embedding = word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings)
        self.maxlen = (cfg.text1_maxlen, cfg.text2_maxlen)
        self.convs = (
            None
            if kernel_count is None
            else nn.ModuleList(
                nn.Conv1d(cfg.embedding_dim, kernel_count, kernel_size, padding="same") for _ in self.maxlen
            )
        )

    def forward(self, ids: torch.Tensor, side: int) -> torch.Tensor:
        x = self.embedding(fixed_length(ids, self.maxlen[side])).transpose(1, 2)
        return x if self.convs is None else self.convs[side](x)


class ARCI(SiameseRanker):
    def __init__(self, cfg, vocab_size: int, embeddings):
        super().__init__()
        self.sides = TextSides(cfg, vocab_size, embeddings, cfg.kernel_count, cfg.kernel_size)
        self.pools = (cfg.q_pool_size, cfg.d_pool_size)
        windows = sum(maxlen // pool for maxlen, pool in zip(self.sides.maxlen, self.pools))
        self.head = output_layers(cfg, cfg.kernel_count * windows)

    def _encode(self, ids: torch.Tensor, side: int) -> torch.Tensor:
        return F.max_pool1d(self.sides(ids, side), self.pools[side]).flatten(1)

    def encode_question(self, q: torch.Tensor) -> torch.Tensor:
        return self._encode(q, 0)

    def encode_answer(self, a: torch.Tensor) -> torch.Tensor:
        return self._encode(a, 1)

    def similarity(self, qv: torch.Tensor, av: torch.Tensor) -> torch.Tensor:
        return self.head(torch.cat([qv, av], dim=1))


class ARCII(Ranker):
    def __init__(self, cfg, vocab_size: int, embeddings, pooled: tuple[int, int]):
        """``pooled``: the (rows, columns) that the blocks' max-poolings leave of the
        [text1_maxlen, text2_maxlen] grid (``archs.arc.pooled_grid``)."""
        super().__init__()
        self.sides = TextSides(cfg, vocab_size, embeddings, cfg.kernel_count_1d, cfg.kernel_size_1d)
        layers, channels = [], cfg.kernel_count_1d
        for count, size, pool in zip(cfg.kernel_counts_2d, cfg.kernel_sizes_2d, cfg.mpool_sizes_2d):
            layers += [nn.Conv2d(channels, count, tuple(size), padding="same"), nn.ReLU(), nn.MaxPool2d(tuple(pool))]
            channels = count
        self.blocks = nn.Sequential(*layers)
        rows, cols = pooled
        self.head = output_layers(cfg, channels * rows * cols)

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        # "plus" match: channel c of cell (i, j) is q_i[c] + a_j[c]
        grid = self.sides(q, 0).unsqueeze(3) + self.sides(a, 1).unsqueeze(2)
        return self.head(self.blocks(grid))
