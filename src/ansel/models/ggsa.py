"""Self-attention answer-selection models of Xu et al., "Gated Group Self-Attention for Answer
Selection": global / local / group self-attention, GGSA and iGGSA, each with a choice of
composition (max-pooling, question-guided attention, multihop sequential attention) and
scorer (cosine for the pairwise loss, two-layer MLP + softmax for the pointwise loss).

Registered architectures: ``global_sa``, ``local_sa``, ``group_sa``, ``ggsa``, ``iggsa``.
Max-pooling models are siamese; iGGSA never is (its answer encoder reads the question).
Question and answer share one encoder; iGGSA's answer pass adds the interaction residual.
"""
from __future__ import annotations

import numpy as np
from torch import nn

from ansel.models.base import Ranker
from ansel.models.compositions import compose
from ansel.models.layers import word_embedding
from ansel.models.hparams import GGSAConfig, GlobalSAConfig, GroupSAConfig, LocalSAConfig
from ansel.models.registry import register
from ansel.models.self_attention import (GlobalAttention, GroupAttention, LocalAttention,
                                         PositionalEmbedding, SelfAttentionEncoder)


def head_offsets(heads: int, group_size: int, offset: bool) -> list[int]:
    """Paper: offset 0 for 3 heads and 5 for the other 3 (6 heads, groups of 10)."""
    shifted = heads // 2 if offset else 0
    return [0] * (heads - shifted) + [group_size // 2] * shifted


def _ranker(cfg: GlobalSAConfig, vocab_size: int, embeddings: np.ndarray | None, attention: nn.Module,
            gate: bool = False, interaction: bool = False) -> Ranker:
    embed = PositionalEmbedding(word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings),
                                cfg.dropout, cfg.projection)
    encoder = SelfAttentionEncoder(cfg.embedding_dim, cfg.heads, attention, cfg.ffn_dim or 4 * cfg.embedding_dim,
                                   gate=gate, final_norm=cfg.final_norm, interaction=interaction)
    return compose(embed, encoder, cfg.composition, cfg.scorer, cfg.hops, interaction)


def _group_attention(cfg: GroupSAConfig) -> GroupAttention:
    return GroupAttention(cfg.group_size, head_offsets(cfg.heads, cfg.group_size, cfg.offset))


@register("global_sa")
def build_global_sa(cfg: GlobalSAConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _ranker(cfg, vocab_size, embeddings, GlobalAttention())


@register("local_sa")
def build_local_sa(cfg: LocalSAConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _ranker(cfg, vocab_size, embeddings, LocalAttention(cfg.window), gate=cfg.gate)


@register("group_sa")
def build_group_sa(cfg: GroupSAConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _ranker(cfg, vocab_size, embeddings, _group_attention(cfg), gate=cfg.gate)


@register("ggsa")
def build_ggsa(cfg: GGSAConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _ranker(cfg, vocab_size, embeddings, _group_attention(cfg), gate=cfg.gate)


@register("iggsa")
def build_iggsa(cfg: GGSAConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _ranker(cfg, vocab_size, embeddings, _group_attention(cfg), gate=cfg.gate, interaction=True)
