"""A synthetic answer-selection corpus the project generates itself (the `smoke` preset's data).

Each question names a category and two key entities. Its true answers (one or more) mention
both keys; distractors share surface words with it — its category's topic words, the common
fillers and one of the two keys — so lexical overlap alone does not find the answer, but a
model that learns to match both keys does. Random P@1 is about 1/#candidates.
The Chinese variant writes the same structure with Chinese words and no spaces, so jieba
segmentation and the category labels (multi-task) have real work to do.

``fetch`` writes both languages' raw TSV files (``synthetic-<language>.tsv``), deterministic in
its options; ``read`` parses the one named by its ``language`` option like any raw dataset.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ansel.data.canonical import Dataset
from ansel.data.preprocess import check_tokenizer
from ansel.data.readers import common
from ansel.data.registry import source
from ansel.data.tokenize import get_tokenizer

LANGUAGES = ("en", "zh")
DEFAULTS = {
    "seed": 13,
    "categories": 4,
    "entities": 60,
    "topic_words": 12,
    "candidates": 10,
    "max_positives": 2,
    "questions": {"train": 600, "dev": 80, "test": 80},
}
FIELDS = ["split", "qid", "question", "category", "aid", "answer", "label"]


def generated_splits(fetch: dict[str, Any] | None, defaults: dict[str, Any]) -> tuple[str, ...]:
    """The splits of a corpus ``fetch`` generates (those its option ``questions`` gives questions);
    () where the fetch options are not known (a read, told only the read options)."""
    if fetch is None:
        return ()
    questions = fetch.get("questions", defaults["questions"])
    return tuple(s for s, n in questions.items() if n) if isinstance(questions, dict) else ()


_EN_ONSETS = "b c d f g h j k l m n p r s t v w z br cr dr fl gr pl st tr".split()
_EN_VOWELS = "a e i o u ai ea oo".split()
_ZH_CATEGORIES = ["内科", "外科", "儿科", "妇科", "民法", "刑法", "劳动法", "婚姻法"]


@functools.cache
def _zh_nouns() -> tuple[str, ...]:
    """Frequent two-character nouns of jieba's own dictionary: text written without spaces
    from them is what jieba must segment, and it can (they are dictionary words)."""
    import jieba

    path = Path(jieba.__file__).with_name("dict.txt")
    entries = [line.split() for line in path.read_text(encoding="utf-8").splitlines()]
    nouns = [(w, int(f)) for w, f, pos in entries if len(w) == 2 and pos == "n" and int(f) > 5000]
    return tuple(w for w, _ in sorted(nouns, key=lambda e: (-e[1], e[0])))


def new_words(rng: np.random.Generator, n: int, language: str, taken: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        if language == "zh":
            w = str(rng.choice(_zh_nouns()))
        else:
            w = "".join(rng.choice(_EN_ONSETS) + rng.choice(_EN_VOWELS) for _ in range(2))
        if w not in taken:
            taken.add(w)
            out.append(w)
    return out


def generate(options: dict[str, Any]) -> list[dict[str, Any]]:
    """All rows (one per question-candidate pair) of the corpus, deterministic in ``options``."""
    unknown = set(options) - set(DEFAULTS) - {"language"}
    if unknown:
        raise ValueError(f"synthetic options: unknown key(s) {sorted(unknown)}; known: {sorted(DEFAULTS)}")
    opt = {**DEFAULTS, **options}
    lang = opt.get("language", "en")
    if lang not in LANGUAGES:
        raise ValueError(f"synthetic options: language {lang!r} is not one of {LANGUAGES}")
    # The language salts the seed so the two corpora are independent draws.
    rng = np.random.default_rng([opt["seed"], LANGUAGES.index(lang)])
    taken: set[str] = set()
    entities = new_words(rng, opt["entities"], lang, taken)
    topics = [new_words(rng, opt["topic_words"], lang, taken) for _ in range(opt["categories"])]
    fillers = new_words(rng, 20, lang, taken)
    cat_names = _ZH_CATEGORIES if lang == "zh" else [f"topic{c}" for c in range(opt["categories"])]
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
            question = sentence([e1, e2], cat, 1, 1)
            n_pos = int(rng.integers(1, opt["max_positives"] + 1))
            pool = [(sentence([e1, e2], cat, 2, int(rng.integers(2, 6))), 1) for _ in range(n_pos)]
            while len(pool) < opt["candidates"]:
                other = rng.choice([e for e in entities if e not in (e1, e2)])
                shared = e1 if rng.random() < 0.5 else e2
                # Mostly same-category distractors; a few from elsewhere, as real pools have.
                dcat = cat if rng.random() < 0.8 else int(rng.integers(opt["categories"]))
                pool.append((sentence([shared, other], dcat, 2, int(rng.integers(2, 6))), 0))
            for text, label in (pool[j] for j in rng.permutation(len(pool))):
                rows.append(
                    {
                        "split": split,
                        "qid": qid,
                        "question": question,
                        "category": cat_names[cat],
                        "aid": f"a{aid}",
                        "answer": text,
                        "label": label,
                    }
                )
                aid += 1
    return rows


@source("synthetic")
class Synthetic(common.Reader):
    categories = True

    def splits(self, options: dict[str, Any], fetch: dict[str, Any] | None) -> tuple[str, ...]:
        return generated_splits(fetch, DEFAULTS)

    def fetch(self, raw_dir: Path, mirror: Path | None, options: dict[str, Any]) -> None:
        raw_dir.mkdir(parents=True, exist_ok=True)
        for lang in LANGUAGES:
            common.write_tsv(raw_dir / f"synthetic-{lang}.tsv", FIELDS, generate({**options, "language": lang}))

    def check(self, options: dict[str, Any], fetch: dict[str, Any] | None = None) -> None:
        """Its own three options only (it applies none of COMMON_OPTIONS)."""
        unknown = set(options) - {"language", "tokenizer", "name"}
        if unknown:
            raise KeyError(f"{self.name}: unknown read option(s) {sorted(unknown)}; known: language, name, tokenizer")
        check_tokenizer(options)

    def read(self, raw_dir: Path, options: dict[str, Any]) -> Dataset:
        self.check(options)
        path = raw_dir / f"synthetic-{options.get('language', 'en')}.tsv"
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
        return Dataset(
            options.get("name", self.name), questions.reset_index(drop=True), answers.reset_index(drop=True), splits
        )
