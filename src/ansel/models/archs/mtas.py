"""MTAS ("A Multi-Task Learning Approach for Answer Selection", ../shared/papers/002_*) and its LawQA baselines IARNN-word and the multi-width CNN, as the
authors' TF1 code builds them (``../shared/papers/upstream-notes.md`` §1.3-1.5).

``mtas``: shared embedding -> one BiLSTM shared by question and answer; the answer is read by
``heads`` attention heads driven by the max-pooled question; cosine of the question vector
(repeated once per head) and the concatenated heads; ``classify`` predicts the question's
category from the question vector (the auxiliary task, trained with ``train.category_weight``).
The paper's Bi-LSTM-attention baseline is ``mtas`` with ``heads: 1``.

Where the code and the paper differ, the default follows the code and a hyperparameter gives
the paper's reading:
  hidden, attention  300, 100 per direction (code) | 1000, 300 (paper)
  mask_padding   false (code: fixed ``max_len``-token inputs; the BiLSTM, the attention softmax and
                 the max-pooling all read the padding, so scores depend on how much of it there is)
                 | true (the paper's attention over the words; padding changes no score)
  head_pooling   max (code: the weighted states are max-pooled over time) | sum (eq. 5's A_t h^a)
  classifier     upstream (dense F/2 relu, dense F relu, dense C sigmoid, whose outputs the code
                 feeds to softmax cross-entropy as logits) | paper (eq. 7: tanh(V1 h^q), V2 f)
"""

from __future__ import annotations

from dataclasses import dataclass

from ansel.models.archs.qa_baselines import QALSTMConfig
from ansel.models.hparams import HParams, fraction, hparam, one_of, positive
from ansel.models.registry import register


@dataclass
class MTASConfig(HParams):
    embedding_dim: int = hparam(150, positive)
    hidden: int = hparam(300, positive)  # per direction
    attention: int = hparam(100, positive)  # width of each head's M_t
    heads: int = hparam(4, positive)
    mask_padding: bool = False
    max_len: int = hparam(100, positive)  # texts are cut to it; unmasked, also padded to it
    head_pooling: str = hparam("max", one_of("max", "sum"))
    classifier: str = hparam("upstream", one_of("upstream", "paper"))
    dropout: float = hparam(0.0, fraction)  # on the word vectors (upstream: none)
    freeze_embeddings: bool = False


@dataclass
class IARNNWordConfig(QALSTMConfig):
    """IARNN-word (Wang et al. 2016) as the MTAS authors ran it (``iarnn/``: hidden 1000, fixed
    100-token inputs with their padding read, TF's LSTM initialisation)."""

    embedding_dim: int = hparam(150, positive)
    hidden: int = hparam(1000, positive)
    mask_padding: bool = False
    init: str = hparam("tf", one_of("torch", "tf"))


def _widths(value, hparams) -> str | None:
    return None if len(value) > 0 and all(k > 0 for k in value) else "is not a list of positive kernel widths"


@dataclass
class MultiCNNConfig(HParams):
    embedding_dim: int = hparam(150, positive)
    filters: int = hparam(600, positive)  # per kernel width
    kernels: tuple[int, ...] = hparam((1, 2, 3, 5), _widths)
    dropout: float = hparam(0.0, fraction)  # on the pooled vector (upstream: keep 1)
    freeze_embeddings: bool = False
    mask_padding: bool = False  # code: fixed max_len-token inputs, the windows over padding pooled too
    max_len: int = hparam(100, positive)


@register("mtas", MTASConfig, categories=True)
def build_mtas(cfg: MTASConfig, vocab_size: int, embeddings, n_categories: int):
    from ansel.models.mtas import MTAS

    return MTAS(cfg, vocab_size, embeddings, n_categories)


@register("iarnn_word", IARNNWordConfig)
def build_iarnn_word(cfg: IARNNWordConfig, vocab_size: int, embeddings):
    from ansel.models.mtas import IARNNWord

    return IARNNWord(cfg, vocab_size, embeddings)


@register("multi_cnn", MultiCNNConfig)
def build_multi_cnn(cfg: MultiCNNConfig, vocab_size: int, embeddings):
    from ansel.models.mtas import MultiWidthCNN

    return MultiWidthCNN(cfg, vocab_size, embeddings)
