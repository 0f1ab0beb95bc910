"""The ARC-I, ARC-II and MatchPyramid modules and what these MatchZoo-family models share:
``TextSides`` and ``output_layers`` (hyperparameters and MatchZoo's layouts:
``ansel.models.archs.arc``, ``ansel.models.archs.matchpyramid``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.base import InteractionRanker, Ranker, SiameseRanker, padding_mask
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


def dynamic_pooling_index(lengths, max_len: int):
    """MatchZoo's dynamic_pooling_index for texts of ``lengths`` [B] real tokens: the row of the match
    matrix that each of its ``max_len`` rows reads after stretching [B, max_len].

    Row i reads int(i / (max_len / length)): the real rows, each repeated about max_len / length
    times, fill all max_len rows, so the fixed windows of the pooling that follows split the real
    text evenly whatever its length, padding unread (a text shorter than the grid repeats a row in
    several windows). The arithmetic is upstream's float64 one: it differs from the exact
    floor(i * length / max_len) at some rows (row 9 of 18 for length 14 reads 6, not 7). An empty
    text reads row 0 throughout, MatchZoo 2.x's rule (1.x divided by zero).
    """
    # tensor / tensor: torch computes a scalar / tensor as a reciprocal times the scalar, which
    # rounds otherwise than Python's division
    stride = torch.full(lengths.shape, float(max_len), dtype=torch.float64, device=lengths.device)
    stride = stride / lengths.clamp_min(1).double()
    rows = torch.arange(max_len, dtype=torch.float64, device=lengths.device)
    return (rows / stride.unsqueeze(1)).long()  # truncation, as Python's int()


def dynamic_max_pool(x, lengths1, lengths2, size: tuple[int, int]):
    """MatchZoo's DynamicMaxPooling of x [B, C, M1, M2] for texts of lengths1, lengths2 [B] real
    tokens: rows and columns stretched by ``dynamic_pooling_index``, then max-pooled in windows of
    (M1 // size[0], M2 // size[1]) with that stride -> [B, C, size[0], size[1]]. As upstream's 'VALID'
    pooling it drops the M % window last stretched rows or columns (with M1 10 and 3 windows of 3:
    the tenth).

    The stretched grid is gathered in one pass, only where a window reads it, as whole cells: the
    C values of a cell are contiguous in a channels-last copy of x, so each read copies a row where
    gathering rows, then columns, of the NCHW grid reads C scattered values twice (MatchPyramid
    scores twice as fast). Max-pooling the same stretched grid keeps the values and the gradient
    routes (a window's first maximum) of that recipe. The result is channels-last in memory."""
    b, c, m1, m2 = x.shape
    window = (m1 // size[0], m2 // size[1])
    rows = dynamic_pooling_index(lengths1, m1)[:, : size[0] * window[0]]
    cols = dynamic_pooling_index(lengths2, m2)[:, : size[1] * window[1]]
    # [B, R, S] index of stretched cell (r, s) in the B * M1 * M2 cells of x
    cell = (torch.arange(b, device=x.device)[:, None, None] * m1 + rows[:, :, None]) * m2 + cols[:, None, :]
    cells = x.permute(0, 2, 3, 1).reshape(b * m1 * m2, c).index_select(0, cell.flatten())
    stretched = cells.view(b, rows.size(1), cols.size(1), c).permute(0, 3, 1, 2)
    return F.max_pool2d(stretched, window)


class MatchPyramid(InteractionRanker):
    """A side is a text's token ids at its fixed width and its real length as MatchZoo's generators
    count it (the tokens kept by the truncation); the interaction is all the rest. Its word vectors
    are looked up per pair: that costs what gathering cached ones would, without the cache."""

    def __init__(self, cfg, vocab_size: int, embeddings):
        super().__init__()
        self.sides = TextSides(cfg, vocab_size, embeddings)
        self.conv = nn.Conv2d(1, cfg.kernel_count, tuple(cfg.kernel_size), padding="same")
        self.dpool_size, self.pooling = tuple(cfg.dpool_size), cfg.pooling
        self.head = output_layers(cfg, cfg.kernel_count * self.dpool_size[0] * self.dpool_size[1])

    def _side(self, ids: torch.Tensor, side: int) -> tuple[torch.Tensor, torch.Tensor]:
        ids = fixed_length(ids, self.sides.maxlen[side])
        return ids, padding_mask(ids).sum(1)

    def encode_question_side(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self._side(q, 0)

    def encode_answer_side(self, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self._side(a, 1)

    def interact(self, q_side, a_side) -> torch.Tensor:
        (q, lq), (a, la) = q_side, a_side
        image = torch.bmm(self.sides(q, 0).transpose(1, 2), self.sides(a, 1)).unsqueeze(1)
        if self.pooling == "adaptive_avg":
            # MatchZoo-py's: the lengths unread, each window's mean over every cell of the fixed grid,
            # padding's too (its zero match convolved), ReLU first as the mean needs
            return self.head(F.adaptive_avg_pool2d(torch.relu(self.conv(image)), self.dpool_size))
        # ReLU after the pooling, on ~1/13 of the cells: max(relu(x)) = relu(max(x)), gradients included
        return self.head(torch.relu(dynamic_max_pool(self.conv(image), lq, la, self.dpool_size)))
