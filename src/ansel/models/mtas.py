"""The MTAS, IARNN-word and multi-width CNN modules (hyperparameters and the code-vs-paper
switches: ``ansel.models.archs.mtas``; what upstream computes: ``upstream-notes.md`` §1.3-1.5).

Initialisation follows the authors' TF1 graphs: attention matrices and convolution filters
truncated-normal(0, 0.1) (the convolution bias 0.1), dense layers and LSTMs TF's defaults as
``layers.keras_init`` gives them (Glorot-uniform kernels, zero biases, forget-gate bias 1; TF1's
BasicLSTMCell draws one Glorot matrix over [input; state] where keras_init makes the recurrent
part orthogonal).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.base import InteractionRanker, Ranker, SiameseRanker
from ansel.models.encoders import BiLSTMEncoder, bilstm_encoder
from ansel.models.layers import (
    dropped_embedding,
    keras_init,
    masked_max,
    masked_softmax,
    read_ids,
    read_padding,
    word_embedding,
)
from ansel.models.scorers import CosineScorer


def _truncated_normal(t: torch.Tensor) -> torch.Tensor:
    """TF's truncated_normal(stddev=0.1): redrawn beyond two standard deviations."""
    return nn.init.trunc_normal_(t, std=0.1, a=-0.2, b=0.2)


class MultiHeadAnswerAttention(nn.Module):
    """MTAS's heads, as coded: for head i, M_t = tanh(W_qm,i o_q + W_am,i h^a_t),
    s = softmax_t(w_ms,i · M_t), head_i = tanh(pool_t(s_t h^a_t)) with pool max (code) or sum;
    o_q is the max-pooled question. Returns the heads concatenated, [B, heads x H].

    All heads are computed at once: W_qm and W_am stack the heads' matrices (no bias, as coded).
    ``reads_padding``: every answer position is read (the code's fixed-width inputs, an all-True
    mask), so the softmax and the max skip the masking passes, which would change no value.
    """

    def __init__(self, dim: int, attention: int, heads: int, pooling: str, reads_padding: bool = False):
        super().__init__()
        self.heads, self.pooling, self.reads_padding = heads, pooling, reads_padding
        self.question_proj = nn.Linear(dim, heads * attention, bias=False)
        self.answer_proj = nn.Linear(dim, heads * attention, bias=False)
        self.score = nn.Parameter(torch.empty(heads, attention))
        with torch.no_grad():
            for w in (self.question_proj.weight, self.answer_proj.weight, self.score):
                _truncated_normal(w)

    def weights(
        self, oq: torch.Tensor, ha: torch.Tensor, ma: torch.Tensor, projected: torch.Tensor | None = None
    ) -> torch.Tensor:
        """s [B, heads, La]: each head's softmax over the answer positions the mask admits;
        ``projected``: W_am h^a, where the answer side already holds it (it reads no question), a
        temporary the sum is written into."""
        projected = self.answer_proj(ha) if projected is None else projected
        # in place: a product's output (autograd saves its inputs), or the scorer's: its gathered copy
        # of one, or the encoded batch's own where each of its answers is scored once
        m = torch.tanh_(projected.add_(self.question_proj(oq).unsqueeze(1)))
        logits = (m.unflatten(-1, (self.heads, -1)) * self.score).sum(-1).transpose(1, 2)  # [B, heads, La]
        return torch.softmax(logits, -1) if self.reads_padding else masked_softmax(logits, ma.unsqueeze(1))

    def forward(
        self, oq: torch.Tensor, ha: torch.Tensor, ma: torch.Tensor, projected: torch.Tensor | None = None
    ) -> torch.Tensor:
        s = self.weights(oq, ha, ma, projected)
        if self.pooling == "sum":
            return torch.tanh((s @ ha).flatten(1))
        st = s.transpose(1, 2).contiguous()  # [B, La, heads]
        if self.reads_padding and not torch.is_grad_enabled():
            return torch.tanh(_running_max(st, ha))
        # [B, La, heads x H]: from contiguous factors the product is contiguous, so flatten copies nothing
        weighted = (st.unsqueeze(-1) * ha.unsqueeze(2)).flatten(2)
        return torch.tanh(masked_max(weighted, ma, overwrite=True, every_step=self.reads_padding))


