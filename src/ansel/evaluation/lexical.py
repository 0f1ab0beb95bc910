"""Lexical context rows: BM25, Word Count and Weighted Word Count scores of a split's candidates.

Deterministic baselines computed from the canonical tokens (never vocabulary ids, so words outside
the training vocabulary still match). Every scorer compares *terms*: tokens lower-cased, without
NLTK's English stop words (ansel/data/stopwords/nltk_english.txt) and without tokens that hold no
letter or digit (punctuation is no word).

* Word Count (Yang et al. 2015, after Yih et al. 2013): the number of the question's distinct
  terms that occur in the answer sentence.
* Weighted Word Count: the same words, each counted with its IDF, log(N / df), over the dataset's
  answer sentences: N = the distinct candidate sentences of every split (their texts only, never
  a label), df = how many of them hold the word. Every word that matches has df >= 1.
* BM25: bm25s's Lucene variant (k1, b: its defaults 1.5, 0.75) with each question's candidates as
  the corpus and the question's terms as the query.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ansel.data.canonical import Dataset
from ansel.data.tokenize import get_stopwords

_WORD = re.compile(r"\w")  # a term holds a letter or digit (any script)


def terms(tokens: Iterable[str]) -> list[str]:
    """The tokens compared: lower-cased, stop words and punctuation removed, order and repeats kept."""
    stop = get_stopwords("nltk_english")
    lowered = (t.lower() for t in tokens)
    return [t for t in lowered if t not in stop and _WORD.search(t)]


def word_count(question: Sequence[str], answer: Sequence[str]) -> float:
    """Distinct question terms that occur in the answer (both given as terms)."""
    return float(len(set(question) & set(answer)))


def weighted_word_count(question: Sequence[str], answer: Sequence[str], idf: dict[str, float]) -> float:
    """Word Count with each shared word weighted by its IDF, summed in sorted order: a set's order
    changes between processes (string hashing), and float addition is not associative."""
    return float(sum(idf[w] for w in sorted(set(question) & set(answer))))


def idf_table(documents: Iterable[Sequence[str]]) -> dict[str, float]:
    """log(N / df) of every word of the documents (each a list of terms)."""
    df: Counter[str] = Counter()
    n = 0
    for doc in documents:
        df.update(set(doc))
        n += 1
    return {w: math.log(n / c) for w, c in df.items()}


def bm25(question: Sequence[str], candidates: Sequence[Sequence[str]], k1: float, b: float) -> np.ndarray:
    """Lucene BM25 of each candidate for the question, the candidates being the whole corpus."""
    import bm25s  # lazy: only lexical runs need it

    if not question:  # bm25s refuses an empty query; nothing can match
        return np.zeros(len(candidates))
    retriever = bm25s.BM25(method="lucene", k1=k1, b=b)
    retriever.index([list(c) for c in candidates], show_progress=False)
    return retriever.get_scores(list(question)).astype(np.float64)


def score_candidates(method: str, hparams, data: Dataset, cands: pd.DataFrame) -> np.ndarray:
    """Scores of ``cands`` (rows qid, aid of ``data``), in their order, under ``method``
    (``bm25``, ``word_count``, ``weighted_word_count``; ``hparams`` its ``ansel.models.archs.lexical`` config)."""
    q_terms = {q: terms(t) for q, t in zip(data.questions.qid, data.questions.tokens)}
    a_terms = {a: terms(t) for a, t in zip(data.answers.aid, data.answers.tokens)}
    if method == "word_count":
        return np.array([word_count(q_terms[q], a_terms[a]) for q, a in zip(cands.qid, cands.aid)])
    if method == "weighted_word_count":
        sentences = pd.unique(pd.concat([split.aid for split in data.splits.values()]))
        idf = idf_table(a_terms[a] for a in sentences)
        return np.array([weighted_word_count(q_terms[q], a_terms[a], idf) for q, a in zip(cands.qid, cands.aid)])
    if method == "bm25":
        scores = np.zeros(len(cands))
        for q, rows in cands.groupby("qid", sort=False).indices.items():
            scores[rows] = bm25(q_terms[q], [a_terms[a] for a in cands.aid.to_numpy()[rows]], hparams.k1, hparams.b)
        return scores
    raise ValueError(f"unknown lexical scorer {method!r}; known: bm25, word_count, weighted_word_count")
