"""Vocabulary: token <-> id, built from a dataset's training text; 0 = padding, 1 = unknown."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import numpy as np

from ansel.files import write_text_atomic

if TYPE_CHECKING:  # canonical imports pandas (+60 MB resident), which only dataset I/O needs
    from ansel.data.canonical import Dataset

PAD_TOKEN, UNK_TOKEN = "<pad>", "<unk>"
PAD = 0  # the id of <pad>: padded positions of an id matrix


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

    def encode(self, tokens: list[str], max_len: int) -> np.ndarray:
        ids = [self.index.get(t, 1) for t in tokens[:max_len]]
        return np.asarray(ids or [1], dtype=np.int64)  # an empty text is one <unk>, never all padding

    def encode_batch(self, token_lists: Iterable[list[str]], max_len: int) -> np.ndarray:
        """[N, max_len] ids, right-padded with 0."""
        rows = [self.encode(list(t), max_len) for t in token_lists]
        out = np.zeros((len(rows), max(1, max((len(r) for r in rows), default=1))), dtype=np.int64)
        for i, r in enumerate(rows):
            out[i, : len(r)] = r
        return out

    def save(self, path: str | os.PathLike) -> None:
        write_text_atomic(Path(path), json.dumps(self.tokens, ensure_ascii=False))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Vocab":
        return cls(json.loads(Path(path).read_text()))


def run_vocab_file(cfg: dict, processed: str | os.PathLike) -> Path:
    """The vocabulary a run's ids come from: its corpus vectors' (``config.run_config``), else the dataset's."""
    return Path(cfg["vocab"]) if cfg.get("vocab") else Path(processed) / "vocab.json"


def training_texts(ds: Dataset, split: str = "train") -> list[list[str]]:
    """Token lists of the training split's questions and candidate answers."""
    cands = ds.splits[split]
    q = ds.questions[ds.questions.qid.isin(cands.qid)].tokens
    a = ds.answers[ds.answers.aid.isin(cands.aid)].tokens
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
        df = np.zeros(len(vocab), dtype=np.int64)
        cf = np.zeros(len(vocab), dtype=np.int64)
        n = 0
        for doc in documents:
            n += 1
            ids = [vocab.index[t] for t in doc if t in vocab.index]
            np.add.at(cf, ids, 1)
            df[list(set(ids))] += 1
        return cls(vocab.tokens, df, cf, n)
