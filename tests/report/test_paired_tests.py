import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ansel.evaluation.metrics import per_question, rank, ranking_metrics
from ansel.report.paired_tests import RESAMPLES, SEED, _null_means, holm, paired_tests, question_values, randomisation_p


def values(seed: int, n: int, shift: float = 0.0) -> pd.Series:
    """Per-question values in [0, 1] of n questions q0..q{n-1}."""
    rng = np.random.default_rng(seed)
    return pd.Series(np.clip(rng.beta(2, 2, n) + shift, 0, 1), index=[f"q{i}" for i in range(n)])


def test_the_t_test_is_scipys_paired_t_test_and_ranxs():
    from ranx.statistical_tests import paired_student_t_test

    a, b = values(1, 60, shift=0.05), values(2, 60)
    result = paired_tests(a, b)
    assert result["n"] == 60 and result["difference"] == pytest.approx((a - b).mean())
    assert result["t"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)
    assert result["t"] == pytest.approx(paired_student_t_test(a.to_numpy(), b.to_numpy())[0], rel=1e-12)
    d = (a - b).to_numpy()  # by hand: t = mean / (sd / sqrt(n)), two-sided
    t = d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))
    assert result["t"] == pytest.approx(2 * stats.t.sf(abs(t), len(d) - 1))


def test_the_randomisation_test_is_exact_on_few_questions():
    """8 questions: all 2^8 sign flips of the differences, counted by hand."""
    a, b = values(3, 8, shift=0.2), values(4, 8)
    d = (a - b).to_numpy()
    flips = np.array(list(itertools.product([-1.0, 1.0], repeat=len(d))))
    exact = np.mean(np.abs((flips * d).mean(axis=1)) >= abs(d.mean()) - 1e-12)
    assert paired_tests(a, b)["randomisation"] == pytest.approx(exact)


@pytest.mark.parametrize("n", [14, 61, 400])
@pytest.mark.parametrize("kind", ["continuous", "ties"])
def test_the_randomisation_test_is_scipys_to_the_bit(n, kind):
    """The same null distribution and p value as scipy's permutation_test draws from the same seed."""
    rng = np.random.default_rng(n)
    d = rng.normal(size=n) if kind == "continuous" else rng.choice([-1.0, 0.0, 0.0, 0.5, 1 / 3], size=n)
    theirs = stats.permutation_test(
        (d,),
        np.mean,
        permutation_type="samples",
        vectorized=True,
        n_resamples=RESAMPLES,
        rng=np.random.default_rng(SEED),
    )
    np.testing.assert_array_equal(_null_means(d), theirs.null_distribution)
    assert randomisation_p(d) == theirs.pvalue


def test_the_randomisation_test_agrees_with_ranxs_fisher_test():
    from ranx.statistical_tests import fisher_randomization_test

    a, b = values(5, 80), values(6, 80)
    ours = paired_tests(a, b)["randomisation"]
    theirs, _ = fisher_randomization_test(a.to_numpy(), b.to_numpy(), 20000, 0.05, 7)
    assert 0.01 < ours < 0.5  # a p value where Monte Carlo error shows
    assert ours == pytest.approx(theirs, abs=0.015)  # both estimate the same exact p


def test_pairs_are_the_questions_both_runs_score_and_no_difference_is_p_1():
    a, b = values(7, 30), values(8, 30)
    assert paired_tests(a, b.drop(["q0", "q1"]))["n"] == 28
    assert paired_tests(a, a.copy()) == {"n": 30, "difference": 0.0, "t": 1.0, "randomisation": 1.0}
    with pytest.raises(ValueError, match="1 question"):
        paired_tests(a.iloc[:1], b)


def test_holm_by_hand():
    # sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, 0.04 * 1 = 0.04 -> kept at 0.06 (monotone)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped
    assert holm([0.02]) == pytest.approx([0.02]) and len(holm([])) == 0


def scored():
    """Three questions; q3 has no positive; a and b tie on the score in q1."""
    return pd.DataFrame(
        [
            ("q1", "a", 1, 0.5),
            ("q1", "b", 0, 0.5),
            ("q1", "c", 1, 0.1),
            ("q2", "d", 0, 0.9),
            ("q2", "e", 1, 0.2),
            ("q3", "f", 0, 0.3),
        ],
        columns=["qid", "aid", "label", "score"],
    )


def test_question_values_follow_the_written_scores_and_the_no_positive_protocol():
    ranked = rank(scored())[["qid", "aid", "rank", "score"]]  # what a run.trec holds
    labels = scored()[["qid", "aid", "label"]]
    dropped = question_values(ranked, labels, "drop", "run.trec")
    expected = per_question(scored())
    assert list(dropped.index) == ["q1", "q2"]
    pd.testing.assert_frame_equal(dropped, expected.loc[["q1", "q2"]])
    assert dropped.MAP.mean() == pytest.approx(ranking_metrics(scored())["MAP"])  # metrics.json's number
    assert question_values(ranked, labels, "zero", "run.trec").loc["q3", "MAP"] == 0.0
    # the scores decide, with trec_eval's tie rule (b before a in q1), whatever the rank column says
    assert dropped.loc["q1", "P@1"] == 0.0
    swapped = ranked.assign(rank=ranked["rank"].where(ranked.qid != "q1", ranked["rank"].map({1: 2, 2: 1, 3: 3})))
    assert question_values(swapped, labels, "drop", "run.trec").loc["q1", "P@1"] == 0.0


def test_a_ranked_candidate_without_a_label_is_named():
    ranked = rank(scored())[["qid", "aid", "rank", "score"]]
    with pytest.raises(KeyError, match="results/x/run.trec: 1 ranked candidates .* question q3 answer f"):
        question_values(ranked, scored()[["qid", "aid", "label"]].iloc[:5], "drop", "results/x/run.trec")


def test_the_seed_bootstrap_carries_the_spread_between_seeds():
    """Two seeds of five far better, three no better: the pooled test over questions calls it
    significant, the bootstrap over questions and seeds does not; five seeds alike, both do."""
    import numpy as np
    import pandas as pd

    from ansel.report.paired_tests import paired_tests, seed_bootstrap

    rng = np.random.default_rng(1)
    qids = [f"q{i}" for i in range(200)]
    base = pd.DataFrame({s: rng.uniform(0.3, 0.7, 200) for s in range(1, 6)}, index=qids)
    for offsets, significant in (([0.3, 0.3, 0.0, 0.0, -0.1], False), ([0.1, 0.12, 0.09, 0.11, 0.1], True)):
        better = pd.DataFrame(
            {s: base[s] + off + rng.normal(0, 0.02, 200) for s, off in zip(base, offsets)}, index=qids
        )
        pooled = paired_tests(better.mean(axis=1), base.mean(axis=1))
        boot = seed_bootstrap(better, base)
        assert pooled["t"] < 1e-6 and boot["n"] == 200
        assert (boot["bootstrap"] < 0.05) is significant, boot
    assert seed_bootstrap(base, base)["bootstrap"] > 0.5
