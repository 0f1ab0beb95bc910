"""yahooQA: Tay et al.'s split (``env.pkl``) and an unofficial 3.5% subset for smoke tests.

``yahooqa``: env.pkl (vanzytay/YahooQA_Splits) is a Python 2 pickle of
``{"train"|"dev"|"test": {question text: [[answer text, label], ...]}}`` — each question with its
best answer (label 1) and 4 Lucene-retrieved negatives, sentences of 5–50 tokens. It is loaded
with ansel.data.unpickle.load_plain (plain data only; a pickle naming any class or function is
refused, never executed). The given negatives are mapped as they are (label-0 candidates).
``yahooqa_sample``: ``question#answer#label`` lines (8,800 lines: 8,799 pairs / 1,755 Q, one line an
exact repeat, dropped as the preprocess log says), no official split: questions are split at random (seeded).

Options (besides preprocess.COMMON_OPTIONS; GGSA's 5–50 filter is
``length_filter: {min_len: 5, max_len: 50}`` — already true of Tay's split):
  tokenizer: default "english"
  yahooqa_sample only: split: {dev: 0.1, test: 0.1} (fractions of questions), seed: 13
Ids: qid = "<split>-q<n>" per distinct question text, aid per distinct answer text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ansel.data.readers import common
from ansel.data.registry import source
from ansel.data.unpickle import load_plain

SAMPLE_OPTIONS = {"split": "fractions of questions, default {dev: 0.1, test: 0.1}", "seed": "13"}

SPLITS = ("train", "dev", "test")


def read_env(path: Path) -> pd.DataFrame:
    """Rows (split, question, answer, label) of env.pkl, checking its structure."""
    env = load_plain(common.require(path))
    if not isinstance(env, dict) or not set(SPLITS) <= set(env):
        raise common.RawFormatError(
            f"{path}: expected a dict with keys {SPLITS}, got {type(env).__name__} "
            f"{sorted(env) if isinstance(env, dict) else ''}"
        )
    rows = []
    for split in SPLITS:
        if not isinstance(env[split], dict):
            raise common.RawFormatError(f"{path}: [{split!r}] is a {type(env[split]).__name__}, not a dict")
        if not env[split]:  # else the split would be missing, and an option naming it blamed
            raise common.RawFormatError(f"{path}: [{split!r}] holds no questions")
        for question, cands in env[split].items():
            where = f"{path}: [{split!r}][{str(question)[:40]!r}]"
            if not isinstance(question, str) or not isinstance(cands, (list, tuple)):
                raise common.RawFormatError(f"{where}: expected question text -> list of [answer, label]")
            for j, cand in enumerate(cands):
                if not (isinstance(cand, (list, tuple)) and len(cand) == 2 and isinstance(cand[0], str)):
                    raise common.RawFormatError(f"{where}[{j}]: expected [answer text, label], got {cand!r:.80}")
                if cand[1] not in (0, 1) or isinstance(cand[1], float) and not cand[1].is_integer():
                    raise common.RawFormatError(f"{where}[{j}]: label {cand[1]!r} is not 0/1")
                rows.append((split, question, cand[0], int(cand[1])))
    return pd.DataFrame(rows, columns=["split", "question", "answer", "label"])


def read_sample(path: Path) -> pd.DataFrame:
    """Rows (question, answer, label) of the ``question#answer#label`` subset."""
    rows = [(q, a, common.label(lab, path, i)) for i, (q, a, lab) in common.fields(path, "#", 3)]
    return pd.DataFrame(rows, columns=["question", "answer", "label"])


def split_questions(pairs: pd.DataFrame, fractions: dict[str, float], seed: int) -> pd.Series:
    """A split name per row, assigning whole questions at random (seeded); the rest is train."""
    questions = pd.unique(pairs.question)
    names = common.assign_splits(len(questions), fractions, np.random.default_rng(seed))
    return pairs.question.map(dict(zip(questions, names)))


@source("yahooqa")
class YahooQA(common.Reader):
    produces = SPLITS

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        return read_env(raw_dir / "env.pkl")


@source("yahooqa_sample")
class YahooQASample(common.Reader):
    options = SAMPLE_OPTIONS
    fractions = "split"

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        pairs = read_sample(raw_dir / "YahooCQA-subset.data.txt")
        pairs["split"] = split_questions(pairs, options.get("split", common.FRACTIONS), options.get("seed", 13))
        return pairs
