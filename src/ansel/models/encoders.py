"""Sequence encoders: x [B, L, D] + mask [B, L] -> h [B, L', H] + mask [B, L'].

Every encoder exposes ``out_dim`` and returns the mask of its output positions, so a
composition (pooling, attention) never looks at padding. The self-attention encoders are in
``self_attention.py``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class BiLSTMEncoder(nn.Module):
    """Bidirectional LSTM over packed sequences (the backward pass never reads padding)."""

    def __init__(self, in_dim: int, hidden: int):
        super().__init__()
        self.lstm = nn.LSTM(in_dim, hidden, batch_first=True, bidirectional=True)
        self.out_dim = 2 * hidden

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        lengths = mask.sum(1).clamp_min(1).cpu()
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        h, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        return h, mask


class CNNEncoder(nn.Module):
    """Convolution over k-word windows, tanh unless ``activation=False`` (AP-CNN's Q = W1 Z + b1 is
    linear; its G applies the tanh); ``bias=False`` drops b1.

    ``padding``: ``wide`` (zero padding of k-1 on both ends; L + k - 1 outputs), ``narrow`` (none;
    L - k + 1 outputs, one for a text shorter than k: its words and zeros), ``same`` (L outputs,
    window j centred on word j: (k-1)//2 zeros before, the rest after; AP's "k word embeddings
    centralized in the m-th word", Q of M columns). Output position j is real iff its window
    overlaps the text as the padding rule says, and padded embeddings are zero, so trailing padding
    acts as the zero padding and results do not depend on how much a batch is padded.
    """

    def __init__(
        self, in_dim: int, filters: int, kernel: int, activation: bool = True, bias: bool = True, padding: str = "wide"
    ):
        super().__init__()
        if padding not in ("wide", "narrow", "same"):
            raise ValueError(f"CNNEncoder padding: unknown {padding!r} (wide, narrow, same)")
        self.kernel, self.activation, self.padding = kernel, activation, padding
        self.before = {"wide": kernel - 1, "narrow": 0, "same": (kernel - 1) // 2}[padding]
        self.conv = nn.Conv1d(in_dim, filters, kernel, bias=bias)
        self.out_dim = filters

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x * mask.unsqueeze(-1).to(x.dtype)
        # zeros before the text, and after it enough for every real output's window (at least k in all)
        after = {
            "wide": self.kernel - 1,
            "narrow": max(0, self.kernel - x.size(1)),
            "same": self.kernel - 1 - self.before,
        }[self.padding]
        h = self.conv(F.pad(x.transpose(1, 2), (self.before, after))).transpose(1, 2)
        h = torch.tanh(h) if self.activation else h
        lengths = mask.sum(1, keepdim=True)
        real = {"wide": lengths + self.kernel - 1, "narrow": (lengths - self.kernel + 1).clamp_min(1), "same": lengths}[
            self.padding
        ]
        positions = torch.arange(h.size(1), device=h.device).unsqueeze(0)
        return h, (positions < real) & (lengths > 0)


class QRNNGateEncoder(nn.Module):
    """CTRN's encoder: a projection of the word vectors (Linear + ReLU, D -> m), then QRNN's
    masked convolutions Conv Z / F / O (Bradbury et al. 2016); h [B, L, 3m] holds the three
    gates' pre-activations, which ``compositions.CrossAppliedGates`` activates and applies.

    The convolutions are causal (left padding only): step t sees words t-k+1..t, so trailing
    padding never reaches a real step.
    """

    def __init__(self, in_dim: int, hidden: int, kernel: int):
        super().__init__()
        self.projection = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU())
        self.kernel = kernel
        self.conv = nn.Conv1d(hidden, 3 * hidden, kernel)
        self.out_dim = 3 * hidden

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.conv(F.pad(self.projection(x).transpose(1, 2), (self.kernel - 1, 0))).transpose(1, 2)
        return h, mask


def bilstm_encoder(cfg) -> nn.Module:
    """The BiLSTM of a QA-LSTM-family config (``embedding_dim``, ``hidden``), initialised as
    ``cfg.init`` says (``tf``: the Keras initialisers)."""
    from ansel.models.layers import keras_init

    encoder = BiLSTMEncoder(cfg.embedding_dim, cfg.hidden)
    return keras_init(encoder) if cfg.init == "tf" else encoder