def _running_max(st: torch.Tensor, ha: torch.Tensor, steps: int = 10) -> torch.Tensor:
    """max_t of st_t,i h_t [B, heads x H] without the whole [B, La, heads, H] product: a running max over
    ``steps`` positions at a time, products the same, a max exact (scoring a split of MTAS: 11 -> 2 ms a
    batch of 256 answers). Without gradients only: amax would split a tie's gradient where max gives it to one."""
    out = None
    for t in range(0, ha.size(1), steps):
        part = (st[:, t : t + steps].unsqueeze(-1) * ha[:, t : t + steps].unsqueeze(2)).amax(1)
        out = part if out is None else torch.maximum(out, part)
    return out.flatten(1)


def category_head(kind: str, features: int, n_categories: int) -> nn.Sequential:
    """``upstream``: dense(F/2, relu) -> dense(F, relu) -> dense(C, sigmoid); the code feeds those
    sigmoid outputs to softmax cross-entropy as logits, so they are returned as the logits.
    ``paper`` (eq. 7): f = tanh(V1 h), logits V2 f, without biases as the equation writes it; the
    paper gives no width for f, which takes upstream's first width F/2."""
    if kind == "upstream":
        return keras_init(
            nn.Sequential(
                nn.Linear(features, features // 2),
                nn.ReLU(),
                nn.Linear(features // 2, features),
                nn.ReLU(),
                nn.Linear(features, n_categories),
                nn.Sigmoid(),
            )
        )
    return keras_init(
        nn.Sequential(
            nn.Linear(features, features // 2, bias=False),
            nn.Tanh(),
            nn.Linear(features // 2, n_categories, bias=False),
        )
    )


class MTAS(InteractionRanker):
    """Not siamese: the answer's attention reads the question; its BiLSTM does not, so scoring
    encodes each distinct answer once (the question side: its max-pooled states; the answer side:
    its states, mask and the heads' projection of them) and only the rest of the attention runs per pair.

    ``mask_padding: false`` (as coded) reads every text as exactly ``max_len`` tokens, PAD-filled:
    the BiLSTM runs over the padding (its backward pass starts there), and the softmax and the
    max-pooling cover it, so a score depends on how much padding a text has; the fixed width makes
    it independent of the batch the text is scored in. ``true`` masks the padding everywhere (a
    packed BiLSTM, a masked softmax and max): padding changes no score.
    """

    def __init__(self, cfg, vocab_size: int, embeddings: np.ndarray | None, n_categories: int):
        super().__init__()
        self.heads, self.max_len, self.read_padding = cfg.heads, cfg.max_len, read_padding(cfg)
        self.embed = dropped_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings, cfg.dropout)
        self.encoder = keras_init(BiLSTMEncoder(cfg.embedding_dim, cfg.hidden))
        self.answer_attention = MultiHeadAnswerAttention(
            self.encoder.out_dim, cfg.attention, cfg.heads, cfg.head_pooling, reads_padding=bool(self.read_padding)
        )
        self.classifier = category_head(cfg.classifier, cfg.heads * self.encoder.out_dim, n_categories)
        self.scorer = CosineScorer()

    def states(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """BiLSTM states [B, L, 2 x hidden] and the positions attention and pooling read: the
        real tokens, or (unmasked) all ``max_len`` positions, which the BiLSTM then reads too."""
        ids, mask = read_ids(ids[:, : self.max_len], self.read_padding)
        return self.encoder(self.embed(ids), mask)

    def _pooled_question(self, q: torch.Tensor) -> torch.Tensor:
        return masked_max(*self.states(q), every_step=bool(self.read_padding))

    def _question_output(self, pooled: torch.Tensor) -> torch.Tensor:
        """One copy of tanh(max-pooled H^q) per head, as the code concatenates them."""
        return torch.tanh(pooled).repeat(1, self.heads)

    def encode_question_side(self, q: torch.Tensor) -> tuple[torch.Tensor]:
        return (self._pooled_question(q),)

    def encode_answer_side(self, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The answer's states, mask and their projection by every head (W_am h^a: the attention's
        larger product, which reads no question)."""
        ha, ma = self.states(a)
        return ha, ma, self.answer_attention.answer_proj(ha)

    def interact(self, q_side: tuple[torch.Tensor, ...], a_side: tuple[torch.Tensor, ...]) -> torch.Tensor:
        (pooled,) = q_side
        return self.scorer(self._question_output(pooled), self.answer_attention(pooled, *a_side))

    def classify(self, q: torch.Tensor) -> torch.Tensor:
        """Category logits [B, n_categories] of the questions (upstream: sigmoid outputs)."""
        return self.classifier(self._question_output(self._pooled_question(q)))


class IARNNWord(Ranker):
    """IARNN-word as coded (upstream-notes §1.5): q = tanh(max-pool BiLSTM(q)); each answer word
    vector is scaled by σ(e_tᵀ U q), the shared BiLSTM reads the scaled vectors, max-pool, tanh;
    cosine. ``mask_padding: false`` (as coded) reads fixed ``max_len``-token inputs, padding too;
    ``true`` masks it (a packed BiLSTM, a masked max), so it changes no score."""

    def __init__(self, cfg, vocab_size: int, embeddings: np.ndarray | None):
        super().__init__()
        self.read_padding = read_padding(cfg)
        self.embed = dropped_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings, cfg.dropout)
        self.encoder = bilstm_encoder(cfg)
        self.gate = nn.Linear(self.encoder.out_dim, cfg.embedding_dim, bias=False)  # U: q -> U q
        with torch.no_grad():
            _truncated_normal(self.gate.weight)
        self.scorer = CosineScorer()

    def _pooled(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.tanh(masked_max(*self.encoder(x, mask), every_step=bool(self.read_padding)))

    def word_gates(self, vq: torch.Tensor, ea: torch.Tensor) -> torch.Tensor:
        """σ(e_tᵀ U q) [B, La] for the question vectors vq and the answer word vectors ea."""
        return torch.sigmoid((ea @ self.gate(vq).unsqueeze(-1)).squeeze(-1))

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        (q, mq), (a, ma) = read_ids(q, self.read_padding), read_ids(a, self.read_padding)
        vq = self._pooled(self.embed(q), mq)
        ea = self.embed(a)
        va = self._pooled(ea * self.word_gates(vq, ea).unsqueeze(-1), ma)
        return self.scorer(vq, va)


class ValidConvolution(nn.Module):
    """Valid convolution of k-word windows + ReLU (an encoder: x [B, D, L] + mask -> h [B, L', F],
    mask; x channels first, as the convolution reads it: the widths of MultiWidthCNN share one copy).

    Window j covers words j .. j+k-1; it is real iff it lies within the text. A text shorter than
    k has one window, its words followed by zero vectors (padded embeddings are zero): the input
    is zero-padded to k positions, so the window does not depend on the batch's padding either.
    """

    def __init__(self, in_dim: int, filters: int, kernel: int):
        super().__init__()
        self.kernel = kernel
        self.conv = nn.Conv1d(in_dim, filters, kernel)
        with torch.no_grad():
            _truncated_normal(self.conv.weight)
            nn.init.constant_(self.conv.bias, 0.1)
        self.out_dim = filters

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = F.pad(x, (0, max(0, self.kernel - x.size(2))))
        h = torch.relu(self.conv(x)).transpose(1, 2)
        lengths = mask.sum(1, keepdim=True)
        starts = torch.arange(h.size(1), device=h.device).unsqueeze(0)
        return h, (starts <= lengths.clamp_min(self.kernel) - self.kernel) & (lengths > 0)


class MultiWidthCNN(SiameseRanker):
    """The MTAS authors' CNN baseline (``cnn_multitask``, upstream-notes §1.5): filters of each
    width shared by question and answer, ReLU, max over the windows, the widths' vectors
    concatenated (len(kernels) x filters), cosine. ``mask_padding: false`` (as coded): fixed
    ``max_len``-token inputs, every window pooled, those over padding too; ``true``: the real ones."""

    def __init__(self, cfg, vocab_size: int, embeddings: np.ndarray | None):
        super().__init__()
        self.read_padding = read_padding(cfg)
        self.embedding = word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings)
        self.convs = nn.ModuleList(ValidConvolution(cfg.embedding_dim, cfg.filters, k) for k in cfg.kernels)
        self.dropout = nn.Dropout(cfg.dropout)
        self.scorer = CosineScorer()

    def _encode(self, ids: torch.Tensor) -> torch.Tensor:
        ids, mask = read_ids(ids, self.read_padding)
        x = self.embedding(ids).transpose(1, 2).contiguous()
        # read whole, every window of a fixed-width text is real
        pooled = [masked_max(*conv(x, mask), every_step=bool(self.read_padding)) for conv in self.convs]
        return self.dropout(torch.cat(pooled, dim=1))

    encode_question = _encode
    encode_answer = _encode

    def similarity(self, qv: torch.Tensor, av: torch.Tensor) -> torch.Tensor:
        return self.scorer(qv, av)
