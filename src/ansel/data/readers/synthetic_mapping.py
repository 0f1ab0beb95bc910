"""A planted signal (issue 51, E5): a corpus whose right answer is decided by a learnable mapping
from question words to answer words, with no word shared between a question and any candidate.

Each question holds one *cue* word among question fillers; each candidate one *target* word among
answer fillers. The cue -> target mapping is a random bijection; a question's positives (one or
more) hold its cue's target, its distractors the targets of other cues, drawn from the same
fillers. Questions and answers draw from disjoint vocabularies, so lexical overlap (BM25, word
counts) ranks at random, and word vectors trained on the text carry no pairing either: a model
from random vectors reaches MAP 1 only by learning the mapping from the training pairs. One that
does not locates a fault in its recipe or code, not in any pretrained vectors.

``fetch`` writes ``synthetic-mapping.tsv``, deterministic in its options; ``read`` parses it like
any raw dataset (the common read options apply).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ansel.data.readers import common
from ansel.data.readers.synthetic import generated_splits, new_words
from ansel.data.registry import source

DEFAULTS = {
    "seed": 13,
    "cues": 20,
    "fillers": 20,
    "question_fillers": 3,
    "answer_fillers": 5,
    "candidates": 10,
    "max_positives": 2,
    "questions": {"train": 400, "dev": 60, "test": 60},
}
FIELDS = ["split", "qid", "question", "aid", "answer", "label"]
FILE = "synthetic-mapping.tsv"
OPTIONS: dict[str, str] = {}  # only preprocess.COMMON_OPTIONS


def generate(options: dict[str, Any]) -> list[dict[str, Any]]:
    """All rows (one per question-candidate pair), deterministic in ``options``."""
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"synthetic_mapping options: unknown key(s) {sorted(unknown)}; known: {sorted(DEFAULTS)}")
    opt = {**DEFAULTS, **options}
    if opt["candidates"] <= opt["max_positives"] or opt["cues"] < 2:
        raise ValueError(
            f"synthetic_mapping options: candidates ({opt['candidates']}) must exceed max_positives "
            f"({opt['max_positives']}) and cues ({opt['cues']}) be >= 2: every question needs a distractor"
        )
    rng = np.random.default_rng(opt["seed"])
    taken: set[str] = set()
    cues, targets = new_words(rng, opt["cues"], "en", taken), new_words(rng, opt["cues"], "en", taken)
    q_fillers, a_fillers = new_words(rng, opt["fillers"], "en", taken), new_words(rng, opt["fillers"], "en", taken)
    target_of = rng.permutation(opt["cues"])  # cue i -> targets[target_of[i]]

    def sentence(key: str, fillers: list[str], n_fill: int) -> str:
        words = [key, *rng.choice(fillers, n_fill)]
        rng.shuffle(words)
        return " ".join(words)

    rows: list[dict[str, Any]] = []
    aid = 0
    for split, n_q in opt["questions"].items():
        for i in range(n_q):
            cue = int(rng.integers(opt["cues"]))
            question = sentence(cues[cue], q_fillers, opt["question_fillers"])
            n_pos = int(rng.integers(1, opt["max_positives"] + 1))
            others = [c for c in range(opt["cues"]) if c != cue]
            keys = [cue] * n_pos + list(rng.choice(others, opt["candidates"] - n_pos))
            for j in rng.permutation(len(keys)):
                answer = sentence(
                    targets[target_of[keys[j]]], a_fillers, int(rng.integers(2, opt["answer_fillers"] + 1))
                )
                rows.append(
                    {
                        "split": split,
                        "qid": f"{split}-q{i}",
                        "question": question,
                        "aid": f"a{aid}",
                        "answer": answer,
                        "label": int(keys[j] == cue),
                    }
                )
                aid += 1
    return rows


@source("synthetic_mapping")
class SyntheticMapping(common.Reader):
    options = OPTIONS

    def splits(self, options: dict[str, Any], fetch: dict[str, Any] | None) -> tuple[str, ...]:
        return generated_splits(fetch, DEFAULTS)

    def fetch(self, raw_dir: Path, mirror: Path | None, options: dict[str, Any]) -> None:
        raw_dir.mkdir(parents=True, exist_ok=True)
        common.write_tsv(raw_dir / FILE, FIELDS, generate(options))

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        path = raw_dir / FILE
        pairs = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, quoting=csv.QUOTE_NONE)
        missing = [c for c in FIELDS if c not in pairs.columns]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}")
        pairs["where"] = FILE + ":" + (pairs.index + 2).astype(str)  # the header is line 1
        return pairs
