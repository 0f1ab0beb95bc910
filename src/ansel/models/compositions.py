"""Compositions: encoder states of both texts -> the vectors a scorer compares (DESIGN.md principle 4).

A composition maps question states (hq [B, Lq, H], mq [B, Lq]) and answer states
(ha [B, La, H], ma [B, La]) to a tuple of vectors for the scorer: one per side (vq, va), or
one joint vector (v,) for compositions that read both texts at once (interaction matrices).
A ``Pooling`` pools each side on its own, which makes its ranker siamese.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.encoders import BiLSTMEncoder
from ansel.models.hparams import COMPOSITIONS
from ansel.models.layers import masked_max, masked_mean, masked_softmax


class Pooling(nn.Module):
    """A composition in which neither side sees the other: ``pool`` [B, L, H] -> [B, H] per side."""

    def pool(self, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError

    def forward(self, hq, mq, ha, ma):
        return self.pool(hq, mq), self.pool(ha, ma)


class MaxPooling(Pooling):
    """Column-wise max over real positions, then tanh if asked (dos Santos et al. 2016, §2.3)."""

    def __init__(self, tanh: bool = False):
        super().__init__()
        self.tanh = tanh

    def pool(self, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        v = masked_max(h, mask)
        return torch.tanh(v) if self.tanh else v


class QuestionAttentionPooling(nn.Module):
    """QA-LSTM with attention (Tan et al. 2016): the max-pooled question o_q weights the answer
    states, m(t) = tanh(W_a h_a(t) + W_q o_q), s(t) = softmax_t(w^T m(t)); the answer vector is
    the max over t of h_a(t) * s(t)."""

    def __init__(self, dim: int):
        super().__init__()
        self.answer_proj = nn.Linear(dim, dim, bias=False)
        self.question_proj = nn.Linear(dim, dim, bias=False)
        self.weight = nn.Linear(dim, 1, bias=False)

    def forward(self, hq, mq, ha, ma):
        oq = masked_max(hq, mq)
        m = torch.tanh(self.answer_proj(ha) + self.question_proj(oq).unsqueeze(1))
        s = masked_softmax(self.weight(m).squeeze(-1), ma)
        return oq, masked_max(ha * s.unsqueeze(-1), ma)


class MultihopSequentialAttention(nn.Module):
    """Multihop attention with sequential attention on the answer (Tran & Niederée 2018).

    Hop k attends over the question with a memory m_{k-1} (m_0 = mean of h_q):
        o_q^k = sum_i softmax_i(w_q^T tanh(W_h h_q(i) * tanh(W_m m_{k-1}))) h_q(i),  m_k = m_{k-1} + o_q^k
    and over the answer with sequential attention: a BiLSTM reads h_a(t) * o_q^k, so each
    weight sees its neighbours' match with the question,
        o_a^k = sum_t softmax_t(w_a^T BiLSTM(h_a * o_q^k)(t)) h_a(t).
    Written from the paper's description. Returns one pair per hop, [B, hops, H] per side, for a
    scorer that sums the per-hop similarities (``scorers.SumOverHops``).
    """

    def __init__(self, dim: int, hops: int):
        super().__init__()
        if hops < 1:
            raise ValueError(f"multihop attention needs hops >= 1, got {hops}")
        self.hops = hops
        self.state_proj = nn.Linear(dim, dim, bias=False)
        self.memory_proj = nn.Linear(dim, dim, bias=False)
        self.question_weight = nn.Linear(dim, 1, bias=False)
        self.sequential = BiLSTMEncoder(dim, dim // 2)
        self.answer_weight = nn.Linear(self.sequential.out_dim, 1, bias=False)

    def forward(self, hq, mq, ha, ma):
        memory = masked_mean(hq, mq)
        projected = self.state_proj(hq)
        vq, va = [], []
        for _ in range(self.hops):  # hops are sequential by definition (each reads the memory)
            logits = self.question_weight(torch.tanh(projected * torch.tanh(self.memory_proj(memory)).unsqueeze(1)))
            oq = (masked_softmax(logits.squeeze(-1), mq).unsqueeze(-1) * hq).sum(1)
            context, _ = self.sequential(ha * oq.unsqueeze(1), ma)
            weights = masked_softmax(self.answer_weight(context).squeeze(-1), ma)
            vq.append(oq)
            va.append((weights.unsqueeze(-1) * ha).sum(1))
            memory = memory + oq
        return torch.stack(vq, 1), torch.stack(va, 1)


def make_composition(name: str, dim: int, hops: int) -> nn.Module:
    """The composition a config names (``hparams.COMPOSITIONS``) over encoder states of width ``dim``."""
    if name == "max":
        return MaxPooling()
    if name == "attention":
        return QuestionAttentionPooling(dim)
    if name == "multihop":
        return MultihopSequentialAttention(dim, hops)
    raise ValueError(f"unknown composition {name!r}; known: {', '.join(COMPOSITIONS)}")


class AttentivePooling(nn.Module):
    """Attentive pooling (dos Santos et al. 2016), for AP-CNN and AP-biLSTM.

    Learns U [H, H], forms the soft alignment G = tanh(Q U Aᵀ) [B, M, L], max-pools G along each
    axis (g_q [B, M], g_a [B, L]), turns the maxima into attention vectors with a softmax
    (σq, σa) and pools r_q = Σ_m σq_m Q_m, r_a = Σ_l σa_l A_l.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.U = nn.Parameter(torch.empty(dim, dim))
        nn.init.xavier_uniform_(self.U)  # the paper does not say how U is initialised

    def attention(self, hq, mq, ha, ma) -> tuple[torch.Tensor, torch.Tensor]:
        """(σq [B, M], σa [B, L]), zero on padding."""
        G = torch.tanh(hq @ self.U @ ha.transpose(1, 2))  # [B, M, L]
        pair_mask = mq.unsqueeze(2) & ma.unsqueeze(1)
        # tanh is bounded by 1, so the dtype's minimum can never win a max over real cells.
        G = G.masked_fill(~pair_mask, torch.finfo(G.dtype).min)
        return masked_softmax(G.max(dim=2).values, mq), masked_softmax(G.max(dim=1).values, ma)

    def forward(self, hq, mq, ha, ma):
        sigma_q, sigma_a = self.attention(hq, mq, ha, ma)
        return (sigma_q.unsqueeze(-1) * hq).sum(1), (sigma_a.unsqueeze(-1) * ha).sum(1)


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


