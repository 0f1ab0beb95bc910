"""QA-LSTM (Tan et al. 2016), QA-biLSTM and QA-CNN (Feng et al. 2015; dos Santos et al. 2016):
a shared encoder for question and answer, column-wise max-pooling, cosine score.

dos Santos et al. (section 2.3) apply tanh after the max-pooling for both QA-CNN and QA-biLSTM;
Tan et al.'s QA-LSTM pools the biLSTM outputs without it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansel.models.hparams import HParams, fraction, hparam, one_of, positive
from ansel.models.registry import register


@dataclass
class QALSTMConfig(HParams):
    """``mask_padding: false`` + ``max_len``: the MTAS authors' fixed-width inputs, padding read
    (``layers.read_ids``); ``init: tf``: their LSTM initialisation (``layers.keras_init``: Glorot,
    orthogonal recurrent weights, forget-gate bias 1) instead of torch's."""

    embedding_dim: int = hparam(100, positive)
    hidden: int = hparam(141, positive)
    dropout: float = hparam(0.0, fraction)
    freeze_embeddings: bool = False
    mask_padding: bool = True
    max_len: int = hparam(100, positive)  # unmasked only: every text cut or PAD-filled to it
    init: str = hparam("torch", one_of("torch", "tf"))


@dataclass
class QACNNConfig(HParams):
    embedding_dim: int = hparam(100, positive)
    filters: int = hparam(400, positive)
    kernel: int = hparam(4, positive)
    dropout: float = hparam(0.0, fraction)
    freeze_embeddings: bool = False


def _max_pooled(embed, encoder, tanh: bool, read_padding: int = 0):
    from ansel.models.compositions import MaxPooling
    from ansel.models.rankers import assemble
    from ansel.models.scorers import CosineScorer

    return assemble(embed, encoder, MaxPooling(tanh), CosineScorer(), read_padding=read_padding)


def _bilstm_max_pooled(cfg: QALSTMConfig, vocab_size: int, embeddings, tanh: bool):
    from ansel.models.encoders import bilstm_encoder
    from ansel.models.layers import dropped_embedding, read_padding

    embed = dropped_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings, cfg.dropout)
    return _max_pooled(embed, bilstm_encoder(cfg), tanh, read_padding(cfg))


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
