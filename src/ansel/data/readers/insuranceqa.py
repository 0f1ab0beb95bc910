"""InsuranceQA V1 (Feng et al., 2015), token-index encoded files of shuzi/insuranceQA ``V1/``.

  vocabulary                          idx_N<TAB>word
  answers.label.token_idx             <answer id><TAB><idx_ tokens>
  question.train.token_idx.label      <idx_ tokens><TAB><gold answer ids>
  question.{dev,test1,test2}.label.token_idx.pool
                                      <gold answer ids><TAB><idx_ tokens><TAB><500 candidate answer ids>
Train gives positives only (12,887 Q; the trainer samples negatives from the whole answer set,
as the papers do); dev/test1/test2 give 500-candidate pools (a gold id missing from its pool is
added, so every pool holds its positives).

Options (besides preprocess.COMMON_OPTIONS):
  splits: which of train, dev, test1, test2 to read (default all four)
  tokenizer: default "whitespace" (decoded text is already tokenized)
Ids: qid = "<split>-<line number>", aid = the answer id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ansel.data.readers import common
from ansel.data.registry import source

OPTIONS = {"splits": "subset of train, dev, test1, test2 (default all)"}

FILES = {
    "train": "question.train.token_idx.label",
    "dev": "question.dev.label.token_idx.pool",
    "test1": "question.test1.label.token_idx.pool",
    "test2": "question.test2.label.token_idx.pool",
}


def read_vocabulary(path: Path) -> dict[str, str]:
    vocab: dict[str, str] = {}
    lines: dict[str, int] = {}
    for i, (idx, word) in common.fields(path, "\t", 2):
        if not idx.startswith("idx_"):
            raise common.RawFormatError(f"{path}: line {i}: {idx!r} is not an idx_N token")
        common.once(idx, i, lines, path)
        vocab[idx] = word
    return vocab


def decode(tokens: str, vocab: dict[str, str], path: Path, line: int) -> str:
    try:
        return " ".join(vocab[t] for t in tokens.split())
    except KeyError as e:
        raise common.RawFormatError(f"{path}: line {line}: token {e.args[0]!r} not in the vocabulary") from e


def _ids(field: str, path: Path, line: int) -> list[str]:
    ids = field.split()
    if not ids or not all(i.isdigit() for i in ids):
        raise common.RawFormatError(f"{path}: line {line}: {field[:60]!r} is not a list of answer ids")
    return ids


def read_answers(path: Path, vocab: dict[str, str]) -> pd.DataFrame:
    rows = []
    lines: dict[str, int] = {}
    for i, (aid, toks) in common.fields(path, "\t", 2):
        if not aid.isdigit():  # the pools name answers by integer ids
            raise common.RawFormatError(f"{path}: line {i}: answer id {aid!r} is not an integer")
        common.once(aid, i, lines, path)
        rows.append((aid, decode(toks, vocab, path, i)))
    return pd.DataFrame(rows, columns=["aid", "answer"])


def read_train(path: Path, vocab: dict[str, str]) -> pd.DataFrame:
    """Rows (qid, question, aid, label=1): one per gold answer link."""
    rows = []
    for i, (q, gold) in common.fields(path, "\t", 2):
        text = decode(q, vocab, path, i)
        rows += [(f"train-{i}", text, aid, 1) for aid in _ids(gold, path, i)]
    return pd.DataFrame(rows, columns=["qid", "question", "aid", "label"])


def read_pool(path: Path, vocab: dict[str, str], split: str) -> pd.DataFrame:
    """Rows (qid, question, aid, label) over each question's candidate pool."""
    rows = []
    for i, (gold, q, pool) in common.fields(path, "\t", 3):
        text, gold_ids = decode(q, vocab, path, i), _ids(gold, path, i)
        pool_ids = _ids(pool, path, i)
        cands = pool_ids + [g for g in gold_ids if g not in set(pool_ids)]
        gold_set = set(gold_ids)
        rows += [(f"{split}-{i}", text, aid, int(aid in gold_set)) for aid in cands]
    return pd.DataFrame(rows, columns=["qid", "question", "aid", "label"])


@source("insuranceqa_v1")
class InsuranceQAV1(common.Reader, tokenizer="whitespace"):
    options = OPTIONS

    def splits(self, options: dict[str, Any], fetch: dict[str, Any] | None) -> tuple[str, ...]:
        return common.file_splits(options, FILES)

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        vocab = read_vocabulary(common.require(raw_dir / "vocabulary"))
        answers = read_answers(common.require(raw_dir / "answers.label.token_idx"), vocab)
        parts = []
        for split in common.file_splits(options, FILES):
            path = common.require(raw_dir / FILES[split])
            part = read_train(path, vocab) if split == "train" else read_pool(path, vocab, split)
            parts.append(part.assign(split=split))
        pairs = pd.concat(parts, ignore_index=True)
        text = answers.set_index("aid").answer
        unknown = ~pairs.aid.isin(text.index)
        if unknown.any():
            row = pairs[unknown].iloc[0]
            raise common.RawFormatError(
                f"{raw_dir / FILES[row.split]}: question {row.qid}: answer id {row.aid} "
                f"not in {raw_dir / 'answers.label.token_idx'}"
            )
        pairs["answer"] = pairs.aid.map(text)
        return pairs
