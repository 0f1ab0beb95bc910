"""The MatchPyramid module and MatchZoo 1.x's dynamic max-pooling (hyperparameters and the pooling
switch: ``ansel.models.archs.matchpyramid``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.arc import TextSides, output_layers
from ansel.models.base import InteractionRanker, padding_mask
from ansel.models.layers import fixed_length


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
