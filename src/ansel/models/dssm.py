"""The DSSM and CDSSM modules (hyperparameters, the trigram filter and the differences from
MatchZoo: ``ansel.models.archs.dssm``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.base import SiameseRanker
from ansel.models.layers import OutputHead, fixed_length


class WordHashing(nn.Module):
    """Token ids [..., L] -> Dense(bag of the L words' letter trigrams) [..., features],
    summing one weight row per trigram occurrence (``table`` from ``trigram_table``)."""

    def __init__(self, table, n_trigrams: int, features: int, bias: bool, bound: float):
        super().__init__()
        self.register_buffer("word_trigrams", torch.as_tensor(table, dtype=torch.long))
        self.bag = nn.EmbeddingBag(n_trigrams + 1, features, mode="sum", padding_idx=n_trigrams)
        self.bias = nn.Parameter(torch.zeros(features)) if bias else None
        with torch.no_grad():
            self.bag.weight.uniform_(-bound, bound)
            self.bag.weight[n_trigrams].zero_()

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        grams = self.word_trigrams[ids].flatten(-2)
        out = self.bag(grams.reshape(-1, grams.size(-1))).view(*grams.shape[:-1], -1)
        return out if self.bias is None else out + self.bias


def mlp(first: nn.Module, hidden_sizes, activation, dropout: float) -> nn.Sequential:
    """MatchZoo's ``mlp_work`` after its first layer ``first``."""
    layers = [first]
    for i, (n_in, n_out) in enumerate(zip(hidden_sizes, hidden_sizes[1:])):
        layers.append(activation())
        if i > 0:
            layers.append(nn.Dropout(dropout))
        layers.append(nn.Linear(n_in, n_out))
    if len(hidden_sizes) > 1:
        layers.append(nn.Dropout(dropout))
    return nn.Sequential(*layers)


class CosineRanker(SiameseRanker):
    def __init__(self, classes: int):
        super().__init__()
        self.head = OutputHead(1, 2) if classes == 2 else None

    def similarity(self, qv: torch.Tensor, av: torch.Tensor) -> torch.Tensor:
        # Keras' Dot(normalize=True): l2-normalise, then the dot product
        cosine = (F.normalize(qv, dim=-1) * F.normalize(av, dim=-1)).sum(-1)
        return cosine if self.head is None else self.head(cosine.unsqueeze(-1))


class DSSM(CosineRanker):
    def __init__(self, encoder: nn.Sequential, classes: int):
        super().__init__(classes)
        self.encoder = encoder

    def encode_question(self, q: torch.Tensor) -> torch.Tensor:
        return self.encoder(q)

    encode_answer = encode_question


class CDSSM(CosineRanker):
    def __init__(
        self,
        hashing: WordHashing,
        conv: nn.Conv1d,
        dropout: float,
        mlp: nn.Sequential,
        text1_maxlen: int,
        text2_maxlen: int,
        classes: int,
    ):
        super().__init__(classes)
        self.hashing, self.conv, self.dropout, self.mlp = hashing, conv, nn.Dropout(dropout), mlp
        self.text1_maxlen, self.text2_maxlen = text1_maxlen, text2_maxlen

    def _encode(self, ids: torch.Tensor, length: int) -> torch.Tensor:
        words = self.hashing(fixed_length(ids, length).unsqueeze(-1))  # each word its own bag
        h = self.dropout(torch.relu(self.conv(words.transpose(1, 2))))
        # MatchZoo's MaxPooling1D over all maxlen positions has no mask: padding is pooled too
        return self.mlp(h.max(dim=-1).values)

    def encode_question(self, q: torch.Tensor) -> torch.Tensor:
        return self._encode(q, self.text1_maxlen)

    def encode_answer(self, a: torch.Tensor) -> torch.Tensor:
        return self._encode(a, self.text2_maxlen)
