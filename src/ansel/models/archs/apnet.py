"""Attentive Pooling Networks (dos Santos et al., 2016): AP-CNN and AP-biLSTM.

One encoder shared by question and answer, attentive pooling (``compositions.AttentivePooling``)
and the cosine of the pooled vectors. Not siamese: the answer representation depends on the
question. The ranker's ``attention(q, a)`` gives σq, σa for the paper's heat maps.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansel.models.archs.qa_baselines import QACNNConfig, QALSTMConfig
from ansel.models.hparams import hparam, one_of, positive
from ansel.models.registry import register


@dataclass
class APCNNConfig(QACNNConfig):
    kernel: int = hparam(3, positive)
    conv_bias: bool = True  # the paper's b1; false: Q = W1 Z (a recipe variant, issue 51's E3)
    # wide (the records'), narrow, or same (AP §2.1's Q of M columns): ``encoders.CNNEncoder``
    conv_padding: str = hparam("wide", one_of("wide", "narrow", "same"))


def _attentive_pooling(embed, encoder, read_padding: int = 0):
    from ansel.models.compositions import AttentivePooling
    from ansel.models.rankers import assemble
    from ansel.models.scorers import CosineScorer

    return assemble(embed, encoder, AttentivePooling(encoder.out_dim), CosineScorer(), read_padding=read_padding)


@register("ap_cnn", APCNNConfig)
def build_ap_cnn(cfg: APCNNConfig, vocab_size: int, embeddings):
    from ansel.models.encoders import CNNEncoder
    from ansel.models.layers import dropped_embedding

    embed = dropped_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings, cfg.dropout)
    # The paper's convolution is linear (Q = W1 Z + b1, §2.1); the non-linearity is G's tanh.
    return _attentive_pooling(
        embed,
        CNNEncoder(
            cfg.embedding_dim, cfg.filters, cfg.kernel, activation=False, bias=cfg.conv_bias, padding=cfg.conv_padding
        ),
    )


@register("ap_bilstm", QALSTMConfig)  # AP-biLSTM has QA-biLSTM's hyperparameters
def build_ap_bilstm(cfg: QALSTMConfig, vocab_size: int, embeddings):
    from ansel.models.encoders import bilstm_encoder
    from ansel.models.layers import dropped_embedding, read_padding

    embed = dropped_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings, cfg.dropout)
    return _attentive_pooling(embed, bilstm_encoder(cfg), read_padding(cfg))
