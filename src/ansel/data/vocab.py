"""Vocabulary: token <-> id, built from a dataset's training text; 0 = padding, 1 = unknown."""

from __future__ import annotations

import functools
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from ansel.files import write_text_atomic
from ansel.settings import InputError

if TYPE_CHECKING:  # canonical imports pandas (+60 MB resident), which only dataset I/O needs
    import pandas as pd

    from ansel.data.canonical import Dataset

PAD_TOKEN, UNK_TOKEN = "<pad>", "<unk>"
PAD, UNK = 0, 1  # the ids of <pad> (padded positions of an id matrix) and <unk>


class VocabFileError(ValueError, InputError):
    """A vocabulary file that is not one ``Vocab.save`` wrote: the message names it and the fix."""


class Vocab:
    def __init__(self, tokens: list[str]):
        if tokens[:2] != [PAD_TOKEN, UNK_TOKEN]:
            raise ValueError("a vocabulary starts with <pad>, <unk>")
        self.tokens = tokens
        self.index = {t: i for i, t in enumerate(tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    @classmethod
    def build(
        cls, texts: Iterable[list[str]], min_count: int = 1, max_size: int | None = None, min_df: int = 1
    ) -> "Vocab":
        """Tokens occurring at least ``min_count`` times in all (corpus frequency) and in at least
        ``min_df`` texts (document frequency: each text one document), most frequent first."""
        counts: Counter[str] = Counter()
        df: Counter[str] = Counter()
        for toks in texts:
            counts.update(toks)
            df.update(set(toks))
        # Frequency, then the token itself: the order never depends on hash seeds or input order.
        kept = sorted(
            (t for t, c in counts.items() if c >= min_count and df[t] >= min_df), key=lambda t: (-counts[t], t)
        )
        return cls([PAD_TOKEN, UNK_TOKEN] + kept[:max_size])

    def encode_batch(self, token_lists: Iterable[Sequence[str]] | pd.Series, max_len: int) -> np.ndarray:
        """[N, width] int64 ids, right-padded with PAD: each text's first ``max_len`` tokens, unknown ones
        UNK, an empty text one UNK (never all padding); width: the longest row's, at least 1.
        ``token_lists``: sequences of tokens, or a pandas column of them (object or Arrow-backed lists)."""
        if max_len < 0:
            raise ValueError(f"max_len {max_len} is negative")
        flat, lengths = _flatten(token_lists)
        kept = np.minimum(lengths, max_len)
        out = np.zeros((len(kept), int(kept.max(initial=1))), dtype=np.int64)
        # each kept token's row, column and place in ``flat``: one gather, one lookup, one scatter
        rows = np.repeat(np.arange(len(kept)), kept)
        cols = np.arange(len(rows)) - np.repeat(np.cumsum(kept) - kept, kept)
        out[rows, cols] = self.ids(flat[np.repeat(np.cumsum(lengths) - lengths, kept) + cols])
        out[kept == 0, 0] = UNK
        return out

    def ids(self, tokens: np.ndarray, unknown: int = UNK) -> np.ndarray:
        """The id of each of ``tokens`` (an object array), ``unknown`` where the vocabulary lacks it."""
        import pandas as pd

        known, ids = self._lookup
        at = known.get_indexer(pd.Index(tokens, dtype=object))
        return np.where(at >= 0, ids[at], unknown)

    @functools.cached_property
    def _lookup(self) -> tuple[pd.Index, np.ndarray]:
        """``index`` as a hash index of its tokens and their ids (a token listed twice: its last id, as there)."""
        import pandas as pd

        return pd.Index(list(self.index), dtype=object), np.fromiter(self.index.values(), np.int64, len(self.index))

    def save(self, path: str | os.PathLike) -> None:
        write_text_atomic(Path(path), json.dumps(self.tokens, ensure_ascii=False))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Vocab":
        """The vocabulary ``save`` wrote to ``path``; a file missing, cut short or edited into something
        else is a VocabFileError naming it (a changed but well-formed one is the manifest's to find)."""
        path = Path(path)
        fix = (
            "`ansel preprocess` writes a dataset's, `ansel embeddings` a run's with its corpus vectors: "
            "delete it and rerun snakemake"
        )
        try:
            tokens = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise VocabFileError(f"{path}: missing; {fix}") from None
        except ValueError as e:  # not JSON, or not UTF-8
            raise VocabFileError(f"{path}: not a vocabulary ({e}); {fix}") from None
        if not (isinstance(tokens, list) and all(isinstance(t, str) for t in tokens)):
            raise VocabFileError(f"{path}: not a vocabulary (a JSON list of tokens); {fix}")
        try:
            return cls(tokens)
        except ValueError as e:
            raise VocabFileError(f"{path}: {e}; {fix}") from None


def _flatten(token_lists: Iterable[Sequence[str]] | pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Every text's tokens end to end (an object array) and each text's length."""
    import pandas as pd

    if isinstance(getattr(token_lists, "dtype", None), pd.ArrowDtype):  # list<string> in Arrow's buffers
        import pyarrow as pa
        import pyarrow.compute as pc

        lists = pa.array(token_lists)
        if lists.null_count:
            raise ValueError(f"text {pc.index(lists.is_null(), True).as_py()}: no token list (null)")
        return lists.flatten().to_numpy(zero_copy_only=False), pc.list_value_length(lists).to_numpy().astype(np.int64)
    texts = list(token_lists)
    arrays = [np.asarray(t, dtype=object) for t in texts]
    bad = next((i for i, a in enumerate(arrays) if a.ndim != 1), None)
    if bad is not None:
        raise ValueError(f"text {bad}: {texts[bad]!r} is not a sequence of tokens")
    if not arrays:
        return np.empty(0, dtype=object), np.empty(0, dtype=np.int64)
    return np.concatenate(arrays), np.fromiter(map(len, arrays), np.int64, len(arrays))


def run_vocab_file(cfg: dict, processed: str | os.PathLike) -> Path:
    """The vocabulary a run's ids come from: its corpus vectors' (``config.run_config``), else the dataset's."""
    return Path(cfg["vocab"]) if cfg.get("vocab") else Path(processed) / "vocab.json"


def training_texts(ds: Dataset, split: str = "train") -> list[list[str]]:
    """Token lists of the training split's questions and candidate answers."""
    import pandas as pd

    cands = ds.splits[split]
    # by hash index: pandas' isin on an Arrow string column makes a Python scalar of every value sought
    q = ds.questions.tokens[pd.Index(cands.qid.unique()).get_indexer(ds.questions.qid) >= 0]
    a = ds.answers.tokens[pd.Index(cands.aid.unique()).get_indexer(ds.answers.aid) >= 0]
    return [list(t) for t in q] + [list(t) for t in a]


@dataclass(frozen=True)
class Lexicon:
    """What some models read of the vocabulary itself (``registry.register(..., lexicon=True)``):
    its words in id order, and per word its document frequency ``df`` and corpus frequency ``cf``
    over ``n_docs`` training texts (each question and candidate answer one document)."""

    tokens: list[str]
    df: np.ndarray  # [len(tokens)] int64
    cf: np.ndarray  # [len(tokens)] int64
    n_docs: int

    @property
    def idf(self) -> np.ndarray:
        """ln((1 + N) / (1 + df)) + 1 per word (float32): positive, largest for unseen words."""
        return (np.log((1 + self.n_docs) / (1 + self.df)) + 1).astype(np.float32)

    @classmethod
    def build(cls, vocab: Vocab, documents: Iterable[list[str]]) -> "Lexicon":
        flat, lengths = _flatten(documents)
        ids = vocab.ids(flat, unknown=-1)
        known = ids >= 0  # words outside the vocabulary count nowhere
        doc = np.repeat(np.arange(len(lengths)), lengths)[known]
        ids = ids[known]
        cf = np.bincount(ids, minlength=len(vocab)).astype(np.int64)
        in_doc = np.unique(doc * len(vocab) + ids)  # each (document, word) once
        df = np.bincount(in_doc % len(vocab), minlength=len(vocab)).astype(np.int64)
        return cls(vocab.tokens, df, cf, len(lengths))
