"""aMV-LSTM's MatchZoo 1.x preparations (params.yaml: wikiqa_mz, quoraqp_standin) on the mirror's
real files: the question sets MatchZoo evaluated on, and the sizes of the splits and vocabularies."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
import yaml

from ansel.data.readers import common
from ansel.data.registry import get_source
from ansel.data.tokenize import get_stopwords
from ansel.data.vocab import Vocab, training_texts

pytestmark = pytest.mark.realdata

REPO = Path(__file__).resolve().parents[2]


def dataset_cfg(name: str) -> dict:
    return yaml.safe_load((REPO / "params.yaml").read_text())["datasets"][name]


def read(fetched, name: str):
    cfg = dataset_cfg(name)
    raw = fetched(cfg["source"], cfg.get("fetch", {}).get("files"))
    return get_source(cfg["source"]).read(raw, {**cfg.get("read", {}), "name": name}).validate(), raw, cfg


@pytest.fixture(scope="module")
def wikiqa_mz(fetched):
    return read(fetched, "wikiqa_mz")


def ref_rows(path: Path) -> list[tuple[int, int, int]]:
    """A TREC qrels .ref file: ``qidx 0 sidx label`` per line (qidx: 1-based question index in
    the split's file order; sidx: 0-based candidate index within that question)."""
    rows = []
    for i, f in common.fields(path, " ", 4):
        if f[1] != "0":
            raise common.RawFormatError(f"{path}: line {i}: second field {f[1]!r} is not 0")
        rows.append((int(f[0]), int(f[2]), common.label(f[3], path, i)))
    return rows


def tsv_candidates(path: Path) -> list[list[tuple[str, str, int]]]:
    """Per question of a WikiQA-<split>.tsv, in file order: its (QuestionID, SentenceID, label) rows."""
    questions: dict[str, list] = {}
    for i, f in common.fields(path, "\t", 7, skip_header=True):
        questions.setdefault(f[0], []).append((f[0], f[4], common.label(f[6], path, i)))
    return list(questions.values())


@pytest.mark.parametrize("split, n_questions, n_pairs", [("dev", 122, 1126), ("test", 237, 2341)])
def test_wikiqa_mz_dev_test_are_the_filtered_ref_questions(wikiqa_mz, mirror, split, n_questions, n_pairs):
    ds, raw, _ = wikiqa_mz
    wiki = mirror / "wikiqa"
    questions = tsv_candidates(raw / f"WikiQA-{split}.tsv")
    # the unfiltered .ref lists every candidate of every question in file order: this pins the
    # mapping qidx -> QuestionID, sidx -> SentenceID (and the labels agree)
    full = ref_rows(wiki / f"WikiQA-{split}.ref")
    assert len(full) == sum(map(len, questions))
    by_question = collections.defaultdict(list)
    for qidx, sidx, label in full:
        by_question[qidx].append((sidx, label))
    assert sorted(by_question) == list(range(1, len(questions) + 1))
    for qidx, cands in by_question.items():
        assert cands == [(j, lab) for j, (_, _, lab) in enumerate(questions[qidx - 1])]
    # the filtered .ref: exactly the processed split's questions and candidates, with their labels
    filtered = ref_rows(wiki / f"WikiQA-{split}-filtered.ref")
    expected = {questions[q - 1][s] for q, s, _ in filtered}
    assert all(questions[q - 1][s][2] == lab for q, s, lab in filtered)
    c = ds.splits[split]
    assert set(zip(c.qid, c.aid, c.label)) == expected
    assert (c.qid.nunique(), len(c)) == (n_questions, n_pairs) == (len({q for q, _, _ in filtered}), len(filtered))


def test_wikiqa_mz_train_keeps_questions_with_both_labels(wikiqa_mz):
    ds, _, _ = wikiqa_mz
    per_q = ds.splits["train"].groupby("qid").label.agg(["min", "max"])
    assert len(per_q) == 857 and (per_q["min"] == 0).all() and (per_q["max"] == 1).all()
    assert len(ds.splits["train"]) == 8651


def test_wikiqa_mz_tokens_and_vocabulary(wikiqa_mz):
    ds, _, cfg = wikiqa_mz
    q = ds.questions.set_index("qid").loc["Q1"]
    assert q.text == "how are glacier caves formed?"
    assert list(q.tokens) == ["glacier", "caves", "formed", "?"]  # "how", "are": stop words
    stop = get_stopwords("nltk_english")
    assert not any(stop & set(t) for t in ds.answers.tokens)
    vocab = Vocab.build(training_texts(ds), **cfg["vocab"])
    # 10,384 words over the 857 train questions' texts (MatchZoo, whole corpus: 18,669 + PAD)
    assert len(vocab) == 2 + 10384


def test_quoraqp_standin_splits_and_vocabulary(fetched):
    ds, raw, cfg = read(fetched, "quoraqp_standin")
    assert sorted(p.name for p in raw.iterdir() if p.suffix == ".tsv") == ["dev.tsv", "test.tsv"]
    sizes = {s: (len(c), int(c.label.sum())) for s, c in ds.splits.items()}
    assert sizes == {"train": (16000, 8034), "dev": (2000, 983), "test": (2000, 983)}
    assert len(Vocab.build(training_texts(ds), **cfg["vocab"])) == 2 + 4957
