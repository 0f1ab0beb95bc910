"""Word embeddings aligned to a vocabulary: word2vec trained with gensim, or pretrained text files.

OOV policy (both paths): row 0 (padding) is zero; a vocabulary word without a vector gets
U(-0.25, 0.25) drawn from a seeded generator (Kim 2014's convention), so results are
reproducible and the returned coverage says how many rows were found.
"""
from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np

from ansel.data.vocab import Vocab


def _init_matrix(vocab: Vocab, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = rng.uniform(-0.25, 0.25, (len(vocab), dim)).astype(np.float32)
    m[0] = 0.0
    return m


def train_word2vec(texts: list[list[str]], vocab: Vocab, dim: int, *, window: int = 5, min_count: int = 1,
                   epochs: int = 5, sg: int = 1, seed: int = 1) -> tuple[np.ndarray, float]:
    """Train word2vec on ``texts`` (one worker: gensim is only deterministic single-threaded)."""
    from gensim.models import Word2Vec

    model = Word2Vec(sentences=texts, vector_size=dim, window=window, min_count=min_count, sg=sg,
                     epochs=epochs, seed=seed, workers=1)
    m = _init_matrix(vocab, dim, seed)
    found = 0
    for i, tok in enumerate(vocab.tokens[2:], start=2):
        if tok in model.wv.key_to_index:
            m[i] = model.wv[tok]
            found += 1
    return m, found / max(1, len(vocab) - 2)


def load_pretrained(path: str | os.PathLike, vocab: Vocab, dim: int, seed: int = 1) -> tuple[np.ndarray, float]:
    """Read a GloVe or word2vec *text* file (optionally .gz), keeping only vocabulary words.

    A word2vec header line ("count dim") is skipped; a vector of the wrong dimension is an error
    naming the file and line. Exact matches win over lower-cased ones.
    """
    path = Path(path)
    m = _init_matrix(vocab, dim, seed)
    found: set[int] = set()
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="strict") as f:
        for lineno, line in enumerate(f, start=1):
            parts = line.rstrip("\n").rstrip(" ").split(" ")
            if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue
            word, values = parts[0], parts[1:]
            if len(values) != dim:
                raise ValueError(f"{path}:{lineno}: vector of {len(values)} values, expected {dim}")
            for key, exact in ((word, True), (word.lower(), False)):
                i = vocab.index.get(key)
                if i is not None and i > 1 and (exact or i not in found):
                    m[i] = np.asarray(values, dtype=np.float32)
                    found.add(i)
    return m, len(found) / max(1, len(vocab) - 2)
