"""MV-LSTM (Wan et al. 2016) and aMV-LSTM (Belkacem et al. 2019), as the aMV-LSTM authors' MatchZoo
1.x code builds them (``../shared/papers/upstream-notes.md`` §2.2).

Embedding → (aMV-LSTM: a word attention on the question and/or the answer) → one BiLSTM per side
→ matching matrix of every (question position, answer position) pair of states → its ``top_k``
largest values → dropout → ``OutputHead``. The attention of eq. (4) is Dense(1, no bias) on each
word vector, a softmax over the text's positions, and the vectors scaled by their weight.

Where the code that produced the published numbers and the paper differ, the default follows the
code and the hyperparameter gives the paper's variant:
  match          dot (code) | cosine (paper: "cosine similarity")
  normalize_embeddings  false (code: raw GloVe) | true (paper: "all embedded vectors have been normalized")
  mask_padding   false (code: fixed-width post-padded inputs; the LSTMs, the softmax and the top-k
                 all see the padding) | true (paper's reading: padding takes no part)
"""

from __future__ import annotations

from dataclasses import dataclass

from ansel.models.hparams import TextMatchConfig, fraction, hparam, one_of, positive
from ansel.models.registry import register


def _top_k_fits(value, hparams) -> str | None:
    cells = hparams.text1_maxlen * hparams.text2_maxlen
    return None if value <= cells else f"exceeds the {cells} cells of the text1_maxlen x text2_maxlen matrix"


@dataclass
class MVLSTMConfig(TextMatchConfig):
    embedding_dim: int = hparam(300, positive)
    freeze_embeddings: bool = True  # WikiQA configs: train_embed false
    hidden: int = hparam(50, positive)  # per direction
    lstm_dropout: float = hparam(0.5, fraction)  # Keras LSTM(dropout=...): on the LSTM's inputs
    top_k: int = hparam(100, positive, _top_k_fits)
    dropout: float = hparam(0.5, fraction)  # after the top-k
    match: str = hparam("dot", one_of("dot", "cosine"))
    mask_padding: bool = False
    attend_question: bool = False  # aMV-LSTM (Q); with attend_answer: (Q+A)
    attend_answer: bool = False  # aMV-LSTM (A)


@register("mv_lstm", MVLSTMConfig)  # aMV-LSTM (Q), (A), (Q+A): attend_question / attend_answer
def build_mv_lstm(cfg: MVLSTMConfig, vocab_size: int, embeddings):
    from ansel.models.mvlstm import MVLSTM

    return MVLSTM(cfg, vocab_size, embeddings)
