"""QA-LSTM (Tan et al. 2016), QA-biLSTM and QA-CNN (Feng et al. 2015; dos Santos et al. 2016):
a shared encoder for question and answer, column-wise max-pooling, cosine score.

dos Santos et al. (section 2.3) apply tanh after the max-pooling for both QA-CNN and QA-biLSTM;
Tan et al.'s QA-LSTM pools the biLSTM outputs without it.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ansel.models.base import SiameseRanker, padding_mask
from ansel.models.encoders import BiLSTMEncoder, CNNEncoder
from ansel.models.layers import masked_max, word_embedding
from ansel.models.hparams import QACNNConfig, QALSTMConfig
from ansel.models.registry import register


class MaxPoolSiamese(SiameseRanker):
    """embedding -> shared encoder -> masked max-pooling (-> tanh) -> cosine."""

    def __init__(self, embedding: nn.Embedding, encoder: nn.Module, dropout: float, tanh: bool):
        super().__init__()
        self.embedding = embedding
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.tanh = tanh

    def _encode(self, ids: torch.Tensor) -> torch.Tensor:
        mask = padding_mask(ids)
        h, mask = self.encoder(self.dropout(self.embedding(ids)), mask)
        v = masked_max(h, mask)
        return torch.tanh(v) if self.tanh else v

    encode_question = _encode
    encode_answer = _encode


@register("qa_lstm")
def build_qa_lstm(cfg: QALSTMConfig, vocab_size: int, embeddings: np.ndarray | None) -> MaxPoolSiamese:
    emb = word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings)
    return MaxPoolSiamese(emb, BiLSTMEncoder(cfg.embedding_dim, cfg.hidden), cfg.dropout, tanh=False)


@register("qa_bilstm")
def build_qa_bilstm(cfg: QALSTMConfig, vocab_size: int, embeddings: np.ndarray | None) -> MaxPoolSiamese:
    emb = word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings)
    return MaxPoolSiamese(emb, BiLSTMEncoder(cfg.embedding_dim, cfg.hidden), cfg.dropout, tanh=True)


@register("qa_cnn")
def build_qa_cnn(cfg: QACNNConfig, vocab_size: int, embeddings: np.ndarray | None) -> MaxPoolSiamese:
    emb = word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings)
    # CNNEncoder already applies tanh per position; max then tanh matches the paper's
    # "column-wise max-pooling + tanh" since tanh is monotonic.
    return MaxPoolSiamese(emb, CNNEncoder(cfg.embedding_dim, cfg.filters, cfg.kernel), cfg.dropout, tanh=False)