class CrossAppliedGates(nn.Module):
    """CTRN's cells (Tay et al. 2018): QRNN fo-pooling of each side with gates cross-applied
    from its partner, then the mean state over real words; states [B, L, 3m] are the gates'
    pre-activations (Z | F | O, ``encoders.QRNNGateEncoder``).

    The partner's gates are summarised by their mean over its real words and averaged with the
    cell's own gate at each step, f_t = (F_s[t] + F̄_partner) / 2 (likewise o_t): the gates stay
    in (0, 1) and no alignment of positions is needed. The cell state starts at zero.
    """

    def forward(self, hq, mq, ha, ma):
        zq, fq, oq = _activate(hq)
        za, fa, oa = _activate(ha)
        fq_cross = (fq + masked_mean(fa, ma).unsqueeze(1)) / 2
        oq_cross = (oq + masked_mean(oa, ma).unsqueeze(1)) / 2
        fa_cross = (fa + masked_mean(fq, mq).unsqueeze(1)) / 2
        oa_cross = (oa + masked_mean(oq, mq).unsqueeze(1)) / 2
        # Both cells in one recurrence: pad the shorter side and stack along the batch.
        length = max(hq.size(1), ha.size(1))
        stacked = [
            torch.cat([_pad_to(x, length), _pad_to(y, length)])
            for x, y in ((zq, za), (fq_cross, fa_cross), (oq_cross, oa_cross))
        ]
        mask = torch.cat([_pad_to(mq, length), _pad_to(ma, length)])
        h = masked_mean(fo_pool(*stacked, mask), mask)
        return h[: hq.size(0)], h[hq.size(0) :]


def _activate(h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    z, f, o = h.chunk(3, dim=-1)
    return torch.tanh(z), torch.sigmoid(f), torch.sigmoid(o)


def _pad_to(t: torch.Tensor, length: int) -> torch.Tensor:
    """Right-pad the sequence axis (dim 1) of [B, L, m] states or a [B, L] mask with zeros / False."""
    return F.pad(t, (0, 0) * (t.dim() - 2) + (0, length - t.size(1)))
