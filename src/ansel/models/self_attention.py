"""Self-attention encoders: the global block of Vaswani et al. (2017) and the local / group
variants of GGSA (Xu et al., "Gated Group Self-Attention for Answer Selection").

Every attention variant maps q, k, v [B, heads, L, d] and a key mask [B, L] to [B, heads, L, d];
``SelfAttentionEncoder`` wraps one of them in the projections, residuals, LayerNorms and FFN
of a self-attention block and follows the encoder contract of ``models/encoders.py``
(forward(x [B, L, D], mask [B, L]) -> (h [B, L, D], mask), ``out_dim``).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.function import once_differentiable

from ansel.models.layers import masked_mean, masked_softmax


def sinusoidal_positions(length: int, dim: int, device=None) -> torch.Tensor:
    """[length, dim] table: sin on even dimensions, cos on odd ones (Vaswani et al. 2017)."""
    position = torch.arange(length, device=device, dtype=torch.float32).unsqueeze(1)
    rate = torch.exp(torch.arange(0, dim, 2, device=device, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim, device=device)
    table[:, 0::2] = torch.sin(position * rate)
    table[:, 1::2] = torch.cos(position * rate[: dim // 2])
    return table


class PositionalEmbedding(nn.Module):
    """Word embedding -> dropout -> (projection) -> + sinusoidal positions.

    The paper drops out the word embeddings *before* adding positions (keep 0.7). With frozen
    pre-trained vectors (its yahooQA setting) a trainable projection adapts them instead.
    """

    def __init__(self, embedding: nn.Embedding, dropout: float, projection: bool = False):
        super().__init__()
        self.embedding = embedding
        self.dropout = nn.Dropout(dropout)
        dim = embedding.embedding_dim
        self.projection = nn.Linear(dim, dim) if projection else nn.Identity()

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.projection(self.dropout(self.embedding(ids)))
        return x + sinusoidal_positions(ids.size(1), x.size(-1), x.device)


class GlobalAttention(nn.Module):
    """Every word attends to every real word: O(L^2 D).

    torch's fused kernel (several times faster on CPU than matmul + softmax at L=200) is the
    standard path of the library, as a Transformer implementation would use it. A padded query
    attends to the real words like any other (the output mask drops it); a text without real
    words gets zeros, not NaNs.
    """

    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :])


class LocalAttention(nn.Module):
    """Each word attends to the ``window`` words around it (Figure 4b): ``(window - 1) // 2`` before
    it, itself, and the rest after (an even window, as the paper's 10, has one more after).

    Built like the paper's baseline with "img2col": keys and values are unfolded into one
    window per position ([B, heads, L, window, d]), so the cost is O(L * window * D) in
    arithmetic but the unfolded copies grow memory traffic by a factor of ``window``. Each
    query has its own key window, so no matrix-matrix product or fused attention kernel
    applies; a query whose window holds only padding gets zeros.
    """

    def __init__(self, window: int):
        super().__init__()
        if window < 1:
            raise ValueError(f"local attention window must be >= 1, got {window}")
        self.window = window
        self.left = (window - 1) // 2
        self.right = window - 1 - self.left

    def _windows(self, t: torch.Tensor, value=0) -> torch.Tensor:
        # pad the sequence axis (dim 2 for [B, h, L, d], dim 1 for a [B, L] mask), then slide.
        seq_dim = 2 if t.dim() == 4 else 1
        pad = [0, 0] * (t.dim() - seq_dim - 1) + [self.left, self.right]
        windows = F.pad(t, pad, value=value).unfold(seq_dim, self.window, 1)
        return windows.movedim(-1, -2) if t.dim() == 4 else windows  # [B,h,L,w,d] / [B,L,w]

    def forward(self, q, k, v, mask):
        kw, vw = self._windows(k), self._windows(v)
        key_mask = self._windows(mask, value=False)[:, None]  # [B, 1, L, window]
        # multiply-and-sum over the unfolded windows: ~25% faster on CPU than the same products
        # as einsum / batched matrix-vector products (B=16, L=200, window 10, one thread).
        scores = (q.unsqueeze(-2) * kw).sum(-1) / math.sqrt(q.size(-1))
        return (masked_softmax(scores, key_mask).unsqueeze(-1) * vw).sum(-2)


def head_offsets(heads: int, group_size: int, offset: bool) -> list[int]:
    """Where each head's groups start. Paper: offset 0 for 3 heads and 5 for the other 3
    (6 heads, groups of 10); without ``offset`` every head starts at 0."""
    shifted = heads // 2 if offset else 0
    return [0] * (heads - shifted) + [group_size // 2] * shifted


def group_shift(group_size: int, offset: int) -> int:
    """How far a head's sequence is rolled right so that its groups start at ``offset``."""
    return (group_size - offset) % group_size


def group_index(length: int, group_size: int, offset: int) -> torch.Tensor:
    """Group id of each position [length] for one head (Figure 5).

    With offset o the group boundaries sit at o, o + l, o + 2l, ...: positions 0..o-1 form a
    group of their own (completed by padding), so a word next to a boundary of the offset-0
    heads shares a group with its neighbours in the offset heads.
    """
    return (torch.arange(length) + group_shift(group_size, offset)) // group_size


class _GroupedProducts(torch.autograd.Function):
    """softmax(q k^T * scale + bias) v within groups, from and back to [B, heads, L, d], with
    zeros for padded words: ``queries`` [groups, l, 1] (1 on real words, 0 on padding) zeroes
    their weights. Otherwise a padded word in a group of padding would get uniform weights from
    scores that are only the bias (q k^T rounded away), which the softmax backward does not
    differentiate correctly; with them zeroed, the backward is exact for every output.

    ``gather`` [B * heads * padded] gives the row of the flattened (batch, head, position) axis
    that each group slot holds, ``pad`` [heads * padded] the slots past the sequence, which
    hold zeros, ``scatter`` [B * heads * L] each row's slot. Every row sits in exactly one slot
    and the padding slots are constants, so the gradient of each selection is exactly the
    other selection. Autograd's gradient of a selection is an index_add, about twice the cost
    of a selection, and the selections are a third of the step: hence a hand-written backward.

    Written in torch.func's form (``setup_context``; the grouped q, k, v and the weights returned
    for it to save) so that ``vmap`` runs it over a row's stacked seeds (``generate_vmap_rule``: its
    forward and backward are tensor operations that vmap batches, the indices shared by every seed).
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(q, k, v, bias, queries, gather, pad, scatter, scale):
        shape, group = q.shape, (-1, bias.size(-1), q.size(-1))
        q, k, v = (_select_rows(t, gather, pad).view(group) for t in (q, k, v))
        # Explicit products, not the fused kernel: for groups of ~10 the fused kernel's blocking
        # overhead outweighs its savings (measured in benchmarks/bench_ggsa_cost.py).
        weights = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=scale).softmax(-1).mul_(queries)
        return _select_rows(torch.bmm(weights, v), scatter).view(shape), q, k, v, weights

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, q, k, v, weights = output
        gather, pad, scatter, scale = inputs[5:]
        ctx.mark_non_differentiable(q, k, v, weights)
        ctx.set_materialize_grads(False)  # no zeros the size of q, k, v and the weights as their gradients
        ctx.save_for_backward(q, k, v, weights, gather, pad, scatter)
        ctx.scale = scale
        # under CUDA autocast (train.precision bf16) the products run in bfloat16 and the softmax in
        # float32: the backward runs under the forward's autocast state, so its products see the dtypes it saw
        ctx.autocast = torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda")

    @staticmethod
    @once_differentiable
    def backward(ctx, grad, *_):
        if grad is None:  # the output unused (gradients are not materialised: the setup's note)
            return (None,) * 9
        q, k, v, weights, gather, pad, scatter = ctx.saved_tensors
        enabled, dtype = ctx.autocast
        with torch.autocast("cuda", enabled=enabled, dtype=dtype):
            shape = grad.shape
            grad = _select_rows(grad, gather, pad).view(v.shape)  # padding slots are no outputs: 0
            scores = torch.bmm(grad, v.transpose(1, 2)).mul_(weights)  # softmax backward, then the scale
            scores = torch.addcmul(scores, weights, scores.sum(-1, keepdim=True), value=-1).mul_(ctx.scale)
            grads = (
                torch.bmm(scores, k),
                torch.bmm(scores.transpose(1, 2), q),
                torch.bmm(weights.transpose(1, 2), grad),
            )
            return (*(_select_rows(g, scatter).view(shape) for g in grads), None, None, None, None, None, None)


def _select_rows(t: torch.Tensor, rows: torch.Tensor, pad: torch.Tensor | None = None) -> torch.Tensor:
    """The ``rows`` of t viewed as [rows, d]; with ``pad``, the selection viewed as
    [B, heads * padded, d] gets zeros in those slots. Selecting whole rows of a 2-D view is
    ~25% faster on CPU than selecting along the middle axis of [B, rows, d]."""
    out = t.reshape(-1, t.size(-1)).index_select(0, rows)
    if pad is not None:
        out.view(t.size(0), -1, t.size(-1)).index_fill_(1, pad, 0)
    return out


@functools.lru_cache(maxsize=1024)
def _group_slots(length: int, size: int, shifts: tuple[int, ...], device: torch.device) -> tuple[torch.Tensor, ...]:
    """The slots of every head's groups for texts of ``length`` words, from the shapes alone (so a
    traced or vmapped forward reads no tensor's value): (source [heads, padded]: the position slot j
    of head h holds, 0 past the sequence; real [heads, padded]: the slots within it; gather [heads,
    padded] and scatter [heads, length]: the rows of one text's flattened (head, position) axis and
    of its slots; pad [heads * padded]: the slots past the sequence). Cached: a run has few lengths."""
    heads = len(shifts)
    padded = -(-(length + max(shifts)) // size) * size
    shift = torch.tensor(shifts)[:, None]
    head = torch.arange(heads)[:, None]
    # Slot j of head h holds position (j - shift_h) mod padded, or zeros past the sequence.
    source = (torch.arange(padded)[None, :] - shift) % padded
    real = source < length
    source = source.where(real, 0)
    slot = (torch.arange(length)[None, :] + shift) % padded
    pad = (~real).flatten().nonzero().flatten()
    return tuple(t.to(device) for t in (source, real, head * length + source, head * padded + slot, pad))


class GroupAttention(nn.Module):
    """Attention within non-overlapping groups of ``group_size`` words, per head: O(L * l * D).

    ``offsets[h]`` shifts head h's group boundaries. Each head's sequence is rolled right by
    its shift and padded to whole groups in one row selection over the flattened
    (batch, head, position) axis, cut into groups by a reshape to [B * heads * groups, l, d],
    attended with two batched matrix products, and rolled back by a second selection. Every
    intermediate grows linearly with L (the gathered q, k, v [B, heads, padded, d], the scores
    [B, heads, groups, l, l]); the mask is an additive bias per group [.., 1, l], broadcast,
    never filled into the scores. Padding slots hold zeros; room for the largest shift is left
    at the end, so a word's group never depends on how much padding follows it. Padded words
    get zeros.
    """

    def __init__(self, group_size: int, offsets: Sequence[int]):
        super().__init__()
        if group_size < 1:
            raise ValueError(f"group_size must be >= 1, got {group_size}")
        self.group_size = group_size
        self.shifts = tuple(group_shift(group_size, o) for o in offsets)

    def forward(self, q, k, v, mask):
        b, heads, length, d = q.shape
        if heads != len(self.shifts):
            raise ValueError(f"group attention has {len(self.shifts)} offsets for {heads} heads")
        size = self.group_size
        source, real, gather, scatter, pad = _group_slots(length, size, self.shifts, q.device)
        words = (mask[:, source] & real).view(-1, 1, size)  # the real words of each group: its keys and queries
        bias = torch.zeros(words.shape, dtype=q.dtype, device=q.device).masked_fill(~words, torch.finfo(q.dtype).min)
        batch = torch.arange(b, device=q.device)[:, None, None]
        return _GroupedProducts.apply(
            q,
            k,
            v,
            bias,
            words.transpose(1, 2).to(q.dtype),
            (batch * (heads * length) + gather).flatten(),
            pad,
            (batch * (heads * source.size(1)) + scatter).flatten(),
            1 / math.sqrt(d),
        )[0]


class GlobalInformationGate(nn.Module):
    """g_i = sigmoid(W (x_i * x_mean) + b), x_mean over the real words (GGSA eq. 1); returns X * G."""

    def __init__(self, dim: int):
        super().__init__()
        self.linear = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        context = masked_mean(x, mask).unsqueeze(1)  # [B, 1, D], broadcast over positions
        return x * torch.sigmoid(self.linear(x * context))


def feed_forward(dim: int, hidden: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim))


class SelfAttentionEncoder(nn.Module):
    """One self-attention block around an attention variant (GGSA eqs. 1-7).

    X' = gate(X) if gate else X
    C  = W_o · attention(W_q X', W_k X', W_v X')         (multi-head, d = D / heads)
    Y  = LayerNorm(X + C)
    [interaction, iGGSA, when a question context c_q is given:
     Y  = LayerNorm(Y + FFN_int(Y * c_q))]
    H  = Y + FFN(Y), then LayerNorm if ``final_norm`` (global block: yes; GGSA: no)
    """

    def __init__(
        self,
        dim: int,
        heads: int,
        attention: nn.Module,
        ffn_dim: int,
        gate: bool = False,
        final_norm: bool = True,
        interaction: bool = False,
    ):
        super().__init__()
        if dim % heads:
            raise ValueError(f"model dimension {dim} is not divisible by {heads} heads")
        self.heads = heads
        self.attention = attention
        self.gate = GlobalInformationGate(dim) if gate else None
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.ffn = feed_forward(dim, ffn_dim)
        self.final_norm = nn.LayerNorm(dim) if final_norm else nn.Identity()
        if interaction:
            self.interaction_ffn = feed_forward(dim, ffn_dim)
            self.interaction_norm = nn.LayerNorm(dim)
        self.interaction = interaction
        self.out_dim = dim

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor, context: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``context`` [B, D]: the question vector c_q for an iGGSA answer encoder."""
        b, length, dim = x.shape
        gated = self.gate(x, mask) if self.gate is not None else x
        q, k, v = self.qkv(gated).view(b, length, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        c = self.attention(q, k, v, mask).transpose(1, 2).reshape(b, length, dim)
        y = self.norm1(x + self.out(c))
        if context is not None:
            if not self.interaction:
                raise ValueError("this encoder was built without the question-answer interaction")
            y = self.interaction_norm(y + self.interaction_ffn(y * context.unsqueeze(1)))
        return self.final_norm(y + self.ffn(y)), mask
