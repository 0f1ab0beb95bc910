"""The aNMM module (hyperparameters and how the bin sums follow MatchZoo: ``ansel.models.archs.anmm``)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ansel.models.base import PAD, Ranker, padding_mask
from ansel.models.layers import OutputHead, fixed_length, keras_init, word_embedding


class ANMM(Ranker):
    """Query gate, ``gate: idf`` (upstream): Dense(1, no bias) over the word's row of
    ``embed.idf``, whose scalar IDF MatchZoo 1.0's ``convert_embed_2_numpy`` copies into all
    embed_size (``gate_dim``) columns, so the logit is idf x (sum of the kernel). Its softmax
    runs over all text1_maxlen positions unmasked, as upstream's; padding has idf 0, as the
    zero row MatchZoo gives its padding id. The IDF is ``Lexicon.idf``, ln((1+N)/(1+df)) + 1
    over the training texts; upstream's (word_stats.txt) is ln((1+N)/(1+df)) over the whole
    corpus, all splits, counted before stop-word removal. The +1 adds the same learned
    constant to every real word's logit; padding's stays 0.
    ``gate: embedding`` (the paper's gate; the fork's QuoraQP config points the gate at raw
    GloVe) reads the word's vector from the normalised table instead.

    Upstream's initialisers: kernels uniform in +-0.1 (MLP) and +-0.01 (gate), zero biases,
    Keras's default for the classification Dense(2); their fixed seed 11 is not reproduced
    (torch's seeded generator draws them)."""

    def __init__(self, cfg, vocab_size: int, embeddings, idf):
        super().__init__()
        self.text1_maxlen, self.bin_num, self.gate_input = cfg.text1_maxlen, cfg.bin_num, cfg.gate
        # A table built without vectors (when loading saved weights) is replaced by the saved one.
        self.embedding = word_embedding(vocab_size, cfg.embedding_dim, embeddings, freeze=True)
        with torch.no_grad():
            self.embedding.weight.copy_(F.normalize(self.embedding.weight, dim=1))  # PAD stays 0
        if cfg.gate == "idf":
            idf = torch.tensor(np.asarray(idf, dtype=np.float32))
            idf[PAD] = 0.0
            self.register_buffer("idf", idf)  # saved with the weights: the IDF it was trained with
        self.gate = nn.Linear(cfg.gate_dim if cfg.gate == "idf" else cfg.embedding_dim, 1, bias=False)
        layers, width = [nn.Dropout(cfg.dropout)], cfg.bin_num
        for i, size in enumerate(cfg.hidden_sizes):
            layers.append(nn.Linear(width, size))
            if i < len(cfg.hidden_sizes) - 1:  # upstream's last Dense is linear
                layers.append(nn.Tanh())
            width = size
        self.mlp = nn.Sequential(*layers)
        # Ranking: the gated sum is the score. Classification: upstream's Dense(2, softmax) on it.
        self.head = keras_init(OutputHead(1, 2)) if cfg.classes == 2 else None
        with torch.no_grad():
            nn.init.uniform_(self.gate.weight, -0.01, 0.01)
            for m in self.mlp:
                if isinstance(m, nn.Linear):
                    nn.init.uniform_(m.weight, -0.1, 0.1)
                    nn.init.zeros_(m.bias)

    def bin_features(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """[B, Lq, bin_num]: per question word, the sum of its cosines in each bin."""
        cos = self.embedding(q) @ self.embedding(a).transpose(1, 2)
        cos = torch.where(q.unsqueeze(2) == a.unsqueeze(1), torch.ones_like(cos), cos)
        cos = cos * (padding_mask(q).unsqueeze(2) & padding_mask(a).unsqueeze(1))
        # In float64, as NumPy 1.x evaluates (v + 1.) / 2. * (bin_num - 1.) for a float32 v;
        # truncation is Python's int() (v >= -1 keeps it non-negative).
        bins = ((cos.double() + 1) / 2 * (self.bin_num - 1)).long()
        return torch.einsum("bqa,bqan->bqn", cos, F.one_hot(bins, self.bin_num).to(cos.dtype))

    def gate_weights(self, q: torch.Tensor) -> torch.Tensor:
        """[B, Lq]: the softmax over the question positions, padding included."""
        if self.gate_input == "idf":
            logits = self.idf[q] * self.gate.weight.sum()
        else:
            logits = self.gate(self.embedding(q)).squeeze(-1)
        return torch.softmax(logits, dim=1)

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        q = fixed_length(q, self.text1_maxlen)
        values = self.mlp(self.bin_features(q, a)).squeeze(-1)
        score = (values * self.gate_weights(q)).sum(1)
        return score if self.head is None else self.head(score.unsqueeze(1))
