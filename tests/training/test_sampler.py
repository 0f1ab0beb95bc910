import numpy as np
import pytest

from ansel.training.sampler import NegativeSampler


def test_pool_draws_from_each_questions_own_negatives_in_input_order():
    # questions out of order, interleaved; question 9 has no negative, 4 no positive
    qi = np.array([3, 7, 3, 9, 7, 3, 4, 7, 4])
    ai = np.array([10, 20, 11, 30, 21, 12, 40, 22, 41])
    labels = np.array([0, 1, 1, 1, 0, 0, 0, 0, 0])
    sampler = NegativeSampler(qi, ai, labels, "pool")
    assert sampler.positives == {3: {11}, 7: {20}, 9: {30}}
    assert {q: a.tolist() for q, a in sampler.pool.items()} == {3: [10, 12], 4: [40, 41], 7: [21, 22]}
    batch = np.array([3, 7, 4, 3])
    drawn = sampler.sample(batch, np.random.default_rng(5))
    rng = np.random.default_rng(5)  # one draw per row, from the pool as given
    assert drawn.tolist() == [rng.choice(sampler.pool[q]) for q in batch.tolist()]
    # a question without negatives gets a random answer that is not its positive
    assert sampler.sample(np.array([9] * 20), np.random.default_rng(0)).tolist().count(30) == 0


def test_sampled_max_from_candidates_draws_only_the_questions_own_negatives(monkeypatch):
    from ansel.evaluation import scoring

    qi = np.array([3, 3, 3, 7, 7, 9])
    ai = np.array([10, 11, 12, 20, 21, 30])
    labels = np.array([1, 0, 0, 1, 0, 1])  # 3's negatives 11, 12; 7's 21; 9 has none
    # a pair scores its answer id: sampled_max must pick the largest id it drew
    monkeypatch.setattr(scoring, "score", lambda model, q_ids, a_ids, q, a: np.asarray(a, dtype=float))
    sampler = NegativeSampler(qi, ai, labels, "sampled_max", n=4, source="candidates")
    for seed in range(5):
        drawn = sampler.sample(np.array([3, 7, 3]), np.random.default_rng(seed))
        rng = np.random.default_rng(seed)  # replay: n draws with replacement from each own pool
        replay = [rng.choice(sampler.pool[q], 4).max() for q in (3, 7, 3)]
        assert drawn.tolist() == replay and set(drawn.tolist()) <= {11, 12, 21}
    # no labelled negative: random answers that are not the question's positive, as source answers
    assert 30 not in sampler.sample(np.array([9] * 20), np.random.default_rng(0)).tolist()
    answers = NegativeSampler(qi, ai, labels, "sampled_max", n=4)  # the paper's: the whole answer set
    assert {int(a) for a in answers.sample(np.array([3] * 50), np.random.default_rng(1))} - {11, 12}


def test_unknown_negative_source_is_refused_naming_the_key():
    with pytest.raises(ValueError, match="train.negatives.source"):
        NegativeSampler(np.array([1]), np.array([2]), np.array([1]), "sampled_max", source="dev")


def test_a_source_for_a_strategy_that_draws_no_n_is_refused_naming_the_key():
    from ansel.config import ConfigError
    from ansel.settings import parse
    from ansel.training.config import NegativesConfig

    assert parse(NegativesConfig, {"strategy": "sampled_max", "n": 5, "source": "candidates"}, "train.negatives").source == "candidates"
    with pytest.raises(ConfigError, match=r"train\.negatives\.source: 'candidates' is where sampled_max draws"):
        parse(NegativesConfig, {"strategy": "pool", "source": "candidates"}, "train.negatives")
