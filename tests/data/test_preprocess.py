from __future__ import annotations

import pandas as pd
import pytest

from ansel.data.preprocess import apply_options, drop_questions, filter_length, from_pairs, truncate
from ansel.settings import ConfigError


def pairs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "split": ["train"] * 4 + ["test"] * 3,
            "question": ["what is a cat ?"] * 3 + ["q two"] + ["where ?"] * 3,
            "answer": ["a cat is an animal .", "no", "a cat is an animal .", "yes it is", "here", "there", "no"],
            "label": [1, 0, 1, 1, 1, 1, 0],
        }
    )


def test_from_pairs_ids_tokens_and_duplicate_pairs(capsys):
    ds = from_pairs("t", pairs(), "english").validate()
    # the preprocess log counts what was dropped (a raw file's line count is not the tables')
    assert capsys.readouterr().out == (
        "t: train: 1 (question, answer) pair(s) dropped: each an exact repeat of an earlier one, which is kept\n"
    )
    assert ds.splits["train"].qid.nunique() == 2
    # the repeated (question, answer) is kept once (labelled both ways it is refused: tests/reliability)
    assert len(ds.splits["train"]) == 3 and ds.splits["train"].label.sum() == 2
    # "no" answers a train and a test question: one answer row
    assert (ds.answers.text == "no").sum() == 1
    assert list(ds.questions.tokens.iloc[0]) == ["what", "is", "a", "cat", "?"]


def test_drop_questions_variants():
    ds = from_pairs("t", pairs(), "english")
    kept = drop_questions(ds, ["train"], no_positive=False, all_positive=True)
    assert kept.splits["train"].qid.nunique() == 1  # "q two" has only a positive
    assert len(kept.splits["test"]) == 3  # untouched split


def test_filter_length_drops_pairs_outside_range():
    ds = from_pairs("t", pairs(), "english")
    out = filter_length(ds, 2, 5, ["train"])
    assert set(out.splits["train"].merge(ds.answers, on="aid").text) == {"yes it is"}


def test_apply_options_prunes_and_rejects_unknown_split():
    ds = apply_options(
        from_pairs("t", pairs(), "english"),
        {"drop_questions": {"no_positive": True, "all_positive": True, "splits": ["train", "test"]}},
    )
    assert set(ds.questions.qid) == set(ds.splits["train"].qid) | set(ds.splits["test"].qid)
    # a ConfigError naming the key (the CLI prints it as one line), not a KeyError traceback
    with pytest.raises(ConfigError, match=r"^datasets\.t\.read\.drop_questions\.splits: unknown split\(s\) \['dev'\]"):
        apply_options(ds, {"drop_questions": {"no_positive": True, "splits": ["dev"]}})


def test_unknown_tokenizer_is_a_config_error():
    with pytest.raises(ConfigError, match=r"^tokenizer: unknown tokenizer 'englsh'; known: english,"):
        from_pairs("t", pairs(), "englsh")


def test_truncate():
    assert truncate(list("abcdef"), 3) == ["a", "b", "c"] and truncate(["a"], None) == ["a"]
