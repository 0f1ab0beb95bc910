"""aNMM (Yang et al., CIKM 2016) as MatchZoo 1.0 implements it (``matchzoo/models/anmm.py``) and
the aMV-LSTM paper (SAC 2019) ran it on WikiQA (its authors' MatchZoo fork, ``anmm_wikiqa.config``).

Each question word's cosines with the answer words are summed into bins, an MLP maps the bins to
one value, and the score is those values weighted by a softmax over the question words (the gate).

Bin sums. Upstream computes them offline (``gen_binsum4anmm.py 20`` -> ``preprocess.cal_binsum``)
from the L2-normalised GloVe vectors; here the model computes them from its frozen table of the
normalised vectors, so the same vectors give the same features:
  - a cosine v falls into bin int((v + 1) / 2 * (bin_num - 1)), which adds v (a sum, not a count):
    bins 0 .. bin_num - 2 split [-1, 1) evenly and only v = 1 reaches the last bin (exact matches).
  - a word against the same word id counts as exactly 1. Upstream's normalised vectors pass
    through a text file written with six decimals (``norm_embed.py``), so a word's cosine with
    itself is 1 +- 1e-6 and about half of the exact matches land one bin lower; here all of them
    reach the exact-match bin, whatever the rounding or the device's order of summation.
  - the whole answer as the batch holds it (upstream: the whole preprocessed answer; text2_maxlen
    is not used); its padding adds nothing.
  - the first text1_maxlen question words, post-padded to text1_maxlen: a padding row has zero
    features, as upstream's zero-filled rows, yet passes the MLP and takes part in the gate.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansel.models.hparams import TextMatchConfig, fraction, hparam, one_of, positive
from ansel.models.registry import register


def _mlp_sizes(value, hparams) -> str | None:
    ok = len(value) > 0 and all(h > 0 for h in value) and value[-1] == 1
    return None if ok else "is not a list of positive layer sizes ending in 1 (one value per question word)"


@dataclass
class ANMMConfig(TextMatchConfig):
    embedding_dim: int = hparam(300, positive)
    bin_num: int = hparam(20, positive)
    hidden_sizes: tuple[int, ...] = hparam((20, 1), _mlp_sizes)  # QuoraQP config: [300, 1]
    dropout: float = hparam(0.0, fraction)  # on the bin features
    gate: str = hparam("idf", one_of("idf", "embedding"))  # what the query gate reads
    gate_dim: int = hparam(300, positive)  # gate idf: width of its broadcast


@register("anmm", ANMMConfig, lexicon=True)
def build_anmm(cfg: ANMMConfig, vocab_size: int, embeddings, lexicon):
    from ansel.models.anmm import ANMM

    return ANMM(cfg, vocab_size, embeddings, lexicon.idf)
