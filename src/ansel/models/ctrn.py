"""Cross Temporal Recurrent Network (CTRN; Tay, Tuan & Hui, AAAI 2018, arXiv 1711.07656).

CTRN is a QRNN (Bradbury et al. 2016) pair encoder whose recurrence on each side is gated by
gates learned on *both* sides: "temporal gates are learned via 1D convolutional layers and then
subsequently cross applied across question and answer" (abstract), so each representation is
"aware of what [its partner] is remembering or forgetting". Not siamese.

What the paper's text we could read fixes (abstract, Figure 1 and its caption; the method
section itself was not in the stored copies we had, so its equations are reconstructed from
the figure, a published summary of the paper, and QRNN):
  1. Embedding -> projection layer (word vectors of size n -> m) (Figure 1).
  2. Per side s in {q, a}, three 1D convolutions over the projected words (QRNN, eq. Z/F/O):
     Z_s = tanh(W_z * X_s), F_s = sigmoid(W_f * X_s), O_s = sigmoid(W_o * X_s)
     ("Conv Z", "Conv F", "Conv O" in Figure 1; the gates are "pre-learned via convolutions").
  3. A CTRN cell per side (CTRN-Q, CTRN-A) runs QRNN fo-pooling over its own Z, with gates
     that combine its own F, O with its partner's ("each CTRN cell incorporates the gates of
     their partner"; the cell reads z_s, f_s, o_s and the partner's f, o):
        c_t = f_t * c_{t-1} + (1 - f_t) * z_t,   h_t = o_t * c_t.
  4. Question and answer vectors -> two-layer MLP -> softmax over (irrelevant, relevant),
     trained with a pointwise cross-entropy (GGSA §4.2: "Following the setting in [CTRN], we
     use pointwise loss ... a two-layer MLP and a Softmax layer"); ``MLPScorer`` returns the
     positive-class log-odds, so BCE on the score is that two-class cross-entropy.

Chosen (the text we had is silent):
  - projection: Linear(n, m) + ReLU; dropout on the word embeddings, before the projection.
  - the convolutions are QRNN's masked (causal) ones, window ``kernel``: step t sees words
    t-k+1..t, so appended padding never reaches a real step; one set of convolution weights
    serves both sides (as the embedding and projection do).
  - cross-application across different lengths: the partner's gates are summarised by their
    mean over its real words (F̄, Ō [B, m]) and averaged with the cell's own gate at each step:
        f_t = (F_s[t] + F̄_partner) / 2,   o_t = (O_s[t] + Ō_partner) / 2
    which keeps the gates in (0, 1) and needs no alignment of positions.
  - the cell state starts at zero and is carried unchanged through padded steps.
  - the side's vector is the mean of h_t over its real words.
  - the MLP is ``MLPScorer`` (tanh hidden layer of width m on [v_q, v_a]); ``scorer: cosine``
    swaps in the cosine for pairwise (hinge) training.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.base import Ranker, padding_mask
from ansel.models.compositions import make_scorer
from ansel.models.hparams import CTRNConfig
from ansel.models.layers import masked_mean, word_embedding
from ansel.models.registry import register


class TemporalGates(nn.Module):
    """Conv Z, Conv F, Conv O: masked 1D convolutions, x [B, L, m] -> (Z, F, O) each [B, L, m]."""

    def __init__(self, dim: int, kernel: int):
        super().__init__()
        self.kernel = kernel
        self.conv = nn.Conv1d(dim, 3 * dim, kernel)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        # Left padding only: step t never sees a later word, so trailing padding is inert.
        h = self.conv(F.pad(x.transpose(1, 2), (self.kernel - 1, 0))).transpose(1, 2)
        z, f, o = h.chunk(3, dim=-1)
        return torch.tanh(z), torch.sigmoid(f), torch.sigmoid(o)


def fo_pool(z: torch.Tensor, f: torch.Tensor, o: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """QRNN fo-pooling over time, c_t = f_t c_{t-1} + (1 - f_t) z_t, h_t = o_t c_t; [B, L, m] -> h.

    Padded steps carry the state unchanged (f = 1, no input). Only the recurrence loops over time;
    the sequences are split into steps once (``unbind``), since indexing [:, t] inside the loop
    would make backward write a full-size gradient per step.
    """
    keep = mask.unsqueeze(-1)
    f = torch.where(keep, f, torch.ones_like(f))
    inputs = torch.where(keep, (1 - f) * z, torch.zeros_like(z))
    c = z.new_zeros(z.size(0), z.size(2))
    cells = []
    for f_t, x_t in zip(f.unbind(1), inputs.unbind(1)):
        c = f_t * c + x_t
        cells.append(c)
    return o * torch.stack(cells, dim=1)


class CTRN(Ranker):
    """embedding -> projection -> Conv Z/F/O per side -> CTRN cells with cross-applied gates -> scorer."""

    def __init__(self, embedding: nn.Embedding, hidden: int, kernel: int, dropout: float, scorer: str):
        super().__init__()
        self.embedding = embedding
        self.dropout = nn.Dropout(dropout)
        self.projection = nn.Sequential(nn.Linear(embedding.embedding_dim, hidden), nn.ReLU())
        self.gates = TemporalGates(hidden, kernel)
        self.scorer = make_scorer(scorer, hidden)

    def _gates(self, ids: torch.Tensor):
        return self.gates(self.projection(self.dropout(self.embedding(ids))))

    def encode(self, q: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(v_q, v_a) [B, m]: each side's mean CTRN state, gated with the partner's mean gates."""
        mq, ma = padding_mask(q), padding_mask(a)
        zq, fq, oq = self._gates(q)
        za, fa, oa = self._gates(a)
        fq_cross = (fq + masked_mean(fa, ma).unsqueeze(1)) / 2
        oq_cross = (oq + masked_mean(oa, ma).unsqueeze(1)) / 2
        fa_cross = (fa + masked_mean(fq, mq).unsqueeze(1)) / 2
        oa_cross = (oa + masked_mean(oq, mq).unsqueeze(1)) / 2
        # Both cells in one recurrence: pad the shorter side and stack along the batch.
        length = max(q.size(1), a.size(1))
        stacked = [torch.cat([F.pad(x, (0, 0, 0, length - x.size(1))), F.pad(y, (0, 0, 0, length - y.size(1)))])
                   for x, y in ((zq, za), (fq_cross, fa_cross), (oq_cross, oa_cross))]
        mask = torch.cat([F.pad(mq, (0, length - mq.size(1))), F.pad(ma, (0, length - ma.size(1)))])
        h = masked_mean(fo_pool(*stacked, mask), mask)
        return h[: q.size(0)], h[q.size(0):]

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return self.scorer(*self.encode(q, a))


@register("ctrn")
def build_ctrn(cfg: CTRNConfig, vocab_size: int, embeddings: np.ndarray | None) -> CTRN:
    emb = word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings)
    return CTRN(emb, cfg.hidden, cfg.kernel, cfg.dropout, cfg.scorer)
