"""Attentive Pooling Networks (dos Santos et al., 2016): AP-CNN and AP-biLSTM.

Q [B, M, c] and A [B, L, c] come from one encoder shared by question and answer. Attentive
pooling learns U [c, c], forms the soft alignment G = tanh(Q U Aᵀ) [B, M, L], max-pools G
along each axis (g_q [B, M], g_a [B, L]), turns the maxima into attention vectors with a
softmax (σq, σa) and pools r_q = Σ_m σq_m Q_m, r_a = Σ_l σa_l A_l; the score is cos(r_q, r_a).
Not siamese: the answer representation depends on the question.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.base import Ranker, padding_mask
from ansel.models.encoders import BiLSTMEncoder, CNNEncoder
from ansel.models.layers import word_embedding
from ansel.models.hparams import APCNNConfig, QALSTMConfig
from ansel.models.registry import register


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis that gives padded positions exactly zero weight.

    A row with no real position (empty text) gets all-zero weights instead of NaN.
    """
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=-1) * mask.to(scores.dtype)


class AttentivePooling(nn.Module):
    """Two-way attention over encoder outputs; returns (r_q, r_a, σq, σa)."""

    def __init__(self, dim: int):
        super().__init__()
        self.U = nn.Parameter(torch.empty(dim, dim))
        nn.init.xavier_uniform_(self.U)  # the paper does not say how U is initialised

    def forward(self, Q: torch.Tensor, q_mask: torch.Tensor, A: torch.Tensor, a_mask: torch.Tensor):
        G = torch.tanh(Q @ self.U @ A.transpose(1, 2))                       # [B, M, L]
        pair_mask = q_mask.unsqueeze(2) & a_mask.unsqueeze(1)
        # tanh is bounded by 1, so the dtype's minimum can never win a max over real cells.
        G = G.masked_fill(~pair_mask, torch.finfo(G.dtype).min)
        sigma_q = masked_softmax(G.max(dim=2).values, q_mask)               # row-wise max -> [B, M]
        sigma_a = masked_softmax(G.max(dim=1).values, a_mask)               # column-wise max -> [B, L]
        r_q = (sigma_q.unsqueeze(-1) * Q).sum(1)
        r_a = (sigma_a.unsqueeze(-1) * A).sum(1)
        return r_q, r_a, sigma_q, sigma_a


class AttentivePoolingRanker(Ranker):
    """embedding -> shared encoder -> attentive pooling -> cosine."""

    def __init__(self, embedding: nn.Embedding, encoder: nn.Module, dropout: float):
        super().__init__()
        self.embedding = embedding
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.pooling = AttentivePooling(encoder.out_dim)

    def _encode(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.encoder(self.dropout(self.embedding(ids)), padding_mask(ids))

    def _pool(self, q: torch.Tensor, a: torch.Tensor):
        Q, q_mask = self._encode(q)
        A, a_mask = self._encode(a)
        return self.pooling(Q, q_mask, A, a_mask)

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        r_q, r_a, _, _ = self._pool(q, a)
        return F.cosine_similarity(r_q, r_a, dim=-1, eps=1e-8)

    @torch.no_grad()
    def attention(self, q: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(σq [B, M'], σa [B, L']) over encoder positions, for heat maps.

        For AP-CNN position j is the k-word window ending at token j (wide convolution,
        M' = M + k - 1); ``ansel.report.attention_maps.window_to_tokens`` maps it to tokens.
        """
        _, _, sigma_q, sigma_a = self._pool(q, a)
        return sigma_q, sigma_a


@register("ap_cnn")
def build_ap_cnn(cfg: APCNNConfig, vocab_size: int, embeddings: np.ndarray | None) -> AttentivePoolingRanker:
    emb = word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings)
    # The paper's convolution is linear (Q = W1 Z + b1, §2.1); the non-linearity is G's tanh.
    encoder = CNNEncoder(cfg.embedding_dim, cfg.filters, cfg.kernel, activation=False)
    return AttentivePoolingRanker(emb, encoder, cfg.dropout)


@register("ap_bilstm")
def build_ap_bilstm(cfg: QALSTMConfig, vocab_size: int, embeddings: np.ndarray | None) -> AttentivePoolingRanker:
    emb = word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings)
    return AttentivePoolingRanker(emb, BiLSTMEncoder(cfg.embedding_dim, cfg.hidden), cfg.dropout)
