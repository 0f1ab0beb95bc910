"""Chinese medical dialogue sample (Toyhom, 内科 5000–6000): the Chinese stand-in for LawQA.

GB18030 CSV with header ``department,title,ask,answer`` (7,644 rows; 378 exact duplicate rows
are dropped -> 7,266 questions, one answer each; 11 department labels = category).
Question text = title + " " + ask; segmented with jieba. There is no official split and no
negatives: questions are split at random per department (seeded, stratified), then the LawQA
protocol builds candidates — train: each positive plus one random answer of another category;
dev/test: 100-candidate pools (positives + random answers).

Options (besides preprocess.COMMON_OPTIONS):
  split: {dev: 0.1, test: 0.1} fractions of each department's questions; seed: 13
  negatives: default {method: other_category, splits: [train], seed: 13} (null: positives only)
  pools: default {size: 100, splits: [dev, test], seed: 13} (null: positives only)
  tokenizer: default "chinese"
Ids: qid = "<split>-q<n>", aid per distinct answer text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ansel.data.preprocess import drop_repeated
from ansel.data.readers import common
from ansel.data.registry import source

OPTIONS = {"split": "fractions of questions per department, default {dev: 0.1, test: 0.1}", "seed": "13"}

FILE = "neike_sample_5000-6000.gb18030.csv"
COLUMNS = ["department", "title", "ask", "answer"]


def read_csv(path: Path) -> pd.DataFrame:
    rows = []
    for i, rec in common.csv_records(path, COLUMNS, encoding="gb18030"):
        if not all(rec[c].strip() for c in COLUMNS):
            raise common.RawFormatError(f"{path}: line {i}: empty field in {rec}")
        rows.append(tuple(rec[c] for c in COLUMNS))
    return drop_repeated(pd.DataFrame(rows, columns=COLUMNS), None, str(path), "row(s)").reset_index(drop=True)


def stratified_split(categories: pd.Series, fractions: dict[str, float], seed: int) -> pd.Series:
    rng = np.random.default_rng(seed)
    out = pd.Series("train", index=categories.index, dtype=object)
    for _, idx in categories.groupby(categories).groups.items():
        out.loc[idx] = common.assign_splits(len(idx), fractions, rng)
    return out


@source("cmeddialog")
class CMedDialog(common.Reader, tokenizer="chinese"):
    categories = True
    options = OPTIONS
    fractions = "split"

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        df = read_csv(raw_dir / FILE)
        fractions = options.get("split", common.FRACTIONS)
        return pd.DataFrame(
            {
                "split": stratified_split(df.department, fractions, options.get("seed", 13)),
                "question": df.title + " " + df.ask,
                "answer": df.answer,
                "label": 1,
                "category": df.department,
            }
        )

    def defaults(self, options: dict[str, Any]) -> dict[str, Any]:
        """The LawQA protocol's candidates, seeded like the split."""
        seed = options.get("seed", 13)
        return {
            "negatives": {"method": "other_category", "splits": ["train"], "seed": seed},
            "pools": {"size": 100, "splits": ["dev", "test"], "seed": seed},
        }
