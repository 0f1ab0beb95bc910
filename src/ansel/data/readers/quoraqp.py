"""Quora Question Pairs: BiMPM's partition (``quoraqp``) and the raw Quora release (``quoraqp_raw``).

Each pair is one candidate row: question = question 1, answer = question 2, label = is_duplicate
(aMV-LSTM classifies pairs; ranking metrics are not meaningful here).

``quoraqp``: {train,dev,test}.tsv, no header: ``is_duplicate<TAB>q1 tokens<TAB>q2 tokens<TAB>pair_ID``
  (tokenized with CoreNLP). Ids: qid = "<split>-q<pair_ID>", aid = "<split>-a<pair_ID>" (the file's split).
  Options: splits (files read; default [train, dev, test]); tokenizer: default "whitespace";
  resplit: {dev: 0.1, test: 0.1} pools the pairs of those files and splits them again at random,
  by pair (the rest is train), with ``seed`` (default 13) — the stand-in for aMV-LSTM's 80/10/10
  split of the raw release when only BiMPM's dev.tsv and test.tsv (20,000 pairs) are at hand.
``quoraqp_raw``: quora_duplicate_questions.tsv (header ``id qid1 qid2 question1 question2
  is_duplicate``, quoted fields with embedded newlines; 404,290 pairs), split at random into
  train/dev/test as aMV-LSTM describes (80/10/10).
  Options: split: {dev: 0.1, test: 0.1} (fractions of pairs), seed: 13; tokenizer: default "english".
  Ids: qid = "q<qid1>" (questions table), aid = "q<qid2>" (answers table).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ansel.data.canonical import Dataset
from ansel.data.readers import common
from ansel.data.registry import source

BIMPM_OPTIONS = {
    "splits": "subset of train, dev, test (default all)",
    "resplit": "fractions of the pooled pairs, e.g. {dev: 0.1, test: 0.1}; the rest is train",
    "seed": "of resplit (default 13)",
}
BIMPM_SPLITS = ("train", "dev", "test")
RAW_OPTIONS = {"split": "fractions of pairs, default {dev: 0.1, test: 0.1}", "seed": "13"}

RAW_FILE = "quora_duplicate_questions.tsv"
RAW_COLUMNS = ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"]


def read_bimpm(path: Path, split: str) -> pd.DataFrame:
    rows = []
    lines: dict[str, int] = {}
    for i, (lab, q1, q2, pid) in common.fields(path, "\t", 4):
        label = common.label(lab, path, i)  # first: a header line is named by its label
        if not pid.isdigit():  # the pair's ids are made of it
            raise common.RawFormatError(f"{path}: line {i}: pair_ID {pid!r} is not an integer")
        common.once(pid, i, lines, path, "pair_ID ")
        rows.append((f"{split}-q{pid}", q1, f"{split}-a{pid}", q2, label))
    return pd.DataFrame(rows, columns=["qid", "question", "aid", "answer", "label"]).assign(split=split)


def read_raw(path: Path) -> pd.DataFrame:
    reader = csv.reader(io.StringIO(common.read_text(path), newline=""), delimiter="\t")
    header = next(reader, [])
    if header != RAW_COLUMNS:
        raise common.RawFormatError(f"{path}: line 1: header {header} is not {RAW_COLUMNS}")
    rows = []
    try:
        for rec in reader:
            if len(rec) != len(RAW_COLUMNS):
                raise common.RawFormatError(f"{path}: line {reader.line_num}: expected 6 fields, got {len(rec)}")
            rows.append(("q" + rec[1], rec[3], "q" + rec[2], rec[4], common.label(rec[5], path, reader.line_num)))
    except csv.Error as e:
        raise common.RawFormatError(f"{path}: line {reader.line_num}: {e}") from e
    if not rows:
        raise common.RawFormatError(f"{path}: no data rows (only the header line)")
    return pd.DataFrame(rows, columns=["qid", "question", "aid", "answer", "label"])


@source("quoraqp")
class QuoraQP(common.Reader, tokenizer="whitespace"):
    options = BIMPM_OPTIONS
    fractions = "resplit"

    def splits(self, options: dict[str, Any], fetch: dict[str, Any] | None) -> tuple[str, ...]:
        files = common.file_splits(options, BIMPM_SPLITS)  # read.splits checked with or without resplit
        if "resplit" in options:
            return super().splits(options, fetch)
        if "seed" in options:
            raise KeyError("quoraqp: read option seed is only used by resplit, which is not set")
        return files

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        pairs = pd.concat(
            [read_bimpm(common.require(raw_dir / f"{s}.tsv"), s) for s in common.file_splits(options, BIMPM_SPLITS)],
            ignore_index=True,
        )
        if "resplit" in options:  # by pair, like aMV-LSTM's (MatchZoo's) split of the raw release
            rng = np.random.default_rng(options.get("seed", 13))
            pairs["split"] = common.assign_splits(len(pairs), options["resplit"], rng)
        return pairs

    def tables(self, raw_dir: Path, options: dict[str, Any]) -> Dataset:
        ds = super().tables(raw_dir, options)
        if "resplit" in options:  # train, then the splits in the option's order (not the order they first occur)
            ds.splits = {s: ds.splits[s] for s in ["train", *options["resplit"]] if s in ds.splits}
        return ds


@source("quoraqp_raw")
class QuoraQPRaw(common.Reader):
    options = RAW_OPTIONS
    fractions = "split"
    ids_global = True  # a question of the release is in pairs of several splits (aMV-LSTM splits by pair)

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        pairs = read_raw(raw_dir / RAW_FILE)
        rng = np.random.default_rng(options.get("seed", 13))
        pairs["split"] = common.assign_splits(len(pairs), options.get("split", common.FRACTIONS), rng)
        return pairs
