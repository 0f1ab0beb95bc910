"""TREC-QA (Wang et al. 2007; Yao et al. 2013 release): TRAIN / DEV / TEST pseudo-XML and TRAIN-ALL.

Pseudo-XML (not escaped, so read line by line): ``<QApairs id='…'>`` blocks holding one
``<question>`` and ``<positive>`` / ``<negative>`` elements; the first line of each element is its
tab-separated tokens (later lines are POS/dependency/NER annotations, ignored).
TRAIN-ALL is read from the upstream ``TRAIN-ALL.xml`` when fetched, else from the mirror's
verified reconstruction (JSON lines: {"qid", "question", "candidates": [{"sentence", "label"}]}).

Options (besides preprocess.COMMON_OPTIONS):
  train: "TRAIN-ALL" (default; 1,229 Q / 53,417 pairs) or "TRAIN" (94 Q / 4,718 pairs)
  tokenizer: default "whitespace" (the corpus is tokenized; tokens are lower-cased)
The "clean" variant (AP-CNN: 1,162 / 65 / 68 questions) is
  drop_questions: {no_positive: true, all_positive: true, splits: [train, dev, test]}.
Ids: qid = "<split>-<QApairs id>", aid per distinct sentence text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from ansel.data.readers import common
from ansel.data.registry import source

OPTIONS = {"train": "TRAIN-ALL (default) or TRAIN"}

_OPEN_PAIRS = re.compile(r"^<QApairs id='([^']*)'>$")
_ELEMENTS = {"question": None, "positive": 1, "negative": 0}
TRAIN_FILES = {"TRAIN": ["TRAIN.xml"], "TRAIN-ALL": ["TRAIN-ALL.xml", "TRAIN-ALL.reconstructed.jsonl"]}


def read_xml(path: Path) -> pd.DataFrame:
    """Rows (qid, question, answer, label) of a pseudo-XML file, in file order.

    A block without candidates (DEV has 1, TEST 5, TRAIN 1) gives one row with answer and label
    None, so the published question counts (82 / 100 / 94) can be checked; ``read`` drops it.
    """
    rows: list[tuple[str, str, str | None, int | None]] = []
    n_rows_at_open = 0
    qid = question = element = None
    first: str | None = None
    start = 0
    for i, line in common.lines(path):
        line = line.strip()
        if element is not None:  # inside <question>/<positive>/<negative>
            if line == f"</{element}>":
                if first is None:
                    raise common.RawFormatError(f"{path}: line {i}: empty <{element}> element")
                if element == "question":
                    question = first
                elif question is None:
                    raise common.RawFormatError(f"{path}: line {i}: <{element}> before the <question>")
                else:
                    rows.append((qid, question, first, _ELEMENTS[element]))
                element, first = None, None
            elif line.startswith("<") and line.endswith(">") and line.strip("</>") in _ELEMENTS:
                raise common.RawFormatError(f"{path}: line {i}: {line} inside <{element}> (opened line {start})")
            elif first is None:
                first = " ".join(line.split("\t"))
            continue
        if m := _OPEN_PAIRS.match(line):
            if qid is not None:
                raise common.RawFormatError(f"{path}: line {i}: <QApairs> inside QApairs {qid!r}")
            qid, question, start, n_rows_at_open = m.group(1), None, i, len(rows)
        elif line == "</QApairs>":
            if qid is None or question is None:
                raise common.RawFormatError(f"{path}: line {i}: </QApairs> without an open block and question")
            if len(rows) == n_rows_at_open:
                rows.append((qid, question, None, None))
            qid = None
        elif line.startswith("<") and line.strip("<>") in _ELEMENTS and qid is not None:
            element, start = line.strip("<>"), i
        elif line:
            raise common.RawFormatError(f"{path}: line {i}: unexpected line {line[:60]!r}")
    if element is not None or qid is not None:
        what = f"<{element}> opened" if element else f"QApairs {qid!r} opened"
        raise common.RawFormatError(f"{path}: truncated: {what} at line {start} is never closed")
    return pd.DataFrame(rows, columns=["qid", "question", "answer", "label"])


def read_jsonl(path: Path) -> pd.DataFrame:
    rows = []
    for i, line in common.lines(path):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            cands = [(c["sentence"], c["label"]) for c in rec["candidates"]]
            qid, question = str(rec["qid"]), rec["question"]
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise common.RawFormatError(f"{path}: line {i}: not a TRAIN-ALL record: {type(e).__name__}: {e}") from e
        for sentence, lab in cands:
            rows.append((qid, question, sentence, common.label(str(lab), path, i)))
    return pd.DataFrame(rows, columns=["qid", "question", "answer", "label"])


def read_train(raw_dir: Path, which: str) -> pd.DataFrame:
    if which not in TRAIN_FILES:
        raise KeyError(f"trecqa: option train must be one of {list(TRAIN_FILES)}, got {which!r}")
    for name in TRAIN_FILES[which]:
        if (raw_dir / name).exists():
            return read_xml(raw_dir / name) if name.endswith(".xml") else read_jsonl(raw_dir / name)
    raise FileNotFoundError(f"{raw_dir}: none of {TRAIN_FILES[which]} present (fetch trecqa first)")


@source("trecqa")
class TrecQA(common.Reader, tokenizer="whitespace"):
    options = OPTIONS
    produces = ("train", "dev", "test")

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        parts = {
            "train": read_train(raw_dir, options.get("train", "TRAIN-ALL")),
            "dev": read_xml(common.require(raw_dir / "DEV.xml")),
            "test": read_xml(common.require(raw_dir / "TEST.xml")),
        }
        pairs = pd.concat([p.assign(split=s, qid=s + "-" + p.qid) for s, p in parts.items()], ignore_index=True)
        return pairs[pairs.answer.notna()]  # questions without candidates cannot be ranked
