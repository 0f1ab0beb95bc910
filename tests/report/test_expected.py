"""Rows computed from the candidate pools (``expected: random``): GGSA Table 6's Random Guess
(issue 32, item 8)."""

import itertools
import json
from math import comb

import numpy as np
import pandas as pd
import pytest

from ansel.data.canonical import Dataset
from ansel.evaluation.config import METRICS
from ansel.evaluation.metrics import per_question
from ansel.report.expected import expected_random, expected_split_metric
from ansel.report.notes import expected_notes
from ansel.report.tables import aggregate, published_lookup, render
from ansel.specs import parse_table
from ansel.table_kinds import kind_of


def test_five_candidates_one_positive_by_hand():
    e = expected_random(5, 1)
    assert e["MRR"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 5) == pytest.approx(0.456667, abs=1e-6)
    assert round(100 * e["MRR"], 2) == 45.67 and e["P@1"] == pytest.approx(0.2)
    # with one positive, AP is the reciprocal rank
    assert e["MAP"] == pytest.approx(e["MRR"])
    # 4 candidates, 2 positives: the first positive is at rank 1, 2 or 3 with probability 3/6, 2/6, 1/6
    assert expected_random(4, 2)["MRR"] == pytest.approx(3 / 6 + (1 / 2) * 2 / 6 + (1 / 3) * 1 / 6)
    assert expected_random(4, 2)["P@1"] == pytest.approx(0.5)
    assert expected_random(3, 3)["MRR"] == expected_random(3, 3)["MAP"] == 1.0
    assert expected_random(4, 0) == dict.fromkeys(METRICS, 0.0)
    for n in range(1, 30):  # the formula: sum_{r=1}^{n-k+1} (1/r) C(n-r, k-1) / C(n, k)
        for k in range(1, n + 1):
            mrr = sum(comb(n - r, k - 1) / comb(n, k) / r for r in range(1, n - k + 2))
            assert (
                expected_random(n, k)["MRR"] == pytest.approx(mrr, abs=1e-12) and expected_random(n, k)["P@1"] == k / n
            )
    with pytest.raises(ValueError, match="n=2, k=3"):
        expected_random(2, 3)


def test_the_expectation_is_the_mean_over_every_placement_of_the_positives_as_the_evaluation_scores_it():
    """Every set of positions for the k positives is equally likely under a uniform permutation:
    their mean under ansel.evaluation.metrics is the closed form, for every metric."""
    for n in range(1, 8):
        for k in range(0, n + 1):
            rows = [
                (f"q{i}", f"a{j}", int(j in placed), float(n - j))  # candidate j at rank j + 1
                for i, placed in enumerate(itertools.combinations(range(n), k))
                for j in range(n)
            ]
            scored = pd.DataFrame(rows, columns=["qid", "aid", "label", "score"])
            brute = per_question(scored)[METRICS].mean()
            assert expected_random(n, k) == pytest.approx(brute.to_dict(), abs=1e-12), (n, k)


def test_a_split_averages_its_questions_pools_dropping_or_zeroing_those_without_a_positive():
    cands = pd.DataFrame(
        {"qid": ["a"] * 5 + ["b"] * 4 + ["c"] * 3, "label": [1, 0, 0, 0, 0] + [1, 1, 0, 0] + [0, 0, 0]}
    )
    mrr_a, mrr_b = 137 / 300, 3 / 6 + 1 / 6 + 1 / 18
    assert expected_split_metric(cands, "MRR") == pytest.approx((mrr_a + mrr_b) / 2)
    assert expected_split_metric(cands, "MRR", "zero") == pytest.approx((mrr_a + mrr_b) / 3)
    assert expected_split_metric(cands, "P@1") == pytest.approx((0.2 + 0.5) / 2)
    with pytest.raises(KeyError, match="accuracy"):
        expected_split_metric(cands, "accuracy")


def _save_pools(root, name, pools):
    """A processed dataset at root/data/processed/<name> whose test split has the given pools
    ({qid: labels})."""
    qids = list(pools)
    rows = [(q, f"{q}-{j}", label) for q, labels in pools.items() for j, label in enumerate(labels)]
    Dataset(
        name=name,
        questions=pd.DataFrame({"qid": qids, "text": qids, "tokens": [[q] for q in qids], "category": None}),
        answers=pd.DataFrame({"aid": [r[1] for r in rows], "text": "x", "tokens": [["x"]] * len(rows)}),
        splits={"test": pd.DataFrame(rows, columns=["qid", "aid", "label"])},
    ).save(root / "data/processed" / name)


