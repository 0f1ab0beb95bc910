"""Self-attention answer-selection models of Xu et al., "Gated Group Self-Attention for Answer
Selection": global / local / group self-attention, GGSA and iGGSA, each with a choice of
composition (max-pooling, question-guided attention, multihop sequential attention) and
scorer (cosine for the pairwise loss, two-layer MLP + softmax for the pointwise loss).

Registered architectures: ``global_sa``, ``local_sa``, ``group_sa``, ``ggsa``, ``iggsa``.
Max-pooling models are siamese; iGGSA never is (its answer encoder reads the question).
Question and answer share one encoder; iGGSA's answer pass adds the interaction residual.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch import nn

from ansel.models.base import Ranker
from ansel.models.compositions import compose
from ansel.models.layers import word_embedding
from ansel.models.registry import register
from ansel.models.self_attention import (GlobalAttention, GroupAttention, LocalAttention,
                                         PositionalEmbedding, SelfAttentionEncoder)


@dataclass
class GlobalSAConfig:
    embedding_dim: int = 300
    heads: int = 6
    ffn_dim: int | None = None    # None: 4 x embedding_dim, as in Vaswani et al. (the paper's "same as [26]")
    dropout: float = 0.3          # on word embeddings, before positions are added (keep 0.7)
    freeze_embeddings: bool = False
    projection: bool = False      # trainable projection of (frozen) embeddings, the paper's yahooQA setting
    composition: str = "max"      # max | attention | multihop
    hops: int = 2                 # multihop composition only
    scorer: str = "cosine"        # cosine (pairwise loss) | mlp (pointwise loss; score = positive-class log-odds)
    final_norm: bool = True       # LayerNorm after the FFN residual (GGSA removes it)


@dataclass
class LocalSAConfig(GlobalSAConfig):
    window: int = 10
    gate: bool = False
    final_norm: bool = False      # local attention takes GGSA's place in the paper's Table 3


@dataclass
class GroupSAConfig(GlobalSAConfig):
    group_size: int = 10
    offset: bool = False          # the paper's strategy: the last heads // 2 heads start groups at group_size // 2
    gate: bool = False
    final_norm: bool = False


@dataclass
class GGSAConfig(GroupSAConfig):
    offset: bool = True
    gate: bool = True


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


@register("global_sa", GlobalSAConfig)
def build_global_sa(cfg: GlobalSAConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _ranker(cfg, vocab_size, embeddings, GlobalAttention())


@register("local_sa", LocalSAConfig)
def build_local_sa(cfg: LocalSAConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _ranker(cfg, vocab_size, embeddings, LocalAttention(cfg.window), gate=cfg.gate)


@register("group_sa", GroupSAConfig)
def build_group_sa(cfg: GroupSAConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _ranker(cfg, vocab_size, embeddings, _group_attention(cfg), gate=cfg.gate)


@register("ggsa", GGSAConfig)
def build_ggsa(cfg: GGSAConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _ranker(cfg, vocab_size, embeddings, _group_attention(cfg), gate=cfg.gate)


@register("iggsa", GGSAConfig)
def build_iggsa(cfg: GGSAConfig, vocab_size: int, embeddings: np.ndarray | None) -> Ranker:
    return _ranker(cfg, vocab_size, embeddings, _group_attention(cfg), gate=cfg.gate, interaction=True)
