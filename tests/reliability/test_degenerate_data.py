"""Degenerate splits are refused at preprocessing, naming dataset, split and the step that
emptied them, before anything is written (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ansel import cli
from ansel.data.manifest import write_manifest
from ansel.data.preprocess import DegenerateDataError, check_splits, from_pairs

HEADER = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\r\n"
GOOD = [[(1, "yes here"), (0, "no")]] * 2  # two questions: (label, answer) per candidate
NO_POSITIVE = [[(0, "yes here"), (0, "no")]] * 2
LONG_POSITIVES = [[(1, "yes it is right here"), (0, "no")]] * 2


def run(tmp_path: Path, splits: dict[str, list], read: dict, names: tuple = ("train", "dev", "test")) -> Path:
    """Preprocess WikiQA files made of ``splits`` with the ``read`` options, the dataset's splits
    ``names``; return the out dir."""
    raw, out = tmp_path / "raw", tmp_path / "processed" / "wikiqa"
    raw.mkdir()
    for split, questions in {"train": GOOD, "dev": GOOD, "test": GOOD, **splits}.items():
        rows = [
            f"{split}-Q{q}\tq{q} ?\tD\tT\t{split}-A{q}-{a}\t{text}\t{label}\r\n"
            for q, cands in enumerate(questions)
            for a, (label, text) in enumerate(cands)
        ]
        (raw / f"WikiQA-{split}.tsv").write_text(HEADER + "".join(rows), newline="")
    write_manifest(raw / "manifest.json")
    config = {"source": "wikiqa", "read": {"tokenizer": "english", **read}, "splits": list(names)}
    cli.main(
        ["preprocess", "--dataset", "wikiqa", "--config", json.dumps(config), "--raw", str(raw), "--out", str(out)]
    )
    return out


@pytest.mark.parametrize(
    "splits, read, message",
    [
        (
            {"dev": NO_POSITIVE},
            {"drop_questions": {"no_positive": True, "splits": ["dev", "test"]}},
            "datasets.wikiqa: split 'dev' is empty after drop_questions (no_positive) "
            "(before it: 2 questions / 4 candidates, 0 positive)",
        ),
        (
            {"dev": LONG_POSITIVES},
            {"length_filter": {"min_len": 1, "max_len": 3}},
            "datasets.wikiqa: split 'dev' has no question with a positive candidate (MAP/MRR need one) "
            "after length_filter (min_len=1, max_len=3) (before it: 2 questions / 4 candidates, 2 positive)",
        ),
        (
            {"test": [[(1, "yes it is right here")]] * 2},
            {"length_filter": {"min_len": 1, "max_len": 3}, "drop_questions": {"no_positive": True}},
            "datasets.wikiqa: split 'test' is empty after length_filter (min_len=1, max_len=3) "
            "(before it: 2 questions / 2 candidates, 2 positive)",
        ),
        (
            {"train": NO_POSITIVE},
            {},
            "datasets.wikiqa: split 'train' has no (question, positive) pair to train on as read from the raw files "
            "(2 questions / 4 candidates, 0 positive)",
        ),
    ],
)
def test_degenerate_split_is_refused_naming_dataset_split_and_step(tmp_path, splits, read, message):
    with pytest.raises(SystemExit) as refused:
        run(tmp_path, splits, read)
    assert str(refused.value) == f"ansel preprocess: {message}"
    assert not (tmp_path / "processed").exists()


def test_sound_splits_are_written(tmp_path):
    out = run(tmp_path, {}, {"drop_questions": {"no_positive": True}})
    assert sorted(p.name for p in out.iterdir()) == [
        "answers.parquet",
        "candidates-dev.parquet",
        "candidates-test.parquet",
        "candidates-train.parquet",
        "manifest.json",
        "questions.parquet",
        "vocab.json",
    ]


def test_reader_without_filtering_steps_is_checked_on_its_output():
    ds = from_pairs(
        "x",
        pd.DataFrame({"split": ["train", "dev"], "question": ["q", "r"], "answer": ["a", "b"], "label": [1, 0]}),
        "whitespace",
    )
    with pytest.raises(
        DegenerateDataError,
        match=r"^datasets\.x: split 'dev' has no question with a positive "
        r"candidate \(MAP/MRR need one\) as read from the raw files "
        r"\(1 questions / 1 candidates, 0 positive\)$",
    ):
        check_splits(ds, ["train", "dev"], [], "datasets.x")


def test_a_split_the_reader_does_not_produce_is_refused_naming_the_key(tmp_path):
    with pytest.raises(SystemExit) as refused:
        run(tmp_path, {}, {}, names=("train", "dev", "test", "test1"))
    assert str(refused.value) == (
        "ansel preprocess: datasets.wikiqa.splits: 'test1' not a split the wikiqa reader produces under this "
        "dataset's read and fetch options; it produces train, dev, test"
    )
    assert not (tmp_path / "processed").exists()
