"""Building blocks shared by architectures: embeddings, masked pooling, masked softmax."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.base import PAD, padding_mask


def word_embedding(vocab_size: int, dim: int, pretrained: np.ndarray | None, freeze: bool = False) -> nn.Embedding:
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


def unit_rows(vectors: np.ndarray | None) -> np.ndarray | None:
    """Each row scaled to length 1 (a zero row stays zero): MatchZoo's norm_embed.py, whose
    "_norm" vector files some of the aMV-LSTM authors' configs load."""
    if vectors is None:
        return None
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def dropped_embedding(
    vocab_size: int, dim: int, pretrained: np.ndarray | None, freeze: bool, dropout: float
) -> nn.Sequential:
    """Token ids -> word vectors -> dropout: the input layer of the recurrent and convolutional rankers."""
    embedding = word_embedding(vocab_size, dim, pretrained, freeze)
    return nn.Sequential(OrderedDict(embedding=embedding, dropout=nn.Dropout(dropout)))


def masked_max(h: torch.Tensor, mask: torch.Tensor, overwrite: bool = False, every_step: bool = False) -> torch.Tensor:
    """Max over time of h [B, L, H], ignoring padded steps (mask [B, L] True on tokens).
    ``overwrite``: h is a temporary no one reads again (autograd included: its producer saved no
    output, as a product does), masked in place rather than in a copy of it. ``every_step``: the
    mask admits every step (fixed-width inputs read whole, ``read_ids``), so a plain max: the fill
    would copy h for nothing (a fifth of a fixed-width CNN's training)."""
    if every_step:
        return h.max(dim=1).values
    fill = ~mask.unsqueeze(-1), torch.finfo(h.dtype).min
    filled = h.masked_fill_(*fill) if overwrite else h.masked_fill(*fill)
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


def fixed_length(ids: torch.Tensor, length: int) -> torch.Tensor:
    """Token ids [B, L] right-padded with PAD or truncated to exactly ``length`` columns: the
    input of a model whose layers see a fixed width (MatchZoo's post-padding)."""
    return ids[:, :length] if ids.size(1) >= length else F.pad(ids, (0, length - ids.size(1)), value=PAD)


def read_ids(ids: torch.Tensor, read_padding: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, mask of the positions a model reads): the real tokens; or, with ``read_padding`` = N,
    exactly N positions (``fixed_length``), padding read as words, as the MTAS authors' TF code
    feeds fixed 100-token inputs without lengths (a score then depends on a text's padding, never
    on the batch it is scored in)."""
    if not read_padding:
        return ids, padding_mask(ids)
    ids = fixed_length(ids, read_padding)
    return ids, torch.ones_like(ids, dtype=torch.bool)


def read_padding(cfg) -> int:
    """``read_ids``'s read_padding of a config with ``mask_padding`` and ``max_len``."""
    return 0 if cfg.mask_padding else cfg.max_len


class OutputHead(nn.Module):
    """The last layer of a MatchZoo-family model: ``Linear(features, classes)``. One class: the
    ranking score. Two (a softmax over "not a match", "a match"): the score is the log-odds
    l1 - l0, so softmax cross-entropy is binary cross-entropy with that score as logit, and the
    predicted class is score > 0."""

    def __init__(self, features: int, classes: int):
        super().__init__()
        if classes not in (1, 2):
            raise ValueError(f"classes must be 1 or 2, not {classes}")
        self.linear = nn.Linear(features, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.linear(x)
        return logits[:, 0] if logits.size(1) == 1 else logits[:, 1] - logits[:, 0]


@torch.no_grad()
def keras_init(module: nn.Module) -> nn.Module:
    """Keras 2's default initialisation, as MatchZoo 1.x's models start: Glorot-uniform kernels
    and zero biases (Dense, Conv); LSTMs with Glorot-uniform input, orthogonal recurrent weights
    and forget-gate bias 1 (``unit_forget_bias``). Embeddings are left as they are. Returns ``module``."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv1d, nn.Conv2d)):
            nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LSTM):
            for name, p in m.named_parameters():
                if name.startswith("weight_ih"):
                    nn.init.xavier_uniform_(p)
                elif name.startswith("weight_hh"):
                    nn.init.orthogonal_(p)
                else:  # torch's gates are (input, forget, cell, output); Keras has one bias, torch two
                    nn.init.zeros_(p)
                    if name.startswith("bias_ih"):
                        p[m.hidden_size : 2 * m.hidden_size] = 1.0
    return module
