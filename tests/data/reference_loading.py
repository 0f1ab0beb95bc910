"""Straightforward per-text and per-row references for what ``RunData.load`` computes in whole
columns (``Vocab.encode_batch``, ``RunData.pairs``, ``RunData.categories`` / ``q_category``,
``training_texts``, ``Lexicon.build``), and
one check of a processed dataset against them, shared by the tests that build one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ansel.data.batches import RunData
from ansel.data.vocab import Lexicon, Vocab, training_texts


def reference_ids(vocab: Vocab, texts, max_len: int) -> np.ndarray:
    """One text at a time: its first ``max_len`` tokens' ids (1 where unknown, one 1 where none),
    right-padded with 0 to the longest row (at least 1 wide)."""
    rows = [[vocab.index.get(t, 1) for t in list(text)[:max_len]] or [1] for text in texts]
    out = np.zeros((len(rows), max([len(r) for r in rows], default=1)), dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def reference_categories(data: RunData) -> tuple[list[str], np.ndarray]:
    """The training split's question categories, sorted, and each question's index among them (-1: none)."""
    q, train = data.dataset.questions, set(data.dataset.splits["train"].qid)
    categories = sorted({str(c) for qid, c in zip(q.qid, q.category) if qid in train and not pd.isna(c)})
    index = {c: i for i, c in enumerate(categories)}
    return categories, np.array([index.get(c, -1) if isinstance(c, str) else -1 for c in q.category], dtype=np.int64)


def reference_training_texts(data: RunData) -> list[list[str]]:
    """The token lists of the questions, then the answers, that the training split names."""
    ds, cands = data.dataset, data.dataset.splits["train"]
    qids, aids = set(cands.qid), set(cands.aid)
    return [list(t) for q, t in zip(ds.questions.qid, ds.questions.tokens) if q in qids] + [
        list(t) for a, t in zip(ds.answers.aid, ds.answers.tokens) if a in aids
    ]


def reference_lexicon(vocab: Vocab, documents: list[list[str]]) -> tuple[list[int], list[int], int]:
    """Per word of ``vocab``: in how many documents and how many times it occurs; the documents' count."""
    df, cf = [0] * len(vocab), [0] * len(vocab)
    for doc in documents:
        ids = [vocab.index[t] for t in doc if t in vocab.index]
        for i in ids:
            cf[i] += 1
        for i in set(ids):
            df[i] += 1
    return df, cf, len(documents)


def assert_lexicon_as_reference(lexicon: Lexicon, vocab: Vocab, documents: list[list[str]]) -> None:
    df, cf, n = reference_lexicon(vocab, documents)
    assert lexicon.tokens == vocab.tokens and lexicon.n_docs == n
    assert lexicon.df.dtype == lexicon.cf.dtype == np.int64
    assert lexicon.df.tolist() == df and lexicon.cf.tolist() == cf


def arrow_tokens(path: Path) -> pd.Series:
    """A table's token lists as an Arrow-backed column (``list<string>`` in Arrow's buffers)."""
    tokens = pd.read_parquet(path, columns=["tokens"], dtype_backend="pyarrow").tokens
    assert isinstance(tokens.dtype, pd.ArrowDtype)
    return tokens


def assert_loads_as_reference(processed: Path, lengths=((20, 40), (3, 5))) -> None:
    """``RunData.load`` of ``processed`` at each (max_len_q, max_len_a) equals the references: its id
    matrices (from the object columns it reads and from Arrow-backed ones), every split's rows, the categories."""
    vocab = Vocab.load(processed / "vocab.json")
    for max_len_q, max_len_a in lengths:
        data = RunData.load(processed, vocab, max_len_q, max_len_a)
        ds = data.dataset
        for got, texts, table, max_len in (
            (data.q_ids, ds.questions.tokens, "questions", max_len_q),
            (data.a_ids, ds.answers.tokens, "answers", max_len_a),
        ):
            expected = reference_ids(vocab, texts, max_len)
            assert got.dtype == np.int64 and got.shape == expected.shape and np.array_equal(got, expected), table
            from_arrow = vocab.encode_batch(arrow_tokens(processed / f"{table}.parquet"), max_len)
            assert from_arrow.shape == expected.shape and np.array_equal(from_arrow, expected), table
        q_row = {q: i for i, q in enumerate(ds.questions.qid)}
        a_row = {a: i for i, a in enumerate(ds.answers.aid)}
        for split, cands in ds.splits.items():
            _, qi, ai = data.pairs(split)
            assert qi.dtype == ai.dtype == np.int64
            assert qi.tolist() == [q_row[q] for q in cands.qid] and ai.tolist() == [a_row[a] for a in cands.aid]
        categories, q_category = reference_categories(data)
        assert data.categories == categories and np.array_equal(data.q_category, q_category)
    texts = reference_training_texts(data)
    assert training_texts(data.dataset) == texts
    assert_lexicon_as_reference(data.lexicon, vocab, texts)
