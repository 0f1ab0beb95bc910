"""WikiQA (Yang et al., 2015): WikiQA-{train,dev,test}.tsv, UTF-8 with CRLF line ends.

Columns: QuestionID, Question, DocumentID, DocumentTitle, SentenceID, Sentence, Label.
All pairs are kept by default (20,360 / 2,733 / 6,165). The evaluation protocols differ by
``drop_questions`` (see preprocess.COMMON_OPTIONS):
  AP-CNN ("questions that have correct answers"): {no_positive: true, splits: [dev, test]}
  filtered .ref (standard answer-sentence selection): {no_positive: true, all_positive: true, splits: [dev, test]}
    (= the questions and candidates of WikiQA-{dev,test}-filtered.ref: 122 / 237 questions)
  MatchZoo 1.x (aMV-LSTM; params.yaml wikiqa_mz): the filtered .ref questions in dev/test, and in train
    only questions with both labels (its PairGenerator uses no others): the same flags on [train, dev, test].
  Nothing dropped: the release as it is (wikiqa_all).
Ids: qid = QuestionID (e.g. Q1), aid = SentenceID (e.g. D1-0; a sentence shared by questions is one answer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ansel.data.readers import common
from ansel.data.registry import source

OPTIONS: dict[str, str] = {}  # only preprocess.COMMON_OPTIONS

COLUMNS = ["QuestionID", "Question", "DocumentID", "DocumentTitle", "SentenceID", "Sentence", "Label"]
SPLITS = ("train", "dev", "test")


def read_split(path: Path) -> pd.DataFrame:
    rows = []
    it = common.fields(path, "\t", len(COLUMNS))
    _, header = next(it, (1, []))
    if header != COLUMNS:
        raise common.RawFormatError(f"{path}: line 1: header {header} is not {COLUMNS}")
    for i, f in it:
        rows.append((f[0], f[1], f[4], f[5], common.label(f[6], path, i), f"{path.name}:{i}"))
    if not rows:  # else its split would be missing, and an option naming it blamed
        raise common.RawFormatError(f"{path}: no data rows (only the header line)")
    return pd.DataFrame(rows, columns=["qid", "question", "aid", "answer", "label", "where"])


@source("wikiqa")
class WikiQA(common.Reader):
    options = OPTIONS
    produces = SPLITS

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        return pd.concat([read_split(raw_dir / f"WikiQA-{s}.tsv").assign(split=s) for s in SPLITS], ignore_index=True)
