"""From parsed pairs to canonical tables, and the preprocessing options shared by all readers.

Readers parse their raw format into a pairs table and call ``from_pairs``; ``apply_options``
then applies the options every reader accepts (documented in ``COMMON_OPTIONS``), in this order:
stop-word removal -> length filter -> question filter -> negatives -> candidate pools -> pruning
of unused rows.
``check_splits`` then refuses degenerate splits, naming the step that emptied them (the sizes
after each filtering step are recorded within ``recorded_steps()``).
"""

from __future__ import annotations

import contextlib
import dataclasses
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Literal, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ansel.data import mining
from ansel.data.canonical import Dataset
from ansel.data.tokenize import get_stopwords, get_tokenizer
from ansel.settings import ConfigError, InputError, check, parse
from ansel.typos import typo_of

COMMON_OPTIONS = {
    "name": "dataset name stored in the tables (default: the source name)",
    "tokenizer": "english | whitespace | chinese | nltk (ansel.data.tokenize); default per reader",
    "stopwords": "nltk_english (ansel/data/stopwords/): remove the list's words from every question's and "
    "answer's tokens, after tokenizing and lower-casing, before any other option and the vocabulary",
    "length_filter": "{min_len, max_len, splits?}: drop pairs whose question or answer has fewer than "
    "min_len or more than max_len tokens (yahooQA: 5..50)",
    "drop_questions": "{no_positive: bool, all_positive: bool, splits: [..]}: drop questions with no "
    "positive / no negative candidate in those splits (default splits: dev, test)",
    "negatives": "{method: bm25|other_category, splits: [train], seed, k: 1000, n: 4, pool: all|split}: "
    "add sampled label-0 candidates to questions given only positives",
    "pools": "{size: 100, splits: [dev, test], seed, pool: all|split}: fill each question's candidates "
    "up to size with random answers (LawQA test protocol)",
}


class ReadOptionError(ConfigError):
    """A read option's value the reader cannot apply; the message starts with its key path within
    the dataset's ``read`` block (``config.check_reader`` prefixes ``datasets.<name>.read.``)."""


@dataclasses.dataclass(frozen=True)
class LengthFilter:
    min_len: int | None = None
    max_len: int | None = None
    splits: list[str] | None = None


@dataclasses.dataclass(frozen=True)
class DropQuestions:
    no_positive: bool = False
    all_positive: bool = False
    splits: list[str] | None = None


@dataclasses.dataclass(frozen=True)
class Negatives:
    """``add_negatives``'s arguments."""

    method: Literal["bm25", "other_category"]
    splits: list[str] = dataclasses.field(default_factory=lambda: ["train"])
    seed: int = 0
    k: int = 1000  # bm25: the retrieved answers the n are drawn from
    n: int = 4
    pool: Literal["all", "split"] = "all"
    n_threads: int = 0  # bm25's retrieval threads (0: all cores); the negatives are the same

    def __post_init__(self) -> None:
        check(self.k >= 1, "k", f"{self.k} is not >= 1")
        check(self.n >= 1, "n", f"{self.n} is not >= 1")
        check(self.n_threads >= 0, "n_threads", f"{self.n_threads} is not >= 0")


@dataclasses.dataclass(frozen=True)
class Pools:
    """``add_pools``'s arguments."""

    size: int = 100
    splits: list[str] = dataclasses.field(default_factory=lambda: ["dev", "test"])
    seed: int = 0
    pool: Literal["all", "split"] = "all"

    def __post_init__(self) -> None:
        check(self.size >= 1, "size", f"{self.size} is not >= 1")


# The keys and types apply_options reads of these options: a misspelt key would be ignored.
SHAPES: dict[str, type[LengthFilter | DropQuestions | Negatives | Pools]] = {
    "length_filter": LengthFilter,
    "drop_questions": DropQuestions,
    "negatives": Negatives,
    "pools": Pools,
}


def check_options(source: str, options: dict[str, Any], own: dict[str, str], splits: Sequence[str] = ()) -> None:
    """Refuse read options that neither COMMON_OPTIONS nor the reader's own ``own`` define, and
    values the reader cannot apply: all before any raw file is read (the dry run checks them).
    ``splits``: the split names the reader always produces, where fixed (empty: known once read)."""
    known = {"name", *COMMON_OPTIONS, *own}
    unknown = sorted(set(options) - known)
    if unknown:
        raise KeyError(f"{source}: unknown read option(s) {unknown}; known: {sorted(known)}")
    if options.get("stopwords"):  # an unknown list fails before any raw file is read
        try:
            get_stopwords(options["stopwords"])
        except KeyError as e:
            raise KeyError(f"{source}: {e.args[0]}") from None
    check_tokenizer(options)
    for key, shape in SHAPES.items():
        if options.get(key) is None:  # null: the option is off
            continue
        spec = parse(shape, options[key], key, ReadOptionError)
        wrong = [s for s in spec.splits or [] if splits and s not in splits]
        if wrong:
            raise ReadOptionError(
                f"{key}.splits: unknown split(s) {wrong}{typo_of(wrong[0], splits)}; "
                f"the {source} reader's splits: {', '.join(splits)}"
            )


