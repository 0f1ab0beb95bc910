"""Loading a processed dataset for a run in whole columns (``Vocab.encode_batch``, ``RunData.pairs``,
``RunData.categories``): equal to the per-text references of tests/data/reference_loading.py on
texts that are empty, longer than ``max_len``, unknown, Chinese; as lists, arrays and Arrow lists."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ansel.data.batches import RunData
from ansel.data.canonical import Dataset, DatasetError
from ansel.data.vocab import Lexicon, Vocab
from tests.data.reference_loading import (
    assert_lexicon_as_reference,
    reference_categories,
    reference_ids,
    reference_lexicon,
)

VOCAB = Vocab(["<pad>", "<unk>", "the", "cat", "猫", "在", "", "sat"])
TEXTS = [
    ["the", "cat", "sat"],
    [],  # empty: one <unk>
    ["the", "dog", "sat", "on", "the", "mat", "again", "and", "again"],  # longer than max_len, unknown words
    ["猫", "在", "睡觉", "猫"],  # Chinese, one unknown
    [""],  # the empty token is a word of this vocabulary
    ["dog"],
]


def as_object_column(texts) -> pd.Series:
    """Token lists as the parquet reader gives them: an object column of string arrays."""
    return pd.Series(pa.array(texts, type=pa.list_(pa.string())).to_pandas(), dtype=object)


def as_arrow_column(texts) -> pd.Series:
    return pd.Series(pa.array(texts, type=pa.list_(pa.string())), dtype=pd.ArrowDtype(pa.list_(pa.string())))


@pytest.mark.parametrize("shape", [list, as_object_column, as_arrow_column])
@pytest.mark.parametrize(
    "texts", [TEXTS, TEXTS[:1], TEXTS[1:2], TEXTS[3:4], []], ids=["all", "one", "empty", "zh", "none"]
)
@pytest.mark.parametrize("max_len", [0, 1, 3, 5, 100])
def test_a_batch_encodes_as_each_text_alone(shape, texts, max_len):
    got = VOCAB.encode_batch(shape(texts), max_len)
    expected = reference_ids(VOCAB, texts, max_len)
    assert got.dtype == np.int64 and got.shape == expected.shape
    assert np.array_equal(got, expected)


def test_the_reference_pads_truncates_and_marks_unknown_and_empty_texts():
    """The reference itself, on hand-checked rows: the point of the comparisons above."""
    assert reference_ids(VOCAB, TEXTS, 5).tolist() == [
        [2, 3, 7, 0, 0],
        [1, 0, 0, 0, 0],
        [2, 1, 7, 1, 2],
        [4, 5, 1, 4, 0],
        [6, 0, 0, 0, 0],
        [1, 0, 0, 0, 0],
    ]
    assert reference_ids(VOCAB, [], 5).shape == (0, 1)


def test_a_word_listed_twice_takes_its_last_id_as_the_index_does():
    vocab = Vocab(["<pad>", "<unk>", "a", "b", "a"])
    assert vocab.index["a"] == 4
    assert vocab.encode_batch([["a", "b", "c"]], 3).tolist() == [[4, 3, 1]]


def test_a_negative_length_and_a_text_that_is_no_token_list_are_refused():
    with pytest.raises(ValueError, match="max_len -1 is negative"):
        VOCAB.encode_batch(TEXTS, -1)
    with pytest.raises(ValueError, match="text 1: None is not a sequence of tokens"):
        VOCAB.encode_batch(as_object_column([["the"], None]), 3)
    with pytest.raises(ValueError, match="text 1: no token list"):
        VOCAB.encode_batch(as_arrow_column([["the"], None]), 3)


def run_data(questions: pd.DataFrame, splits: dict[str, pd.DataFrame]) -> RunData:
    answers = pd.DataFrame({"aid": ["a1", "a2", "a3"], "text": "", "tokens": [["cat"], ["the"], []]})
    ds = Dataset("tiny", questions, answers, splits)
    return RunData(
        ds,
        np.zeros((len(questions), 1), np.int64),
        np.zeros((3, 1), np.int64),
        pd.Index(questions.qid),
        pd.Index(answers.aid),
        VOCAB,
    )


QUESTIONS = pd.DataFrame(
    {"qid": ["q1", "q2", "q3", "q4"], "text": "", "tokens": [["the"]] * 4, "category": ["法律", None, "b", "dev only"]}
)
SPLITS = {
    "train": pd.DataFrame({"qid": ["q3", "q1", "q2", "q1"], "aid": ["a1", "a2", "a3", "a3"], "label": [1, 0, 1, 0]}),
    "dev": pd.DataFrame({"qid": ["q4"], "aid": ["a2"], "label": [1]}),
}


def test_pairs_give_each_candidates_question_and_answer_row():
    data = run_data(QUESTIONS, SPLITS)
    cands, qi, ai = data.pairs("train")
    assert cands is SPLITS["train"]
    assert (qi.tolist(), ai.tolist()) == ([2, 0, 1, 0], [0, 1, 2, 2])
    assert qi.dtype == ai.dtype == np.int64


def test_a_candidate_naming_no_question_or_answer_of_the_dataset_is_an_error_naming_split_row_and_id():
    data = run_data(QUESTIONS, {"dev": pd.DataFrame({"qid": ["q1", "q9"], "aid": ["a1", "a1"], "label": [1, 0]})})
    with pytest.raises(DatasetError, match=r"tiny/candidates-dev: row 1: unknown qid 'q9'"):
        data.pairs("dev")
    data = run_data(QUESTIONS, {"test": pd.DataFrame({"qid": ["q1"], "aid": ["a7"], "label": [1]})})
    with pytest.raises(DatasetError, match=r"tiny/candidates-test: row 0: unknown aid 'a7'"):
        data.pairs("test")
    with pytest.raises(KeyError, match="has no split 'train'"):
        data.pairs("train")


@pytest.mark.parametrize(
    "category",
    [["法律", None, "b", "dev only"], pd.array(["法律", None, "b", "dev only"], dtype="str"), [3, "x", None, "b"]],
    ids=["object", "str", "a number"],
)
def test_categories_are_the_training_splits_and_each_question_has_its_index_or_minus_one(category):
    data = run_data(QUESTIONS.assign(category=category), SPLITS)
    categories, q_category = reference_categories(data)
    assert data.categories == categories
    assert data.q_category.dtype == np.int64 and np.array_equal(data.q_category, q_category)


def test_the_references_categories_on_hand_checked_rows():
    """A number among the training split's categories is a class by its string, but no question's."""
    categories, q_category = reference_categories(run_data(QUESTIONS, SPLITS))
    assert categories == ["b", "法律"] and q_category.tolist() == [1, -1, 0, -1]
    categories, q_category = reference_categories(run_data(QUESTIONS.assign(category=[3, "x", None, "b"]), SPLITS))
    assert categories == ["3", "x"] and q_category.tolist() == [-1, 1, -1, -1]


@pytest.mark.parametrize("shape", [list, as_object_column])
def test_a_lexicon_counts_each_words_documents_and_occurrences_as_one_document_at_a_time(shape):
    documents = [*TEXTS, ["<unk>", "cat", "cat"], ["<pad>"]]  # the special words are words of the vocabulary
    assert_lexicon_as_reference(Lexicon.build(VOCAB, shape(documents)), VOCAB, documents)
    assert_lexicon_as_reference(Lexicon.build(VOCAB, shape([])), VOCAB, [])


def test_the_reference_lexicon_on_hand_checked_documents():
    df, cf, n = reference_lexicon(VOCAB, [["cat", "cat", "dog"], ["猫", "cat"], []])
    assert (df[VOCAB.index["cat"]], cf[VOCAB.index["cat"]], df[VOCAB.index["猫"]], sum(cf), n) == (2, 3, 1, 4, 3)
