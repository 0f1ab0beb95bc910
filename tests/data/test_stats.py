from __future__ import annotations

import pandas as pd
import pytest

from ansel.data.preprocess import from_pairs
from ansel.data.stats import STATISTICS, dataset_stats


def test_dataset_stats_counts_and_lengths():
    df = pd.DataFrame(
        {
            "split": ["train", "train", "train", "dev", "dev"],
            "question": ["a b c", "a b c", "d e", "f", "f"],
            "answer": ["x y", "z", "x y", "w w w w", "z"],
            "label": [1, 0, 0, 0, 0],
        }
    )
    st = dataset_stats(from_pairs("t", df, "whitespace")).set_index("split")
    assert list(st.columns) == STATISTICS
    train = st.loc["train"]
    assert (train.questions, train.pairs, train.positives, train.q_with_positive, train.q_with_both) == (2, 3, 1, 1, 1)
    assert train.candidates_per_q == pytest.approx(1.5)
    assert train.avg_q_len == pytest.approx(2.5) and train.avg_a_len == pytest.approx(1.5)
    assert train.avg_pos_a_len == pytest.approx(2.0)
    assert st.loc["dev", "q_with_positive"] == 0 and st.loc["dev", "vocabulary"] == 3
    assert st.loc["all", "vocabulary"] == 10 and st.loc["all", "pairs"] == 5 and st.loc["all", "negatives"] == 4