def check_tokenizer(options: dict[str, Any]) -> None:
    """Refuse a ``tokenizer`` read option that names no tokenizer (every reader reads it)."""
    if "tokenizer" in options:
        get_tokenizer(options["tokenizer"], ReadOptionError)


def truncate(tokens: list[str], max_len: int | None) -> list[str]:
    """The first ``max_len`` tokens (all when None) — the truncation models apply to inputs."""
    return tokens if max_len is None else tokens[:max_len]


class IdCollisionError(ValueError, InputError):
    """A reader's question id names two questions, or one in two splits; the message names both."""


class LabelConflictError(ValueError, InputError):
    """A (question, answer) pair listed with two labels; the message names both places."""


def drop_repeated(rows: pd.DataFrame, subset: list[str] | None, where: str, what: str) -> pd.DataFrame:
    """``rows`` without the repeats of a row (on ``subset``; all columns where None), the first kept,
    saying how many went (the preprocess log: a raw file's count of lines is not the tables')."""
    repeated = rows.duplicated(subset)
    if n := int(repeated.sum()):
        print(f"{where}: {n} {what} dropped: each an exact repeat of an earlier one, which is kept", flush=True)
    return rows[~repeated]


def from_pairs(
    name: str, pairs: pd.DataFrame, tokenizer: str | Callable[[str], list[str]], ids_global: bool = False
) -> Dataset:
    """Canonical tables from one row per (question, candidate) pair.

    ``pairs`` columns: split, question, answer, label, and optionally qid, aid, category and where
    (the row's place in the raw files, e.g. "WikiQA-dev.tsv:12", for errors). Missing qids are
    assigned per (split, question text); missing aids per answer text, so an answer shared by
    questions is one row. A given qid must name one question text, and stay in one split unless
    the reader declares its ids global (``ids_global``: one question asked in several splits);
    otherwise IdCollisionError names the id, both texts or splits and where they are. A (qid, aid)
    pair listed twice is kept once (the count dropped is printed); listed with two labels, LabelConflictError names both places.
    """
    tokenize = get_tokenizer(tokenizer) if isinstance(tokenizer, str) else tokenizer
    pairs = pairs.copy()
    if "qid" in pairs:
        _check_question_ids(name, pairs, ids_global)
    if "aid" in pairs:
        _check_answer_ids(name, pairs)
    if "qid" not in pairs:
        key = pairs.split + "\x00" + pairs.question
        pairs["qid"] = pairs.split + "-q" + pd.Series(pd.factorize(key)[0], index=pairs.index).astype(str)
    if "aid" not in pairs:
        pairs["aid"] = "a" + pd.Series(pd.factorize(pairs.answer)[0], index=pairs.index).astype(str)
    if "category" not in pairs:
        pairs["category"] = None
    questions = pairs.drop_duplicates("qid")[["qid", "question", "category"]].rename(columns={"question": "text"})
    answers = pairs.drop_duplicates("aid")[["aid", "answer"]].rename(columns={"answer": "text"})
    questions["tokens"] = _tokenize_unique(questions.text, tokenize)
    answers["tokens"] = _tokenize_unique(answers.text, tokenize)
    pairs["label"] = pairs.label.astype(int)
    _check_labels(name, pairs)
    splits = {}
    for split, g in pairs.groupby("split", sort=False):
        g = drop_repeated(g, ["qid", "aid"], f"{name}: {split}", "(question, answer) pair(s)")
        splits[split] = g[["qid", "aid", "label"]].reset_index(drop=True)
    return Dataset(
        name,
        questions[["qid", "text", "tokens", "category"]].reset_index(drop=True),
        answers[["aid", "text", "tokens"]].reset_index(drop=True),
        splits,
    )


def _check_question_ids(name: str, pairs: pd.DataFrame, ids_global: bool) -> None:
    for key, what in (("question", "texts"), ("split", "splits")):
        if key == "split" and ids_global:
            continue
        if (clash := _first_clash(pairs, "qid", key)) is not None:
            (first, where1), (second, where2) = clash
            raise IdCollisionError(
                f"{name}: question id {first.qid!r} has two {what}: {first[key]!r} ({where1}) and "
                f"{second[key]!r} ({where2})"
                + (
                    ""
                    if key == "question"
                    else "; one question in two splits leaks between them (a reader whose ids are global says so)"
                )
            )


