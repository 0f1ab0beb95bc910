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


def test_ansel_stats_writes_the_table_in_the_format_its_file_names(tmp_path):
    from ansel import cli

    df = pd.DataFrame({"split": ["train", "dev"], "question": ["a b", "c"], "answer": ["x", "y z"], "label": [1, 1]})
    processed = tmp_path / "processed"
    from_pairs("t", df, "whitespace").save(processed)
    tables = {}
    for suffix in (".csv", ".json", ".md"):
        out = tmp_path / f"stats{suffix}"
        cli.main(["stats", "--processed", str(processed), "--out", str(out)])
        tables[suffix] = out.read_text()
    csv = pd.read_csv(tmp_path / "stats.csv")
    assert list(csv.columns) == ["split", *STATISTICS] and list(csv.split) == ["dev", "train", "all"]
    pd.testing.assert_frame_equal(pd.read_json(tmp_path / "stats.json"), csv, check_dtype=False)
    assert tables[".md"].splitlines()[0].split("|")[1].strip() == "split"
    with pytest.raises(SystemExit, match=r"ansel stats: --out .*stats.txt: the table is written as .csv, .json, .md"):
        cli.main(["stats", "--processed", str(processed), "--out", str(tmp_path / "stats.txt")])
    assert not (tmp_path / "stats.txt").exists()
