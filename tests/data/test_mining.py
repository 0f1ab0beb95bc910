from __future__ import annotations

import numpy as np
import pandas as pd

from ansel.data import mining
from ansel.data.canonical import Dataset
from ansel.data.preprocess import add_negatives, add_pools

CORPUS = [
    "the cat sat on the mat".split(),  # 0
    "a cat and a dog".split(),  # 1
    "dogs chase cats in the park".split(),  # 2
    "stock markets fell sharply".split(),  # 3
    "the cat chased the dog home".split(),  # 4
    "interest rates and markets".split(),  # 5
]


def test_bm25_top_k_ranks_lexical_matches_first():
    top = mining.bm25_top_k([["cat", "dog"], ["markets"]], CORPUS, k=3)
    assert set(top[0][:2]) <= {1, 4} and set(top[1][:2]) == {3, 5}


def test_bm25_negatives_exclude_positives_stay_in_top_k_and_are_seeded():
    queries, positives = [["cat", "dog"], ["markets"]], [{4}, {3}]
    a = mining.bm25_negatives(queries, CORPUS, positives, k=3, n=2, seed=7)
    b = mining.bm25_negatives(queries, CORPUS, positives, k=3, n=2, seed=7)
    top = mining.bm25_top_k(queries, CORPUS, k=3)
    assert a == b
    for picks, pos, row in zip(a, positives, top):
        assert len(picks) == 2 and not set(picks) & pos and set(picks) <= set(row)
    seeds = {tuple(map(tuple, mining.bm25_negatives(queries, CORPUS, positives, k=6, n=2, seed=s))) for s in range(10)}
    assert len(seeds) > 1  # the seed matters


def test_bm25_negatives_for_query_without_known_tokens():
    picks = mining.bm25_negatives([["zzz"]], CORPUS, [{0}], k=10, n=3, seed=0)
    assert len(picks[0]) == 3 and 0 not in picks[0]


def test_other_category_negatives_differ_in_category():
    answer_cats = ["law", "law", "med", "med", "tax"]
    picks = mining.other_category_negatives(["law", "med", "tax", "law"], answer_cats, seed=1)
    assert [answer_cats[i] != c for i, c in zip(picks, ["law", "med", "tax", "law"])] == [True] * 4


def test_random_pools_fill_to_size_without_positives():
    pools = mining.random_pools([{0, 1}, {5}], n_answers=50, size=10, seed=3)
    assert [len(p) for p in pools] == [8, 9]
    assert not {0, 1} & set(pools[0]) and 5 not in pools[1]


def _dataset() -> Dataset:
    questions = pd.DataFrame(
        {
            "qid": ["q1", "q2", "q3"],
            "text": ["", "", ""],
            "tokens": [["cat", "dog"], ["markets"], ["park"]],
            "category": ["a", "b", "a"],
        }
    )
    answers = pd.DataFrame(
        {"aid": [f"a{i}" for i in range(len(CORPUS))], "text": [" ".join(t) for t in CORPUS], "tokens": CORPUS}
    )
    train = pd.DataFrame({"qid": ["q1", "q2"], "aid": ["a4", "a3"], "label": [1, 1]})
    test = pd.DataFrame({"qid": ["q3"], "aid": ["a2"], "label": [1]})
    return Dataset("toy", questions, answers, {"train": train, "test": test})


def test_add_negatives_bm25_and_other_category_on_tables():
    ds = add_negatives(_dataset(), "bm25", splits=["train"], k=3, n=2, seed=0)
    train = ds.validate().splits["train"]
    assert train.groupby("qid").label.agg(["size", "sum"]).values.tolist() == [[3, 1], [3, 1]]
    ds = add_negatives(_dataset(), "other_category", splits=["train"], seed=0)
    train = ds.validate().splits["train"]
    negs = train[train.label == 0].set_index("qid").aid
    # q1 (category a): its negative answers a question of category b (a3 answers q2)
    assert negs["q1"] == "a3" and negs["q2"] in {"a4", "a2"}


def test_add_pools_reaches_size():
    ds = add_pools(_dataset(), size=5, splits=["test"], seed=0).validate()
    test = ds.splits["test"]
    assert len(test) == 5 and test.label.sum() == 1 and test.aid.is_unique
    assert np.all(test.qid == "q3")