TABLE6 = {
    "id": "table6",
    "rows": [{"label": "Random Guess", "model": None, "expected": "random"}, {"label": "NTN-LSTM", "model": None}],
    "columns": [
        {"dataset": "yahooqa", "split": "test", "metric": "P@1"},
        {"dataset": "yahooqa", "split": "test", "metric": "MRR"},
    ],
}


def test_random_guess_shows_the_computed_expectation_beside_the_papers_print(tmp_path, monkeypatch, repo_root):
    """5 candidates with 1 positive per question: ours 20.00 / 45.67 (computed), published the
    paper's 20.00 / 45.86."""
    monkeypatch.chdir(tmp_path)
    _save_pools(tmp_path, "yahoo_syn", {f"q{i}": [int(j == i % 5) for j in range(5)] for i in range(7)})
    config = {"seeds": 2, "datasets": {"yahoo_syn": {"source": "yahooqa"}}, "dataset_alias": {"yahooqa": "yahoo_syn"}}
    published = published_lookup(repo_root / "workflow/papers/published_results.csv", "ggsa", "table6")
    table = parse_table(config, "ggsa", TABLE6)
    cells = aggregate(config, table, published).set_index(["row", "metric"])
    guess = cells.loc[("Random Guess", "MRR")]
    assert guess["mean"] == pytest.approx(100 * 137 / 300) and guess["n"] == 1 and guess["published"] == 45.86
    assert cells.loc[("Random Guess", "P@1"), "mean"] == pytest.approx(20.0)
    assert guess["run_dataset"] == "yahoo_syn" and not guess["differs"]  # 0.19 apart: within a point
    assert cells.loc[("NTN-LSTM", "MRR"), "n"] == 0  # a row kept as published stays so
    render(cells.reset_index(), table, [], tmp_path / "out/table6")
    md = (tmp_path / "out/table6.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| Random Guess"))
    assert [c.strip() for c in row.split("|")[2:-1]] == ["20.00", "20.00", "45.67", "45.86"]
    # the table reads the pools it computes from
    assert "data/processed/yahoo_syn" in kind_of(table).inputs(config, table)


def test_the_pools_are_each_questions_own_and_the_evaluations_sample(tmp_path, monkeypatch):
    """Questions with 2 positives, 3 or 6 candidates, none positive (dropped); a dataset scored on a
    sample of its questions is computed on the same draw."""
    monkeypatch.chdir(tmp_path)
    pools = {"a": [1, 0, 0, 0, 0], "b": [0, 1, 1, 0], "c": [0, 0, 1], "d": [0, 0, 0, 0, 0, 1], "e": [0, 0]}
    _save_pools(tmp_path, "syn", pools)
    config = {"seeds": 1, "datasets": {"syn": {"source": "syn"}}, "dataset_alias": {"yahooqa": "syn"}}
    table = parse_table(config, "ggsa", TABLE6)
    cells = aggregate(config, table, {}).set_index(["row", "metric"])
    by_q = {q: expected_random(len(labels), sum(labels)) for q, labels in pools.items() if sum(labels)}
    assert cells.loc[("Random Guess", "MRR"), "mean"] == pytest.approx(np.mean([e["MRR"] for e in by_q.values()]))
    assert cells.loc[("Random Guess", "P@1"), "mean"] == pytest.approx(np.mean([0.2, 0.5, 1 / 3, 1 / 6]))

    note = expected_notes(config, table)
    assert len(note) == 1 and note[0].startswith("Random Guess (ours) is computed, not run")
    assert note[0].endswith(
        "syn test: 4 questions scored (1 with 3 candidates / 1 positive, "
        "1 with 4 candidates / 2 positives, 1 with 5 candidates / 1 positive, "
        "1 with 6 candidates / 1 positive)"
    )

    sampled = {**config, "datasets": {"syn": {"source": "syn", "eval": {"sample_questions": 2, "sample_seed": 3}}}}
    kept = np.random.default_rng(3).choice(np.sort(list(pools)), 2, replace=False)  # RunData.sample_questions
    cells = aggregate(sampled, table, {}).set_index(["row", "metric"])
    assert cells.loc[("Random Guess", "MRR"), "mean"] == pytest.approx(
        np.mean([by_q[q]["MRR"] for q in kept if q in by_q])
    )


def test_ggsa_table6_computes_random_guess(repo_root, monkeypatch):
    from ansel.config import load_paper

    monkeypatch.setenv("ANSEL_ROOT", str(repo_root))
    spec = load_paper("ggsa")  # validated against the schema, which knows `expected`
    table = next(t for t in spec["tables"] if t["id"] == "table6")
    row = next(r for r in table["rows"] if r["label"] == "Random Guess")
    assert row.get("expected") == "random" and not row.get("model")
    assert json.dumps(table["notes"]).count("45.67") == 1
