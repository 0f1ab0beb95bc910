"""DSSM (Huang et al., CIKM 2013) and CDSSM (Shen et al., 2014) as MatchZoo 1.0 builds them
(``matchzoo/models/dssm.py``, ``cdssm.py``; the aMV-LSTM paper's baselines, MatchZoo 1.0's WikiQA
configs). Siamese: each text is encoded on its own, the score is the cosine of the two vectors.

Word hashing. A word is hashed to the letter trigrams of ``#word#``, with repeats; a trigram is
kept if its frequency is in [trigram_min_freq, trigram_max_freq] (MatchZoo's ``filter_triletter``,
5 and 10,000). Its frequency is what the WikiQA preparation script (``prepare_mz_data.py``) feeds
that filter: the trigram's occurrences over the vocabulary's words, each word counted once,
not weighted by its corpus frequency. MatchZoo builds the vocabulary from the whole corpus, we
from the training texts. Trigrams are numbered by decreasing frequency, as there.

Memory. MatchZoo feeds DSSM the text's dense bag-of-trigrams vector (MatchZoo-py materialises
dense letter-trigram matrices: 5 GB at its peak for DSSM). Here the model keeps, per vocabulary
word, the ids of its kept trigrams (a padded buffer [vocab, max trigrams per word]) and its first
dense layer is a sum of weight rows (``EmbeddingBag``): Dense(bag of trigrams) without the bag.

DSSM: bag of the whole text's trigrams -> MLP ``hidden_sizes`` -> cosine. MatchZoo's DSSM has no
text length (its generator hashes every word), so text1_maxlen / text2_maxlen are not read.
CDSSM: each word position -> its own trigram bag -> trainable projection to ``embedding_dim``
-> Conv1d (relu, same padding) -> dropout -> max over the fixed text1_maxlen / text2_maxlen
positions -> MLP -> cosine. The MLP (MatchZoo's ``mlp_work``): one layer is a single linear
Dense; with more, the activation (DSSM tanh, CDSSM relu) after all but the last, dropout after
all but the first. ``classes: 2`` puts MatchZoo's Dense(2, softmax) on the cosine (``OutputHead``).

Differences from MatchZoo 1.0's CDSSM: its generator feeds the text's *trigram* sequence (the
words' trigram ids concatenated, cut at text1_maxlen / text2_maxlen trigrams, padded with the
embedding row vocab_size - 1), so its convolution windows are trigrams, not words. We convolve
over words, each a bag of trigrams, as the CDSSM paper's word-hashing layer does; padding
positions are the empty bag (a zero vector), still convolved and pooled as MatchZoo does.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ansel.models.hparams import TextMatchConfig, fraction, hparam, positive
from ansel.models.registry import register

if TYPE_CHECKING:
    import numpy as np

    from ansel.data.vocab import Lexicon


def positive_sizes(value, hparams) -> str | None:
    return None if len(value) > 0 and all(v > 0 for v in value) else "is not a non-empty list of positive sizes"


def not_below(key: str):
    def check(value, hparams) -> str | None:
        low = getattr(hparams, key)
        return None if value >= low else f"is below {key} {low}"

    return check


@dataclass
class TrigramConfig(TextMatchConfig):
    trigram_min_freq: int = hparam(5, positive)
    trigram_max_freq: int = hparam(10_000, not_below("trigram_min_freq"))


@dataclass
class DSSMConfig(TrigramConfig):
    hidden_sizes: tuple[int, ...] = hparam((300,), positive_sizes)
    # MatchZoo's default is 0.5; the WikiQA config's 0.9 is unused: one layer has no dropout.
    dropout: float = hparam(0.0, fraction)


@dataclass
class CDSSMConfig(TrigramConfig):
    text1_maxlen: int = hparam(20, positive)
    text2_maxlen: int = hparam(40, positive)
    embedding_dim: int = hparam(50, positive)  # the WikiQA config's embed_size 50, trainable
    filters: int = hparam(50, positive)  # kernel_count
    kernel: int = hparam(3, positive)
    hidden_sizes: tuple[int, ...] = hparam((10,), positive_sizes)
    dropout: float = hparam(0.9, fraction)  # Keras' rate: the fraction dropped


def letter_trigrams(word: str) -> list[str]:
    """The letter trigrams of ``#word#`` in order, repeats included."""
    marked = f"#{word}#"
    return [marked[i : i + 3] for i in range(len(marked) - 2)]


def trigram_table(lexicon: "Lexicon", min_freq: int, max_freq: int) -> tuple["np.ndarray", list[str]]:
    """(per vocabulary word the ids of its kept trigrams [vocab, max per word] int64, padded
    with the number of kept trigrams; the kept trigrams in id order). ``<pad>`` and ``<unk>``
    hash to nothing."""
    import numpy as np

    from ansel.data.vocab import PAD_TOKEN, UNK_TOKEN

    hashed = [[] if word in (PAD_TOKEN, UNK_TOKEN) else letter_trigrams(word) for word in lexicon.tokens]
    freq = Counter(gram for grams in hashed for gram in grams)
    kept = sorted((g for g, n in freq.items() if min_freq <= n <= max_freq), key=lambda g: (-freq[g], g))
    index = {g: i for i, g in enumerate(kept)}
    rows = [[index[g] for g in grams if g in index] for grams in hashed]
    table = np.full((len(rows), max(1, max(map(len, rows), default=0))), len(kept), dtype=np.int64)
    for i, row in enumerate(rows):
        table[i, : len(row)] = row
    return table, kept


# Both builders ignore ``embeddings``: their inputs are letter trigrams, not pretrained word vectors.


@register("dssm", DSSMConfig, lexicon=True)
def build_dssm(cfg: DSSMConfig, vocab_size: int, embeddings, lexicon: "Lexicon"):
    from torch import nn

    from ansel.models.dssm import DSSM, WordHashing, mlp
    from ansel.models.layers import keras_init

    table, trigrams = trigram_table(lexicon, cfg.trigram_min_freq, cfg.trigram_max_freq)
    hidden = list(cfg.hidden_sizes)
    # Keras' Glorot-uniform kernel of Dense(n_trigrams -> hidden[0]), its zero bias
    hashing = WordHashing(table, len(trigrams), hidden[0], bias=True, bound=math.sqrt(6 / (len(trigrams) + hidden[0])))
    return keras_init(DSSM(mlp(hashing, hidden, nn.Tanh, cfg.dropout), cfg.classes))


@register("cdssm", CDSSMConfig, lexicon=True)
def build_cdssm(cfg: CDSSMConfig, vocab_size: int, embeddings, lexicon: "Lexicon"):
    from torch import nn

    from ansel.models.dssm import CDSSM, WordHashing, mlp
    from ansel.models.layers import keras_init

    table, trigrams = trigram_table(lexicon, cfg.trigram_min_freq, cfg.trigram_max_freq)
    hidden = list(cfg.hidden_sizes)
    # The projection is MatchZoo's trainable embedding: no bias, initialised U(-0.2, 0.2) as its
    # main.py draws the embedding matrix when no pretrained one is given.
    hashing = WordHashing(table, len(trigrams), cfg.embedding_dim, bias=False, bound=0.2)
    conv = nn.Conv1d(cfg.embedding_dim, cfg.filters, cfg.kernel, padding="same")
    dense = mlp(nn.Linear(cfg.filters, hidden[0]), hidden, nn.ReLU, cfg.dropout)
    return keras_init(CDSSM(hashing, conv, cfg.dropout, dense, cfg.text1_maxlen, cfg.text2_maxlen, cfg.classes))
