"""Word embeddings aligned to a vocabulary: word2vec trained with gensim (published files: ansel.pretrained).

OOV policy (both paths): row 0 (padding) is zero; a vocabulary word without a vector gets
U(-0.25, 0.25) drawn from a seeded generator (Kim 2014's convention), so results are
reproducible and the returned coverage says how many rows were found.

Corpus vectors (params.yaml ``embeddings.word2vec.<recipe>``) are trained once on the training
splits of several datasets, optionally post-processed ("all-but-the-top": Mu & Viswanath, 2018,
remove the mean and the top principal directions), then aligned to each dataset's vocabulary,
which may keep every word the vectors cover (``keep_vector_words``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ansel.data.vocab import Vocab
from ansel.files import atomic_path
from ansel.jsonfile import read_json
from ansel.settings import InputError

PROBE_WORDS = ["president", "river", "died", "money", "insurance", "doctor", "1990"]  # nearest-neighbour sanity
WORD2VEC_KEYS = ("window", "min_count", "epochs", "sg", "seed")  # gensim's settings a recipe may give


def init_matrix(vocab: Vocab, dim: int, seed: int) -> np.ndarray:
    """The rows no vectors file fills: U(-0.25, 0.25) from ``seed``, row 0 (padding) zero."""
    rng = np.random.default_rng(seed)
    m = rng.uniform(-0.25, 0.25, (len(vocab), dim)).astype(np.float32)
    m[0] = 0.0
    return m


def word2vec_vectors(
    texts: list[list[str]],
    dim: int,
    *,
    window: int = 5,
    min_count: int = 1,
    epochs: int = 5,
    sg: int = 1,
    seed: int = 1,
) -> tuple[list[str], np.ndarray]:
    """Train word2vec on ``texts`` (one worker: gensim is only deterministic single-threaded);
    the words most frequent first, and their vectors."""
    from gensim.models import Word2Vec

    model = Word2Vec(
        sentences=texts, vector_size=dim, window=window, min_count=min_count, sg=sg, epochs=epochs, seed=seed, workers=1
    )
    return list(model.wv.index_to_key), np.asarray(model.wv.vectors, dtype=np.float32)


def save_matrix(path: Path, matrix: np.ndarray) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as f:  # a file object: np.save appends no ".npy"
        np.save(f, matrix)


class VectorsFileError(ValueError, InputError):
    """A vectors array that is missing or not one ``save_matrix`` wrote: the message names it and the fix."""


def load_matrix(path: str | Path) -> np.ndarray:
    """A vectors array written by ``save_matrix``; one missing, cut short or not an array at all is
    an error naming the file (never a pickle: ``allow_pickle=False``), as is one of other than float
    values or with a value not finite (checked before a run starts from them, not as its loss)."""
    from numpy.lib import format as npy

    path = Path(path)
    # only the pipeline's own files are made again by their target; another is the user's to mend
    made = path.parent.parts[-2:] == ("data", "vectors") or path.parent.parent.parts[-2:] == ("data", "embeddings")
    fix = f"delete it and rerun its target (snakemake {path})" if made else "give a .npy file of vectors"
    if path.is_dir():
        raise VectorsFileError(f"{path}: a folder, not a .npy file of vectors; give the vectors' file")
    try:
        with open(path, "rb") as f:
            if f.read(len(npy.MAGIC_PREFIX)) != npy.MAGIC_PREFIX:
                raise VectorsFileError(f"{path}: not a .npy file (no numpy header); {fix}")
            f.seek(0)
            version = npy.read_magic(f)
            dtype = (npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0)(f)[2]
        if not np.issubdtype(dtype, np.floating):
            raise VectorsFileError(f"{path}: an array of {dtype} values, not of floats; {fix}")
        matrix = np.load(path, allow_pickle=False)
    except VectorsFileError:
        raise
    except FileNotFoundError:
        raise VectorsFileError(f"{path}: no such file; make it with its target (snakemake {path})") from None
    except (ValueError, OSError, EOFError) as e:
        raise VectorsFileError(f"{path}: corrupt or cut short ({e}); {fix}") from None
    if not (finite := np.isfinite(matrix)).all():
        where = np.argwhere(~finite)[0]
        raise VectorsFileError(
            f"{path}: row {where[0] if matrix.ndim else 0} holds {matrix[tuple(where)]}, not a finite number; {fix}"
        )
    return matrix


def load_corpus_vectors(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Corpus vectors as ``ansel corpus-vectors`` wrote them: their words (``.words.json`` beside the
    array, one a row) and the array. A words file missing, cut short, not a list of distinct words,
    or of another length than the array (one of the pair rewritten without the other) is an error
    naming it: the recipe's rows would otherwise go to the wrong words."""
    path = Path(path)
    matrix = load_matrix(path)
    words_path = path.with_suffix(".words.json")
    remake = f"delete {path} and rerun its target (snakemake {path})"
    try:
        words = read_json(words_path, list)  # one cut short or not a list: a ConfigError naming it
    except FileNotFoundError:
        raise VectorsFileError(f"{words_path}: missing (the words of {path}'s rows); {remake}") from None
    if not all(isinstance(w, str) for w in words) or len(set(words)) != len(words):
        raise VectorsFileError(f"{words_path}: not a list of distinct words; {remake}")
    if matrix.ndim != 2 or len(words) != len(matrix):
        raise VectorsFileError(
            f"{words_path}: {len(words)} words for an array of shape {matrix.shape} in {path}; {remake}"
        )
    return words, matrix


