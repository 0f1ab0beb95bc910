"""LawQA (MTAS, AAAI 2019): ``lawQA.zip`` of Ange1o/MTAS-lawqa, extracted by fetch.

Files (found anywhere under the extracted folder): t_r_a_i_n.txt, t_e_s_t.txt and the
*_LONG.txt variants. Each line has 6 space-separated fields (the format the upstream loaders
ap-bilstm/data_helper.py read):
  label(1/0)  <name>:<question id>  question_words_joined_by_underscore  answer_words_joined_by_underscore  category_id  <unused>
Train lines are positive pairs and their sampled negatives (one answer from another category);
test lines are 100-candidate pools, grouped by the question id. Text is word-segmented already.

Options (besides preprocess.COMMON_OPTIONS):
  train_file: t_r_a_i_n.txt, test_file: t_e_s_t_LONG.txt -- the authors' pair: upstream execute.py
      trains on t_r_a_i_n.txt and tests on t_e_s_t_LONG.txt (its t_e_s_t.txt line is commented out);
      any other file of the release may be named (t_e_s_t.txt, t_r_a_i_n_LONG.txt).
  dev_questions: 0 — number of test questions (seeded, ``seed``: 13) moved to a ``dev`` split.
      The paper reports a 1,000-question dev set but the archive's files are train/test only
      (as far as the loaders show): this is our assumption, not the paper's.
Ids: train qid per distinct question text, test qid = "test-<question id>"; aid per answer text;
category = category_id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ansel.data.readers import common
from ansel.data.registry import source

FILES = ("t_r_a_i_n.txt", "t_r_a_i_n_LONG.txt", "t_e_s_t.txt", "t_e_s_t_LONG.txt")
OPTIONS = {
    "train_file": "the training file (default t_r_a_i_n.txt, as the authors)",
    "test_file": "the test file (default t_e_s_t_LONG.txt, as the authors)",
    "dev_questions": "test questions moved to a dev split (default 0)",
    "seed": "for dev_questions (13)",
}


def find(raw_dir: Path, name: str) -> Path:
    hits = sorted(raw_dir.rglob(name))
    if not hits:
        raise FileNotFoundError(f"{raw_dir}: no {name} (fetch lawqa first: lawQA.zip is extracted here)")
    return hits[0]


def read_file(path: Path) -> pd.DataFrame:
    """Rows (group, question, answer, label, category)."""
    rows = []
    for i, f in common.fields(path, " ", None):
        f = [x for x in f if x]  # tolerate doubled separators
        if len(f) != 6:
            raise common.RawFormatError(f"{path}: line {i}: expected 6 space-separated fields, got {len(f)}")
        name, _, group = f[1].partition(":")
        if not group.lstrip("-").isdigit() or not f[4].isdigit():
            raise common.RawFormatError(f"{path}: line {i}: bad question id {f[1]!r} or category {f[4]!r}")
        rows.append((group, f[2].replace("_", " "), f[3].replace("_", " "), common.label(f[0], path, i), f[4]))
    return pd.DataFrame(rows, columns=["group", "question", "answer", "label", "category"])


@source("lawqa")
class LawQA(common.Reader, tokenizer="whitespace"):
    categories = True
    options = OPTIONS

    def splits(self, options: dict[str, Any], fetch: dict[str, Any] | None) -> tuple[str, ...]:
        return ("train", "dev", "test") if options.get("dev_questions") else ("train", "test")

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        names = {
            key: options.get(key, default)
            for key, default in (("train_file", "t_r_a_i_n.txt"), ("test_file", "t_e_s_t_LONG.txt"))
        }
        for key, name in names.items():
            if name not in FILES:
                raise ValueError(
                    f"lawqa: read option {key}: {name!r} is not a file of the release ({', '.join(FILES)})"
                )
        train = read_file(find(raw_dir, names["train_file"])).assign(split="train")
        test = read_file(find(raw_dir, names["test_file"])).assign(split="test")
        test["qid"] = "test-" + test.group
        if n_dev := options.get("dev_questions", 0):
            groups = pd.unique(test.group)
            rng = np.random.default_rng(options.get("seed", 13))
            dev = set(groups[rng.permutation(len(groups))[:n_dev]])
            test.loc[test.group.isin(dev), "split"] = "dev"
            test["qid"] = test.split + "-" + test.group
        train["qid"] = "train-q" + pd.Series(pd.factorize(train.question)[0], index=train.index).astype(str)
        return pd.concat([train, test], ignore_index=True).drop(columns="group")
