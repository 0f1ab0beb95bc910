"""Issue 33 item 2: a question id that names two questions (two texts, or one id in two splits) is
refused naming both and where they are (conflicting labels of one pair: test_conflicting_inputs.py)."""

from __future__ import annotations

import pandas as pd
import pytest


def test_a_question_id_naming_two_texts_or_two_splits_is_refused_naming_both(tmp_path):
    """WikiQA's Q0 renamed Q11 (a dev question's id) in the test file: two texts under one id, and
    one id in two splits, each named with the files and lines; a reader whose ids are global
    (QuoraQP's raw release: one question in pairs of every split) may keep one id across splits."""
    from ansel.data.preprocess import IdCollisionError, from_pairs

    pairs = pd.DataFrame(
        {
            "split": ["dev", "test", "test"],
            "qid": ["Q11", "Q11", "Q2"],
            "question": ["how tall is it", "what is a crocodile", "why"],
            "answer": ["a", "b", "c"],
            "label": [1, 1, 0],
            "where": ["WikiQA-dev.tsv:40", "WikiQA-test.tsv:2", "WikiQA-test.tsv:3"],
        }
    )
    with pytest.raises(
        IdCollisionError,
        match=r"question id 'Q11' has two texts: 'how tall is it' \(WikiQA-dev.tsv:40\) "
        r"and 'what is a crocodile' \(WikiQA-test.tsv:2\)",
    ):
        from_pairs("wikiqa", pairs, "whitespace")
    same_text = pairs.assign(question=["how tall is it", "how tall is it", "why"])
    with pytest.raises(
        IdCollisionError, match=r"question id 'Q11' has two splits: 'dev' \(WikiQA-dev.tsv:40\) and 'test'"
    ):
        from_pairs("wikiqa", same_text, "whitespace")
    ds = from_pairs("quoraqp_raw", same_text, "whitespace", ids_global=True)
    assert set(ds.splits["dev"].qid) == set(ds.splits["test"].qid) - {"Q2"} == {"Q11"}


def test_an_answer_id_naming_two_texts_is_refused_naming_both():
    """One SentenceID over two sentences: the tables keep one answer per id, so the second question's
    positive would silently become the first's text; one answer shared by two questions is one row."""
    from ansel.data.preprocess import IdCollisionError, from_pairs

    pairs = pd.DataFrame(
        {
            "split": ["dev", "dev"],
            "qid": ["Q1", "Q2"],
            "question": ["caves?", "hamlet?"],
            "aid": ["D1-0", "D1-0"],
            "answer": ["caves form in ice .", "shakespeare wrote hamlet ."],
            "label": [1, 1],
            "where": ["WikiQA-dev.tsv:2", "WikiQA-dev.tsv:9"],
        }
    )
    with pytest.raises(
        IdCollisionError,
        match=r"answer id 'D1-0' has two texts: 'caves form in ice .' "
        r"\(WikiQA-dev.tsv:2\) and 'shakespeare wrote hamlet .' \(WikiQA-dev.tsv:9\)",
    ):
        from_pairs("wikiqa", pairs, "whitespace")
    ds = from_pairs("wikiqa", pairs.assign(answer="caves form in ice ."), "whitespace")
    assert ds.answers.aid.tolist() == ["D1-0"] and ds.splits["dev"].aid.tolist() == ["D1-0", "D1-0"]
