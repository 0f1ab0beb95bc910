"""A synthetic answer-selection corpus the project generates itself (the `smoke` preset's data).

Each question names a category and two key entities. Its true answers (one or more) mention
both keys; distractors share surface words with it — its category's topic words, the common
fillers and one of the two keys — so lexical overlap alone does not find the answer, but a
model that learns to match both keys does. Random P@1 is about 1/#candidates.
The Chinese variant writes the same structure with Chinese words and no spaces, so jieba
segmentation and the category labels (multi-task) have real work to do.

``fetch`` generates raw TSV files deterministically from the seed; ``read`` parses them like
any other raw dataset.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ansel.data.canonical import Dataset
from ansel.data.registry import source
from ansel.data.tokenize import get_tokenizer

DEFAULTS = {
    "language": "en", "seed": 13, "categories": 4, "entities": 120, "topic_words": 12,
    "candidates": 10, "max_positives": 2,
    "questions": {"train": 600, "dev": 80, "test": 80},
}
FIELDS = ["split", "qid", "question", "category", "aid", "answer", "label"]
_EN_ONSETS = "b c d f g h j k l m n p r s t v w z br cr dr fl gr pl st tr".split()
_EN_VOWELS = "a e i o u ai ea oo".split()
# Common characters; two-character words drawn from them make text jieba must segment.
_ZH_CHARS = ("山水火木金土日月风云雨雪花草树林江河湖海天地人心手口目耳米面茶酒"
             "书画琴棋车船门窗桥路城村田园石玉光影声色春夏秋冬东西南北")
_ZH_CATEGORIES = ["内科", "外科", "儿科", "妇科", "民法", "刑法", "劳动法", "婚姻法"]


def _words(rng: np.random.Generator, n: int, language: str, taken: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        if language == "zh":
            w = "".join(rng.choice(list(_ZH_CHARS), 2))
        else:
            w = "".join(rng.choice(_EN_ONSETS) + rng.choice(_EN_VOWELS) for _ in range(2))
        if w not in taken:
            taken.add(w)
            out.append(w)
    return out


def generate(options: dict[str, Any]) -> list[dict[str, Any]]:
    """All rows (one per question-candidate pair) of the corpus, deterministic in ``options``."""
    opt = {**DEFAULTS, **options}
    rng = np.random.default_rng(opt["seed"])
    lang = opt["language"]
    taken: set[str] = set()
    entities = _words(rng, opt["entities"], lang, taken)
    topics = [_words(rng, opt["topic_words"], lang, taken) for _ in range(opt["categories"])]
    fillers = _words(rng, 20, lang, taken)
    cat_names = (_ZH_CATEGORIES if lang == "zh" else [f"topic{c}" for c in range(opt["categories"])])
    sep = "" if lang == "zh" else " "

    def sentence(keys: list[str], cat: int, n_topic: int, n_fill: int) -> str:
        words = list(keys) + list(rng.choice(topics[cat], n_topic)) + list(rng.choice(fillers, n_fill))
        rng.shuffle(words)
        return sep.join(words)

    rows: list[dict[str, Any]] = []
    aid = 0
    for split, n_q in opt["questions"].items():
        for i in range(n_q):
            qid = f"{split}-q{i}"
            cat = int(rng.integers(opt["categories"]))
            e1, e2 = rng.choice(entities, 2, replace=False)
            question = sentence([e1, e2], cat, 2, 2)
            n_pos = int(rng.integers(1, opt["max_positives"] + 1))
            pool = [(sentence([e1, e2], cat, 3, int(rng.integers(3, 8))), 1) for _ in range(n_pos)]
            while len(pool) < opt["candidates"]:
                other = rng.choice([e for e in entities if e not in (e1, e2)])
                shared = e1 if rng.random() < 0.5 else e2
                # Mostly same-category distractors; a few from elsewhere, as real pools have.
                dcat = cat if rng.random() < 0.8 else int(rng.integers(opt["categories"]))
                pool.append((sentence([shared, other], dcat, 3, int(rng.integers(3, 8))), 0))
            for text, label in (pool[j] for j in rng.permutation(len(pool))):
                rows.append({"split": split, "qid": qid, "question": question,
                             "category": cat_names[cat], "aid": f"a{aid}", "answer": text, "label": label})
                aid += 1
    return rows


@source("synthetic")
class Synthetic:
    filename = "synthetic.tsv"

    def fetch(self, raw_dir: Path, mirror: Path | None, options: dict[str, Any]) -> None:
        raw_dir.mkdir(parents=True, exist_ok=True)
        tmp = raw_dir / (self.filename + ".tmp")
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, FIELDS, delimiter="\t", lineterminator="\n")
            writer.writeheader()
            writer.writerows(generate(options))
        tmp.replace(raw_dir / self.filename)

    def read(self, raw_dir: Path, options: dict[str, Any]) -> Dataset:
        path = raw_dir / self.filename
        df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, quoting=csv.QUOTE_NONE)
        missing = [c for c in FIELDS if c not in df.columns]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}")
        tokenize = get_tokenizer(options.get("tokenizer", "english"))
        questions = df.drop_duplicates("qid")[["qid", "question", "category"]].rename(columns={"question": "text"})
        answers = df.drop_duplicates("aid")[["aid", "answer"]].rename(columns={"answer": "text"})
        questions["tokens"] = questions.text.map(tokenize)
        answers["tokens"] = answers.text.map(tokenize)
        df["label"] = df.label.astype(int)
        splits = {s: g[["qid", "aid", "label"]].reset_index(drop=True) for s, g in df.groupby("split", sort=False)}
        return Dataset(options.get("name", "synthetic"), questions.reset_index(drop=True),
                       answers.reset_index(drop=True), splits)
