from __future__ import annotations

import pandas as pd
import pytest

from ansel.data.preprocess import apply_options, drop_questions, filter_length, from_pairs, truncate


def pairs() -> pd.DataFrame:
    return pd.DataFrame({
        "split": ["train"] * 4 + ["test"] * 3,
        "question": ["what is a cat ?"] * 3 + ["q two"] + ["where ?"] * 3,
        "answer": ["a cat is an animal .", "no", "a cat is an animal .", "yes it is", "here", "there", "no"],
        "label": [1, 0, 0, 1, 1, 1, 0],
    })


def test_from_pairs_ids_tokens_and_duplicate_pairs():
    ds = from_pairs("t", pairs(), "english").validate()
    assert ds.splits["train"].qid.nunique() == 2
    # the repeated (question, answer) keeps its highest label
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
    ds = apply_options(from_pairs("t", pairs(), "english"),
                       {"drop_questions": {"no_positive": True, "all_positive": True, "splits": ["train", "test"]}})
    assert set(ds.questions.qid) == set(ds.splits["train"].qid) | set(ds.splits["test"].qid)
    with pytest.raises(KeyError, match="unknown split"):
        apply_options(ds, {"drop_questions": {"no_positive": True, "splits": ["dev"]}})


def test_truncate():
    assert truncate(list("abcdef"), 3) == ["a", "b", "c"] and truncate(["a"], None) == ["a"]


def test_a_question_id_naming_two_texts_or_two_splits_is_refused_naming_both(tmp_path):
    """WikiQA's Q0 renamed Q11 (a dev question's id) in the test file: two texts under one id, and
    one id in two splits, each named with the files and lines; a reader whose ids are global
    (QuoraQP's raw release: one question in pairs of every split) may keep one id across splits."""
    from ansel.data.preprocess import IdCollisionError, from_pairs

    pairs = pd.DataFrame({"split": ["dev", "test", "test"], "qid": ["Q11", "Q11", "Q2"],
                          "question": ["how tall is it", "what is a crocodile", "why"], "answer": ["a", "b", "c"],
                          "label": [1, 1, 0], "where": ["WikiQA-dev.tsv:40", "WikiQA-test.tsv:2", "WikiQA-test.tsv:3"]})
    with pytest.raises(IdCollisionError, match=r"question id 'Q11' has two texts: 'how tall is it' \(WikiQA-dev.tsv:40\) "
                                               r"and 'what is a crocodile' \(WikiQA-test.tsv:2\)"):
        from_pairs("wikiqa", pairs, "whitespace")
    same_text = pairs.assign(question=["how tall is it", "how tall is it", "why"])
    with pytest.raises(IdCollisionError, match=r"question id 'Q11' has two splits: 'dev' \(WikiQA-dev.tsv:40\) and 'test'"):
        from_pairs("wikiqa", same_text, "whitespace")
    ds = from_pairs("quoraqp_raw", same_text, "whitespace", ids_global=True)
    assert set(ds.splits["dev"].qid) == set(ds.splits["test"].qid) - {"Q2"} == {"Q11"}


def test_conflicting_labels_of_one_pair_keep_the_positive_and_are_counted(capsys):
    from ansel.data.preprocess import from_pairs

    pairs = pd.DataFrame({"split": ["test"] * 3, "qid": ["q1"] * 3, "question": ["q"] * 3,
                          "answer": ["x", "x", "y"], "label": [0, 1, 0]})
    ds = from_pairs("d", pairs, "whitespace")
    assert ds.splits["test"].label.tolist() == [1, 0]
    assert "d: 1 (question, answer) pairs listed with conflicting labels keep their highest" in capsys.readouterr().out
