import numpy as np

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
