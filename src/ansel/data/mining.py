"""Offline candidate mining, at preprocessing: negative candidates written into the processed
candidate tables of corpora that ship only positive question-answer pairs. (The negatives a
model trains on are drawn per batch from those tables by ``ansel.training.sampler``.)

* ``bm25_negatives``: the Tay et al. / yahooQA protocol — retrieve the top-k answers of the pool
  for each question with Lucene-variant BM25 (bm25s, ``method="lucene"``) and sample n of them
  that are not positives of that question (seeded).
* ``other_category_negatives``: the LawQA protocol for training — for each positive pair, one
  random answer taken from a question of another category.
* ``random_pools``: the LawQA protocol for testing — a fixed-size candidate pool per question:
  its positives plus random other answers.
Corpora that ship their negatives (Tay's split, WikiQA, TREC-QA) keep them as given: their
readers write those candidates as label-0 rows, nothing here is applied.
All functions work on positions (ints) so callers map ids themselves; all are deterministic in
``seed``.
"""

from __future__ import annotations

from typing import Sequence

import bm25s
import numpy as np


def bm25_top_k(
    query_tokens: Sequence[list[str]], corpus_tokens: Sequence[list[str]], k: int, n_threads: int = 0
) -> np.ndarray:
    """Indices [n_queries, min(k, len(corpus))] of the best BM25 (Lucene) corpus entries per query."""
    # The numpy backend: numba's was slower here (JIT compile per process outweighs its gain at 10k queries).
    retriever = bm25s.BM25(method="lucene")
    retriever.index([list(t) for t in corpus_tokens], show_progress=False)
    k = min(k, len(corpus_tokens))
    # bm25s rejects queries with no known token; such a query gets a random-order row below.
    vocab = retriever.vocab_dict
    queries = [[t for t in q if t in vocab] for q in query_tokens]
    out = np.full((len(queries), k), -1, dtype=np.int64)
    keep = [i for i, q in enumerate(queries) if q]
    if keep:
        docs, _ = retriever.retrieve([queries[i] for i in keep], k=k, show_progress=False, n_threads=n_threads)
        out[keep] = docs
    return out


def bm25_negatives(
    query_tokens: Sequence[list[str]],
    corpus_tokens: Sequence[list[str]],
    positives: Sequence[set[int]],
    k: int = 1000,
    n: int = 4,
    seed: int = 0,
    n_threads: int = 0,
) -> list[list[int]]:
    """Per query, ``n`` corpus indices sampled uniformly from its BM25 top-``k`` minus its positives.

    A query whose top-k holds fewer than n non-positives gets what there is (topped up from the
    rest of the corpus when the top-k is empty because no query token is in the corpus).
    """
    top = bm25_top_k(query_tokens, corpus_tokens, k, n_threads)
    rng = np.random.default_rng(seed)
    out: list[list[int]] = []
    for row, pos in zip(top, positives):
        pool = row[row >= 0]
        if pool.size == 0:
            pool = rng.permutation(len(corpus_tokens))[:k]
        pool = pool[~np.isin(pool, list(pos))] if pos else pool
        take = min(n, pool.size)
        out.append(sorted(int(i) for i in rng.choice(pool, take, replace=False)) if take else [])
    return out


def other_category_negatives(
    pair_categories: Sequence[str], answer_categories: Sequence[str], seed: int = 0
) -> list[int]:
    """For each positive pair (given its question's category) one random answer index whose
    category differs (``answer_categories[i]`` = category of a question answer i answers)."""
    rng = np.random.default_rng(seed)
    ans_cat = np.asarray(answer_categories, dtype=object)
    others = {c: np.flatnonzero(ans_cat != c) for c in set(pair_categories)}
    out = []
    for c in pair_categories:
        pool = others[c]
        if pool.size == 0:
            raise ValueError(f"no answer outside category {c!r} to sample a negative from")
        out.append(int(pool[rng.integers(pool.size)]))
    return out


def random_pools(
    positives: Sequence[set[int]], n_answers: int, size: int, seed: int = 0, allowed: np.ndarray | None = None
) -> list[list[int]]:
    """Per question, ``size - #positives`` distinct random negatives (indices into the answer set,
    drawn from ``allowed`` if given) — the candidate pool is positives + these."""
    rng = np.random.default_rng(seed)
    universe = np.arange(n_answers) if allowed is None else np.asarray(allowed)
    out = []
    for pos in positives:
        need = max(size - len(pos), 0)
        # Oversample then drop positives: cheaper than building the complement per question.
        draw = rng.choice(universe, min(universe.size, need + len(pos)), replace=False)
        neg = [int(i) for i in draw if int(i) not in pos][:need]
        out.append(neg)
    return out
