"""Compositions (encoder states -> vectors), scorers (vectors -> score) and the rankers that
join them to an embedding and an encoder (DESIGN.md principle 4).

A composition maps question states (hq [B, Lq, H], mq) and answer states (ha [B, La, H], ma)
to vectors [B, K, H] for each side, K = 1 except for multihop attention (one pair per hop).
The score is the scorer summed over the K pairs (multihop: sum of per-hop cosines).

Also registers the LSTM baselines of the GGSA paper: ``qa_lstm_attn`` (Tan et al. 2016)
and ``multihop_lstm`` (Tran & Niederée 2018, sequential attention).
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.base import Ranker, SiameseRanker, padding_mask
from ansel.models.encoders import BiLSTMEncoder
from ansel.models.layers import masked_max, masked_mean, word_embedding
from ansel.models.hparams import MultihopLSTMConfig, QALSTMAttentionConfig
from ansel.models.registry import register

COMPOSITIONS = ("max", "attention", "multihop")
SCORERS = ("cosine", "mlp")


def _masked_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return logits.masked_fill(~mask, torch.finfo(logits.dtype).min).softmax(-1)


class MaxPooling(nn.Module):
    """Column-wise max over real positions, each side on its own."""

    def forward(self, hq, mq, ha, ma):
        return masked_max(hq, mq).unsqueeze(1), masked_max(ha, ma).unsqueeze(1)


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
        s = _masked_softmax(self.weight(m).squeeze(-1), ma)
        return oq.unsqueeze(1), masked_max(ha * s.unsqueeze(-1), ma).unsqueeze(1)


class MultihopSequentialAttention(nn.Module):
    """Multihop attention with sequential attention on the answer (Tran & Niederée 2018).

    Hop k attends over the question with a memory m_{k-1} (m_0 = mean of h_q):
        o_q^k = sum_i softmax_i(w_q^T tanh(W_h h_q(i) * tanh(W_m m_{k-1}))) h_q(i),  m_k = m_{k-1} + o_q^k
    and over the answer with sequential attention: a BiLSTM reads h_a(t) * o_q^k, so each
    weight sees its neighbours' match with the question,
        o_a^k = sum_t softmax_t(w_a^T BiLSTM(h_a * o_q^k)(t)) h_a(t).
    Written from the paper's description; the score sums the per-hop similarities.
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
            oq = (_masked_softmax(logits.squeeze(-1), mq).unsqueeze(-1) * hq).sum(1)
            context, _ = self.sequential(ha * oq.unsqueeze(1), ma)
            weights = _masked_softmax(self.answer_weight(context).squeeze(-1), ma)
            vq.append(oq)
            va.append((weights.unsqueeze(-1) * ha).sum(1))
            memory = memory + oq
        return torch.stack(vq, 1), torch.stack(va, 1)


def make_composition(name: str, dim: int, hops: int) -> nn.Module:
    if name == "max":
        return MaxPooling()
    if name == "attention":
        return QuestionAttentionPooling(dim)
    if name == "multihop":
        return MultihopSequentialAttention(dim, hops)
    raise ValueError(f"unknown composition {name!r}; known: {', '.join(COMPOSITIONS)}")


class CosineScorer(nn.Module):
    """Cosine of the last dim (pairwise hinge loss, margin 0.1)."""

    def forward(self, vq: torch.Tensor, va: torch.Tensor) -> torch.Tensor:
        return F.cosine_similarity(vq, va, dim=-1, eps=1e-8)


class MLPScorer(nn.Module):
    """Two-layer MLP on [v_q, v_a] -> softmax over (irrelevant, relevant) (pointwise loss).

    Returns the positive-class log-odds logit_1 - logit_0: sigmoid(score) is the softmax's p_1,
    so binary cross-entropy with logits on the score is the paper's two-class cross-entropy,
    and ranking by the score ranks by p_1.
    """

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(2 * dim, hidden), nn.Tanh(), nn.Linear(hidden, 2))

    def forward(self, vq: torch.Tensor, va: torch.Tensor) -> torch.Tensor:
        logits = self.mlp(torch.cat([vq, va], dim=-1))
        return logits[..., 1] - logits[..., 0]


def make_scorer(name: str, dim: int) -> nn.Module:
    if name == "cosine":
        return CosineScorer()
    if name == "mlp":
        return MLPScorer(dim, dim)
    raise ValueError(f"unknown scorer {name!r}; known: {', '.join(SCORERS)}")


class SiameseMaxPoolRanker(SiameseRanker):
    """embed -> shared encoder -> max-pooling -> scorer; each side encoded on its own."""

    def __init__(self, embed: nn.Module, encoder: nn.Module, scorer: nn.Module):
        super().__init__()
        self.embed = embed
        self.encoder = encoder
        self.scorer = scorer

    def _encode(self, ids: torch.Tensor) -> torch.Tensor:
        h, mask = self.encoder(self.embed(ids), padding_mask(ids))
        return masked_max(h, mask)

    encode_question = _encode
    encode_answer = _encode

    def similarity(self, qv: torch.Tensor, av: torch.Tensor) -> torch.Tensor:
        return self.scorer(qv, av)


class ComposedRanker(Ranker):
    """embed -> shared encoder -> question-aware composition -> scorer summed over hops.

    With ``interaction`` (iGGSA) the answer encoder also receives the question vector
    c_q = mean of the question's encoder states (GGSA eq. 5).
    """

    def __init__(self, embed: nn.Module, encoder: nn.Module, composition: nn.Module,
                 scorer: nn.Module, interaction: bool = False):
        super().__init__()
        self.embed = embed
        self.encoder = encoder
        self.composition = composition
        self.scorer = scorer
        self.interaction = interaction

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        hq, mq = self.encoder(self.embed(q), padding_mask(q))
        if self.interaction:
            ha, ma = self.encoder(self.embed(a), padding_mask(a), context=masked_mean(hq, mq))
        else:
            ha, ma = self.encoder(self.embed(a), padding_mask(a))
        vq, va = self.composition(hq, mq, ha, ma)
        return self.scorer(vq, va).sum(1)


def compose(embed: nn.Module, encoder: nn.Module, composition: str, scorer: str,
            hops: int = 1, interaction: bool = False) -> Ranker:
    """The ranker for an encoder: siamese when nothing couples question and answer."""
    score = make_scorer(scorer, encoder.out_dim)
    if composition == "max" and not interaction:
        return SiameseMaxPoolRanker(embed, encoder, score)
    return ComposedRanker(embed, encoder, make_composition(composition, encoder.out_dim, hops),
                          score, interaction)


class EmbeddingDropout(nn.Sequential):
    def __init__(self, embedding: nn.Embedding, dropout: float):
        super().__init__(embedding, nn.Dropout(dropout))


def _lstm_ranker(cfg: QALSTMAttentionConfig, vocab_size: int, embeddings, composition: str,
                 hops: int = 1) -> Ranker:
    embed = EmbeddingDropout(word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings),
                             cfg.dropout)
    return compose(embed, BiLSTMEncoder(cfg.embedding_dim, cfg.hidden), composition, cfg.scorer, hops)


@register("qa_lstm_attn")
def build_qa_lstm_attn(cfg: QALSTMAttentionConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _lstm_ranker(cfg, vocab_size, embeddings, "attention")


@register("multihop_lstm")
def build_multihop_lstm(cfg: MultihopLSTMConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _lstm_ranker(cfg, vocab_size, embeddings, "multihop", cfg.hops)