def _check_answer_ids(name: str, pairs: pd.DataFrame) -> None:
    """One text per answer id: the tables keep one, so a second would silently stand for the first."""
    if (clash := _first_clash(pairs, "aid", "answer")) is not None:
        (first, where1), (second, where2) = clash
        raise IdCollisionError(
            f"{name}: answer id {first.aid!r} has two texts: {first.answer!r} ({where1}) "
            f"and {second.answer!r} ({where2})"
        )


def _check_labels(name: str, pairs: pd.DataFrame) -> None:
    """One label per (question, answer) pair of a split: no rule could say which of two is right."""
    repeated = pairs.duplicated(["split", "qid", "aid"], keep=False)
    if not repeated.any():
        return
    rows = pairs[repeated]
    rows = rows.assign(
        pair=rows.split + "\x00" + rows.qid.astype(str) + "\x00" + rows.aid.astype(str), where=_places(pairs)[repeated]
    )
    if (clash := _first_clash(rows, "pair", "label")) is not None:
        (first, where1), (second, where2) = clash
        raise LabelConflictError(
            f"{name}: question {first.qid!r} and answer {first.aid!r} ({first.split}) are "
            f"labelled {first.label} ({where1}) and {second.label} ({where2}): "
            "fix the raw file or the reader"
        )


def _places(pairs: pd.DataFrame) -> pd.Series:
    """Each row's place in the raw files: the ``where`` column, else its row number."""
    return (
        pairs["where"]
        if "where" in pairs
        else "row " + pd.Series(range(1, len(pairs) + 1), index=pairs.index).astype(str)
    )


def _first_clash(pairs: pd.DataFrame, id_column: str, key: str):
    """The first id with two values of ``key``: its two rows, each with its place in the raw files
    (``_places``); None when every id has one."""
    seen = pairs.drop_duplicates([id_column, key])
    clash = seen[seen[id_column].duplicated(keep=False)]
    if clash.empty:
        return None
    where = _places(pairs)
    first = clash.iloc[0]
    second = clash[clash[id_column] == first[id_column]].iloc[1]
    return (first, where[first.name]), (second, where[second.name])


def _tokenize_unique(texts: pd.Series, tokenize: Callable[[str], list[str]]) -> pd.Series:
    cache = {t: tokenize(t) for t in pd.unique(texts)}
    return texts.map(cache)


class DegenerateDataError(ValueError, InputError):
    """A configured split is empty or has no positive; the message names dataset, split and step."""


class SplitSize(NamedTuple):
    questions: int
    candidates: int
    positives: int

    def __str__(self) -> str:
        return f"{self.questions} questions / {self.candidates} candidates, {self.positives} positive"


# (step, sizes per split after it) for each filtering step apply_options ran, when recording.
Steps = list[tuple[str, dict[str, SplitSize]]]
_steps: ContextVar[Steps | None] = ContextVar("ansel_preprocess_steps", default=None)


@contextlib.contextmanager
def recorded_steps() -> Iterator[Steps]:
    """Record, within the block, the split sizes after each filtering step of apply_options
    (which readers call themselves)."""
    steps: Steps = []
    token = _steps.set(steps)
    try:
        yield steps
    finally:
        _steps.reset(token)


def _size(c: pd.DataFrame) -> SplitSize:
    return SplitSize(c.qid.nunique(), len(c), int(c.label.sum()))


def _record(step: str, ds: Dataset) -> None:
    if (steps := _steps.get()) is not None:
        steps.append((step, {s: _size(c) for s, c in ds.splits.items()}))


def apply_options(ds: Dataset, options: dict[str, Any]) -> Dataset:
    # Only the filters can empty a split or remove its positives (negatives and pools add
    # label-0 candidates), so only their results are recorded.
    _record("read", ds)
    if name := options.get("stopwords"):
        ds = remove_stopwords(ds, get_stopwords(name))
    if spec := options.get("length_filter"):
        ds = filter_length(ds, spec.get("min_len"), spec.get("max_len"), spec.get("splits"))
        _record(f"length_filter (min_len={spec.get('min_len')}, max_len={spec.get('max_len')})", ds)
    if spec := options.get("drop_questions"):
        no_pos, all_pos = spec.get("no_positive", False), spec.get("all_positive", False)
        ds = drop_questions(ds, spec.get("splits", ["dev", "test"]), no_pos, all_pos)
        flags = [f for f, on in (("no_positive", no_pos), ("all_positive", all_pos)) if on]
        _record(f"drop_questions ({', '.join(flags)})", ds)
    if spec := options.get("negatives"):
        ds = add_negatives(ds, **spec)
    if spec := options.get("pools"):
        ds = add_pools(ds, **spec)
    return prune(ds)


