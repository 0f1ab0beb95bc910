"""QA-LSTM (Tan et al. 2016), QA-biLSTM and QA-CNN (Feng et al. 2015; dos Santos et al. 2016):
a shared encoder for question and answer, column-wise max-pooling, cosine score.

dos Santos et al. (section 2.3) apply tanh after the max-pooling for both QA-CNN and QA-biLSTM;
Tan et al.'s QA-LSTM pools the biLSTM outputs without it.
"""
from __future__ import annotations

from dataclasses import dataclass

from ansel.models.hparams import HParams, fraction, hparam, positive
from ansel.models.registry import register


@dataclass
class QALSTMConfig(HParams):
    embedding_dim: int = hparam(100, positive)
    hidden: int = hparam(141, positive)
    dropout: float = hparam(0.0, fraction)
    freeze_embeddings: bool = False


@dataclass
class QACNNConfig(HParams):
    embedding_dim: int = hparam(100, positive)
    filters: int = hparam(400, positive)
    kernel: int = hparam(4, positive)
    dropout: float = hparam(0.0, fraction)
    freeze_embeddings: bool = False


def _max_pooled(embed, encoder, tanh: bool):
    from ansel.models.compositions import MaxPooling
    from ansel.models.rankers import assemble
    from ansel.models.scorers import CosineScorer

    return assemble(embed, encoder, MaxPooling(tanh), CosineScorer())


def _bilstm_max_pooled(cfg: QALSTMConfig, vocab_size: int, embeddings, tanh: bool):
    from ansel.models.encoders import BiLSTMEncoder
    from ansel.models.layers import dropped_embedding

    embed = dropped_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings, cfg.dropout)
    return _max_pooled(embed, BiLSTMEncoder(cfg.embedding_dim, cfg.hidden), tanh)


@register("qa_lstm", QALSTMConfig)
def build_qa_lstm(cfg: QALSTMConfig, vocab_size: int, embeddings):
    return _bilstm_max_pooled(cfg, vocab_size, embeddings, tanh=False)


@register("qa_bilstm", QALSTMConfig)
def build_qa_bilstm(cfg: QALSTMConfig, vocab_size: int, embeddings):
    return _bilstm_max_pooled(cfg, vocab_size, embeddings, tanh=True)


@register("qa_cnn", QACNNConfig)
def build_qa_cnn(cfg: QACNNConfig, vocab_size: int, embeddings):
    from ansel.models.encoders import CNNEncoder
    from ansel.models.layers import dropped_embedding

    embed = dropped_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings, cfg.dropout)
    # CNNEncoder already applies tanh per position; max then tanh matches the paper's
    # "column-wise max-pooling + tanh" since tanh is monotonic.
    return _max_pooled(embed, CNNEncoder(cfg.embedding_dim, cfg.filters, cfg.kernel), tanh=False)
