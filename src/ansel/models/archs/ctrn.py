"""Cross Temporal Recurrent Network (CTRN; Tay, Tuan & Hui, AAAI 2018, arXiv 1711.07656).

CTRN is a QRNN (Bradbury et al. 2016) pair encoder whose recurrence on each side is gated by
gates learned on *both* sides: "temporal gates are learned via 1D convolutional layers and then
subsequently cross applied across question and answer" (abstract), so each representation is
"aware of what [its partner] is remembering or forgetting". Not siamese. Assembled as
embedding + dropout -> ``encoders.QRNNGateEncoder`` -> ``compositions.CrossAppliedGates`` -> scorer.

What the paper's text we could read fixes (abstract, Figure 1 and its caption; the method
section itself was not in the stored copies we had, so its equations are reconstructed from
the figure, a published summary of the paper, and QRNN):
  1. Embedding -> projection layer (word vectors of size n -> m) (Figure 1).
  2. Per side s in {q, a}, three 1D convolutions over the projected words (QRNN, eq. Z/F/O):
     Z_s = tanh(W_z * X_s), F_s = sigmoid(W_f * X_s), O_s = sigmoid(W_o * X_s)
     ("Conv Z", "Conv F", "Conv O" in Figure 1; the gates are "pre-learned via convolutions").
  3. A CTRN cell per side (CTRN-Q, CTRN-A) runs QRNN fo-pooling over its own Z, with gates
     that combine its own F, O with its partner's ("each CTRN cell incorporates the gates of
     their partner"; the cell reads z_s, f_s, o_s and the partner's f, o):
        c_t = f_t * c_{t-1} + (1 - f_t) * z_t,   h_t = o_t * c_t.
  4. Question and answer vectors -> two-layer MLP -> softmax over (irrelevant, relevant),
     trained with a pointwise cross-entropy (GGSA §4.2: "Following the setting in [CTRN], we
     use pointwise loss ... a two-layer MLP and a Softmax layer"); ``MLPScorer`` returns the
     positive-class log-odds, so BCE on the score is that two-class cross-entropy.

Chosen (the text we had is silent):
  - projection: Linear(n, m) + ReLU; dropout on the word embeddings, before the projection.
  - the convolutions are QRNN's masked (causal) ones, window ``kernel``: step t sees words
    t-k+1..t, so appended padding never reaches a real step; one set of convolution weights
    serves both sides (as the embedding and projection do).
  - cross-application across different lengths: the partner's gates are summarised by their
    mean over its real words (F̄, Ō [B, m]) and averaged with the cell's own gate at each step:
        f_t = (F_s[t] + F̄_partner) / 2,   o_t = (O_s[t] + Ō_partner) / 2
    which keeps the gates in (0, 1) and needs no alignment of positions.
  - the cell state starts at zero and is carried unchanged through padded steps.
  - the side's vector is the mean of h_t over its real words.
  - the MLP is ``MLPScorer`` (tanh hidden layer of width m on [v_q, v_a]); ``scorer: cosine``
    swaps in the cosine for pairwise (hinge) training.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansel.models.hparams import SCORERS, HParams, fraction, hparam, one_of, positive
from ansel.models.registry import register


@dataclass
class CTRNConfig(HParams):
    embedding_dim: int = hparam(300, positive)
    hidden: int = hparam(300, positive)  # m: projection and gate width
    kernel: int = hparam(3, positive)  # window of Conv Z / F / O
    dropout: float = hparam(0.0, fraction)  # on word embeddings
    freeze_embeddings: bool = False
    scorer: str = hparam("mlp", one_of(*SCORERS))  # mlp (pointwise, the paper) | cosine (pairwise hinge)


@register("ctrn", CTRNConfig)
def build_ctrn(cfg: CTRNConfig, vocab_size: int, embeddings):
    from ansel.models.compositions import CrossAppliedGates
    from ansel.models.encoders import QRNNGateEncoder
    from ansel.models.layers import dropped_embedding
    from ansel.models.rankers import assemble
    from ansel.models.scorers import make_scorer

    embed = dropped_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings, cfg.dropout)
    encoder = QRNNGateEncoder(cfg.embedding_dim, cfg.hidden, cfg.kernel)
    return assemble(embed, encoder, CrossAppliedGates(), make_scorer(cfg.scorer, cfg.hidden))
