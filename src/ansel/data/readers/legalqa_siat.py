"""LegalQA (SIAT-NLP) manual dev/test: Chinese legal answer selection with candidate pools.

UTF-8 CSV, CRLF, header ``question: subject,question: body,answer,label`` (dev 93 Q / 816
pairs, test 136 Q / 1,169 pairs). Question text = subject + " " + body; segmented with jieba.
No category column.

Options (besides preprocess.COMMON_OPTIONS):
  splits: {dev: dev, test: test} — which split each file becomes (e.g. {dev: train, test: test}
          to train on the dev file in a smoke run)
  tokenizer: default "chinese"
Ids: qid = "<split>-q<n>" per distinct question text, aid per answer text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ansel.data.readers import common
from ansel.data.registry import source

OPTIONS = {"splits": "file -> split name, default {dev: dev, test: test}"}

COLUMNS = ["question: subject", "question: body", "answer", "label"]
FILES = {"dev": "LegalQA-manual-dev.csv", "test": "LegalQA-manual-test.csv"}
DEFAULT_MAPPING = {"dev": "dev", "test": "test"}


def read_csv(path: Path) -> pd.DataFrame:
    rows = [
        (r[COLUMNS[0]] + " " + r[COLUMNS[1]], r["answer"], common.label(r["label"], path, i))
        for i, r in common.csv_records(path, COLUMNS)
    ]
    return pd.DataFrame(rows, columns=["question", "answer", "label"])


@source("legalqa_siat")
class LegalQASiat(common.Reader, tokenizer="chinese"):
    options = OPTIONS

    def splits(self, options: dict[str, Any], fetch: dict[str, Any] | None) -> tuple[str, ...]:
        mapping = options.get("splits", DEFAULT_MAPPING)
        return tuple(dict.fromkeys(mapping.values())) if isinstance(mapping, dict) else ()

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        mapping = options.get("splits", DEFAULT_MAPPING)
        return pd.concat([read_csv(raw_dir / FILES[f]).assign(split=s) for f, s in mapping.items()], ignore_index=True)
