"""Building blocks shared by architectures: embeddings, masked pooling, masked softmax."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch
from torch import nn

from ansel.models.base import PAD


def word_embedding(vocab_size: int, dim: int, pretrained: np.ndarray | None,
                   freeze: bool = False) -> nn.Embedding:
    """An embedding table, initialised from ``pretrained`` [vocab, dim] when given; row 0 is padding."""
    emb = nn.Embedding(vocab_size, dim, padding_idx=PAD)
    if pretrained is not None:
        if pretrained.shape != (vocab_size, dim):
            raise ValueError(f"pretrained embeddings have shape {pretrained.shape}, expected {(vocab_size, dim)}")
        with torch.no_grad():
            emb.weight.copy_(torch.from_numpy(np.asarray(pretrained, dtype=np.float32)))
            emb.weight[PAD].zero_()
    emb.weight.requires_grad_(not freeze)
    return emb


def dropped_embedding(vocab_size: int, dim: int, pretrained: np.ndarray | None, freeze: bool,
                      dropout: float) -> nn.Sequential:
    """Token ids -> word vectors -> dropout: the input layer of the recurrent and convolutional rankers."""
    embedding = word_embedding(vocab_size, dim, pretrained, freeze)
    return nn.Sequential(OrderedDict(embedding=embedding, dropout=nn.Dropout(dropout)))


def masked_max(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Max over time of h [B, L, H], ignoring padded steps (mask [B, L] True on tokens)."""
    filled = h.masked_fill(~mask.unsqueeze(-1), torch.finfo(h.dtype).min)
    out = filled.max(dim=1).values
    # An all-padding row (empty text) pools to zeros rather than -inf.
    return torch.where(mask.any(dim=1, keepdim=True), out, torch.zeros_like(out))


def masked_mean(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(-1).to(h.dtype)
    return (h * m).sum(1) / m.sum(1).clamp_min(1.0)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis that gives padded positions (mask False) exactly zero weight.

    Filled with the dtype's minimum, a padded score underflows to a weight of exactly 0 beside
    any real one, so the final product with the mask changes no row with a real position; it
    gives a row without one (an empty text) zero weights instead of a uniform spread over padding.
    """
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=-1) * mask.to(scores.dtype)