def check_splits(ds: Dataset, splits: list[str], steps: Steps, where: str) -> None:
    """Refuse any of ``splits`` that is empty or has no positive candidate: training needs
    (question, positive) pairs and MAP/MRR a question with a positive. The message names
    ``where`` (``datasets.<name>``), the split and the filtering step that emptied it, with the
    sizes before that step (``steps`` from ``recorded_steps``)."""
    for split in splits:
        c = ds.splits[split]
        if c.label.any():
            continue
        if c.empty:
            problem, count = "is empty", "candidates"
        elif split == "train":
            problem, count = "has no (question, positive) pair to train on", "positives"
        else:
            problem, count = "has no question with a positive candidate (MAP/MRR need one)", "positives"
        # The final sizes close the list, so a step is always found: with nothing recorded (a
        # reader without common options), it is the reader's output itself.
        sizes = [(step, by_split[split]) for step, by_split in steps] + [("the reader's own steps", _size(c))]
        first = next(i for i, (_, size) in enumerate(sizes) if getattr(size, count) == 0)
        if first == 0:
            raise DegenerateDataError(f"{where}: split {split!r} {problem} as read from the raw files ({sizes[0][1]})")
        raise DegenerateDataError(
            f"{where}: split {split!r} {problem} after {sizes[first][0]} (before it: {sizes[first - 1][1]})"
        )


def _split_names(ds: Dataset, splits: list[str] | None, key: str) -> list[str]:
    """``splits`` of read option ``key`` (None: all), each one the reader produced."""
    names = list(ds.splits) if splits is None else splits
    unknown = [s for s in names if s not in ds.splits]
    if unknown:
        raise ConfigError(  # at job time: a reader whose split names are known once read
            f"datasets.{ds.name}.read.{key}.splits: unknown split(s) {unknown}; the reader produced "
            f"{', '.join(ds.splits)}"
        )
    return names


def remove_stopwords(ds: Dataset, words: frozenset[str]) -> Dataset:
    """Drop ``words`` from the token lists of every question and answer (texts are kept)."""

    def strip(tokens: pd.Series) -> pd.Series:
        return tokens.map(lambda toks: [t for t in toks if t not in words])

    return Dataset(
        ds.name,
        ds.questions.assign(tokens=strip(ds.questions.tokens)),
        ds.answers.assign(tokens=strip(ds.answers.tokens)),
        ds.splits,
    )


def filter_length(ds: Dataset, min_len: int | None, max_len: int | None, splits: list[str] | None = None) -> Dataset:
    """Drop pairs whose question or answer length (tokens) is outside [min_len, max_len]."""
    lo, hi = min_len or 0, max_len or np.inf
    q_ok = set(ds.questions.qid[ds.questions.tokens.map(len).between(lo, hi)])
    a_ok = set(ds.answers.aid[ds.answers.tokens.map(len).between(lo, hi)])
    out = dict(ds.splits)
    for s in _split_names(ds, splits, "length_filter"):
        c = ds.splits[s]
        out[s] = c[c.qid.isin(q_ok) & c.aid.isin(a_ok)].reset_index(drop=True)
    return Dataset(ds.name, ds.questions, ds.answers, out)


def drop_questions(ds: Dataset, splits: list[str], no_positive: bool, all_positive: bool) -> Dataset:
    """Remove the candidates of questions lacking a positive and/or a negative in ``splits``."""
    out = dict(ds.splits)
    for s in _split_names(ds, splits, "drop_questions"):
        c = ds.splits[s]
        per_q = c.groupby("qid").label.agg(["min", "max"])
        bad = pd.Series(False, index=per_q.index)
        if no_positive:
            bad |= per_q["max"] == 0
        if all_positive:
            bad |= per_q["min"] == 1
        out[s] = c[~c.qid.isin(per_q.index[bad])].reset_index(drop=True)
    return Dataset(ds.name, ds.questions, ds.answers, out)


def _answer_pool(ds: Dataset, split: str, pool: str) -> np.ndarray:
    """Positions (in ds.answers) of the answers negatives may be drawn from."""
    if pool == "all":
        return np.arange(len(ds.answers))
    if pool == "split":
        return np.flatnonzero(ds.answers.aid.isin(ds.splits[split].aid).to_numpy())
    raise ValueError(f"{ds.name}: pool must be 'all' or 'split', got {pool!r}")


