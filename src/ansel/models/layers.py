"""Building blocks shared by architectures: embeddings, masked pooling."""
from __future__ import annotations

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


def masked_max(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Max over time of h [B, L, H], ignoring padded steps (mask [B, L] True on tokens)."""
    filled = h.masked_fill(~mask.unsqueeze(-1), torch.finfo(h.dtype).min)
    out = filled.max(dim=1).values
    # An all-padding row (empty text) pools to zeros rather than -inf.
    return torch.where(mask.any(dim=1, keepdim=True), out, torch.zeros_like(out))


def masked_mean(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(-1).to(h.dtype)
    return (h * m).sum(1) / m.sum(1).clamp_min(1.0)
