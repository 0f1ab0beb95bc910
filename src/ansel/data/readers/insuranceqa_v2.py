"""InsuranceQA V2 as the PyPI package insuranceqa-data 1.2 ships it: gzipped JSON, read as shipped.

  {train,valid,test}.json.gz   {qid: {"zh", "en", "domain", "answers": [aid], "negatives": [200 aids]}}
  answers.json.gz              {aid: {"zh", "en"}}
Splits train / dev (the package's ``valid``) / test: 12,889 / 2,000 / 2,000 questions with 1-15
positives each (mostly 1-5); 27,413 answers. English text is IBM's V2 (questions in Title Case,
words separated by two spaces), Chinese its Google translation; runs of whitespace are collapsed.

Candidates: every question's positives (label 1) and its 200 negatives (label 0; retrieved for
the question, so related but wrong), deduplicated; an answer listed both ways stays a positive
(none is in 1.2). Train keeps its negatives, unlike V1 whose train file has positives only, so
that each ``train.negatives.strategy`` does what it says: ``pool`` draws the question's own
retrieved negatives (without them it would fall back to random answers), while ``random`` and
``sampled_max`` draw from every answer of the train table, which the negatives make nearly the
whole answer set (V1's protocol: negatives sampled from all answers). The price: the training
texts (vocabulary, corpus vectors) include the text of almost every answer, dev/test correct
answers among them (as train negatives; their labels stay unseen).

Options (besides preprocess.COMMON_OPTIONS):
  language: en (default) | zh — the text read
  tokenizer: default "english" (en) / "chinese" (zh: jieba)
Ids: qid = "<split>-<package qid>" (each file numbers its questions from 0), aid = the answer id;
category = the question's ``domain`` (e.g. life-insurance).
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import pandas as pd

from ansel.data.readers import common
from ansel.data.registry import source

OPTIONS = {"language": "en (default) | zh"}

FILES = {"train": "train.json.gz", "dev": "valid.json.gz", "test": "test.json.gz"}
ANSWERS = "answers.json.gz"
TOKENIZERS = {"en": "english", "zh": "chinese"}


def load(path: Path) -> dict[str, Any]:
    """The file's top-level JSON object."""
    try:
        with gzip.open(common.require(path), "rt", encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise common.RawFormatError(f"{path}: line {e.lineno}: not valid JSON: {e.msg}") from e
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as e:  # BadGzipFile is an OSError
        raise common.RawFormatError(f"{path}: not a readable gzipped UTF-8 file: {e}") from e
    if not isinstance(data, dict):
        raise common.RawFormatError(f"{path}: top level is a JSON {type(data).__name__}, not an object")
    return data


def _field(record: Any, key: str, kind: type, path: Path, where: str) -> Any:
    if not isinstance(record, dict) or key not in record:
        raise common.RawFormatError(f"{path}: {where}: missing key {key!r}")
    value = record[key]
    if not isinstance(value, kind) or kind is list and not all(isinstance(v, str) for v in value):
        raise common.RawFormatError(f"{path}: {where}: {key!r} is not a {'list of ids' if kind is list else 'string'}")
    return value


def _text(value: str) -> str:
    return " ".join(value.split())


def read_answers(path: Path, language: str) -> dict[str, str]:
    return {aid: _text(_field(rec, language, str, path, f"answer {aid}")) for aid, rec in load(path).items()}


def read_split(path: Path, split: str, language: str, answers: dict[str, str]) -> pd.DataFrame:
    """Rows (qid, question, category, aid, answer, label): positives then negatives of each question.
    A negative that is also a positive is left out; other duplicates are left to from_pairs (kept once)."""
    rows = []
    for key, rec in load(path).items():
        qid, where = f"{split}-{key}", f"question {key}"
        text = _text(_field(rec, language, str, path, where))
        domain = _field(rec, "domain", str, path, where)
        positives = _field(rec, "answers", list, path, where)
        if not positives:
            raise common.RawFormatError(f"{path}: {where}: no answer ids in 'answers'")
        # the negatives are what a retrieval returned for the question: a positive among them stays one
        kept = set(positives)
        negatives = [aid for aid in _field(rec, "negatives", list, path, where) if aid not in kept]
        labelled = [(aid, 1) for aid in positives] + [(aid, 0) for aid in negatives]
        for aid, label in labelled:
            if aid not in answers:
                raise common.RawFormatError(f"{path}: {where}: answer id {aid} not in {path.with_name(ANSWERS)}")
            rows.append((qid, text, domain, aid, answers[aid], label))
    # object columns hold references to the ~27k answer texts; pandas' default string dtype would
    # copy a text into every one of the ~3.3M rows (preprocessing then peaks near 6 GB instead of 1.6 GB)
    return pd.DataFrame(rows, columns=["qid", "question", "category", "aid", "answer", "label"], dtype=object)


@source("insuranceqa_v2")
class InsuranceQAV2(common.Reader):
    categories = True
    options = OPTIONS
    produces = tuple(FILES)

    def defaults(self, options: dict[str, Any]) -> dict[str, Any]:
        """The tokenizer of the language read."""
        language = options.get("language", "en")
        if language not in TOKENIZERS:
            raise ValueError(f"insuranceqa_v2: language {language!r} is not one of {list(TOKENIZERS)}")
        return {"tokenizer": TOKENIZERS[language]}

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        language = options.get("language", "en")
        answers = read_answers(raw_dir / ANSWERS, language)
        return pd.concat(
            [read_split(raw_dir / f, s, language, answers).assign(split=s) for s, f in FILES.items()], ignore_index=True
        )