def _positives(c: pd.DataFrame, aid_pos: dict[str, int]) -> tuple[list[str], list[set[int]]]:
    qids = list(pd.unique(c.qid))
    pos = c[c.label == 1].groupby("qid").aid.agg(lambda s: {aid_pos[a] for a in s})
    return qids, [pos.get(q, set()) for q in qids]


def add_negatives(
    ds: Dataset,
    method: str,
    splits: Sequence[str] = ("train",),
    seed: int = 0,
    k: int = 1000,
    n: int = 4,
    pool: str = "all",
    n_threads: int = 0,
) -> Dataset:
    """Add label-0 candidates to ``splits`` by ``method`` (bm25 | other_category); see negatives.py."""
    aid_pos = {a: i for i, a in enumerate(ds.answers.aid)}
    out = dict(ds.splits)
    for s in _split_names(ds, list(splits), "negatives"):
        c = ds.splits[s]
        if method == "bm25":
            allowed = _answer_pool(ds, s, pool)
            qids, pos = _positives(c, aid_pos)
            qtok = ds.questions.set_index("qid").tokens.loc[qids].tolist()
            local = {int(g): i for i, g in enumerate(allowed)}
            picks = mining.bm25_negatives(
                qtok,
                ds.answers.tokens.iloc[allowed].tolist(),
                [{local[p] for p in ps if p in local} for ps in pos],
                k=k,
                n=n,
                seed=seed,
                n_threads=n_threads,
            )
            aids = ds.answers.aid.to_numpy()
            rows = [(q, aids[allowed[i]]) for q, idx in zip(qids, picks) for i in idx]
        elif method == "other_category":
            rows = _other_category_rows(ds, c, seed)
        else:
            raise ValueError(f"{ds.name}: unknown negatives method {method!r} (bm25, other_category)")
        new = pd.DataFrame(rows, columns=["qid", "aid"]).assign(label=0)
        out[s] = (
            pd.concat([c, new], ignore_index=True).drop_duplicates(["qid", "aid"], keep="first").reset_index(drop=True)
        )
    return Dataset(ds.name, ds.questions, ds.answers, out)


def _other_category_rows(ds: Dataset, c: pd.DataFrame, seed: int) -> list[tuple[str, str]]:
    qcat = ds.questions.set_index("qid").category
    if qcat.isna().any():
        raise ValueError(f"{ds.name}: negatives method other_category needs a category for every question")
    # An answer's category is that of a question it answers (any split).
    all_pos = pd.concat([x[x.label == 1] for x in ds.splits.values()])
    acat = all_pos.drop_duplicates("aid").set_index("aid").qid.map(qcat)
    answer_ids, answer_cats = acat.index.tolist(), acat.tolist()
    positives = c[c.label == 1]
    picks = mining.other_category_negatives(positives.qid.map(qcat).tolist(), answer_cats, seed)
    return [(q, answer_ids[i]) for q, i in zip(positives.qid, picks)]


def add_pools(
    ds: Dataset, size: int = 100, splits: Sequence[str] = ("dev", "test"), seed: int = 0, pool: str = "all"
) -> Dataset:
    """Fill each question's candidates in ``splits`` up to ``size`` with random label-0 answers."""
    aid_pos = {a: i for i, a in enumerate(ds.answers.aid)}
    out = dict(ds.splits)
    for s in _split_names(ds, list(splits), "pools"):
        c = ds.splits[s]
        qids = list(pd.unique(c.qid))
        have = c.groupby("qid").aid.agg(lambda s: {aid_pos[a] for a in s})
        picks = mining.random_pools([have[q] for q in qids], len(ds.answers), size, seed, _answer_pool(ds, s, pool))
        aids = ds.answers.aid.to_numpy()
        rows = [(q, aids[i]) for q, idx in zip(qids, picks) for i in idx]
        out[s] = pd.concat([c, pd.DataFrame(rows, columns=["qid", "aid"]).assign(label=0)], ignore_index=True)
    return Dataset(ds.name, ds.questions, ds.answers, out)


def prune(ds: Dataset) -> Dataset:
    """Keep only questions and answers some split still refers to."""
    used_q = set().union(*(set(c.qid) for c in ds.splits.values())) if ds.splits else set()
    used_a = set().union(*(set(c.aid) for c in ds.splits.values())) if ds.splits else set()
    return Dataset(
        ds.name,
        ds.questions[ds.questions.qid.isin(used_q)].reset_index(drop=True),
        ds.answers[ds.answers.aid.isin(used_a)].reset_index(drop=True),
        ds.splits,
    )