def all_but_the_top(vectors: np.ndarray, d: int) -> np.ndarray:
    """Mu & Viswanath (2018): subtract the mean vector, then the projections on the top ``d``
    principal directions (d = 0: centring only)."""
    centred = vectors - vectors.mean(axis=0)
    if d == 0:
        return centred.astype(np.float32)
    top = np.linalg.svd(centred, full_matrices=False)[2][:d]
    return (centred - (centred @ top.T) @ top).astype(np.float32)


def align(
    words: list[str], vectors: np.ndarray, vocab: Vocab, seed: int = 1, keep_vector_words: bool = False
) -> tuple[np.ndarray, float, Vocab]:
    """Rows of ``vectors`` for ``vocab``'s words; with ``keep_vector_words`` the vocabulary first
    grows by every other word the vectors cover (appended in the vectors' order, so the training
    words keep their ids). Coverage is over the original vocabulary."""
    n_train = len(vocab)
    if keep_vector_words:
        vocab = Vocab(vocab.tokens + [w for w in words if w not in vocab.index])
    m = init_matrix(vocab, vectors.shape[1], seed)
    index = {w: i for i, w in enumerate(words)}
    found = 0
    for i, tok in enumerate(vocab.tokens[2:], start=2):
        j = index.get(tok)
        if j is not None:
            m[i] = vectors[j]
            found += i < n_train
    return m, found / max(1, n_train - 2), vocab


def isotropy(vectors: np.ndarray, seed: int = 0, pairs: int = 10_000) -> dict[str, float]:
    """How much word vectors share one direction (the collapse of reports/apnet-training-collapse.md):
    the norm of their mean over their mean norm (1: all alike, 0: centred), and the mean cosine of
    random pairs of distinct words (a seeded sample)."""
    norms = np.linalg.norm(vectors, axis=1)
    unit = vectors / np.maximum(norms, 1e-12)[:, None]
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(vectors), (2, pairs))
    keep = i != j
    return {
        "mean_norm_ratio": float(np.linalg.norm(vectors.mean(axis=0)) / norms.mean()),
        "mean_pair_cosine": float(np.mean(np.sum(unit[i[keep]] * unit[j[keep]], axis=1))),
    }


def neighbours(matrix: np.ndarray, vocab: Vocab, words: list[str], k: int = 5) -> dict[str, list[str]]:
    """The ``k`` nearest vocabulary words (cosine) of each of ``words`` the vocabulary has: a sanity probe."""
    unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1), 1e-12)[:, None]
    out = {}
    for w in words:
        if (i := vocab.index.get(w)) is not None:
            sims = unit @ unit[i]
            sims[[0, 1, i]] = -np.inf
            out[w] = [vocab.tokens[j] for j in np.argsort(-sims, kind="stable")[:k]]
    return out


def train_word2vec(
    texts: list[list[str]], vocab: Vocab, dim: int, *, seed: int = 1, **settings
) -> tuple[np.ndarray, float]:
    """word2vec trained on ``texts`` (a dataset's training text), aligned to ``vocab``."""
    words, vectors = word2vec_vectors(texts, dim, seed=seed, **settings)
    matrix, coverage, _ = align(words, vectors, vocab, seed)
    return matrix, coverage
