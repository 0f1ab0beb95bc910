import numpy as np
import pytest
import torch

from ansel.evaluation.scoring import score_pairs
from ansel.models.registry import build_model
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
    monkeypatch.setattr(scoring, "score", lambda model, q_ids, a_ids, q, a, **batch: np.asarray(a, dtype=float))
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

    assert (
        parse(NegativesConfig, {"strategy": "sampled_max", "n": 5, "source": "candidates"}, "train.negatives").source
        == "candidates"
    )
    with pytest.raises(ConfigError, match=r"train\.negatives\.source: 'candidates' is where sampled_max draws"):
        parse(NegativesConfig, {"strategy": "pool", "source": "candidates"}, "train.negatives")


# one of each family the scoring path tells apart: attentive pooling, siamese, interaction
SAMPLED_MAX_MODELS = {
    "AP-CNN": ("ap_cnn", {"embedding_dim": 8, "filters": 6, "kernel": 3}, {"encode_side": None}),
    "QA-CNN": (
        "qa_cnn",
        {"embedding_dim": 8, "filters": 10, "kernel": 3},
        {"encode_question": "q", "encode_answer": "a"},
    ),
    "MV-LSTM": (
        "mv_lstm",
        {"embedding_dim": 8, "hidden": 5, "text1_maxlen": 6, "text2_maxlen": 12, "top_k": 10},
        {"encode_question_side": "q", "encode_answer_side": "a"},
    ),
}


@pytest.mark.parametrize("one_call", [True, False])
@pytest.mark.parametrize("name", SAMPLED_MAX_MODELS)
def test_sampled_max_scores_a_batch_in_one_encoder_call_a_side_and_picks_the_best(name, one_call, monkeypatch):
    """The batch's B x n candidates are scored at once (one encoder call per side, not ~16 small
    ones), or on the CPU in scoring's length-sorted batches of 256, and the negative is the
    candidate whose own forward pass scores highest."""
    g = torch.Generator().manual_seed(0)
    q_ids = torch.randint(1, 40, (8, 6), generator=g)
    a_ids = torch.randint(1, 40, (2000, 12), generator=g)
    a_ids[torch.arange(12) >= torch.randint(1, 13, (2000, 1), generator=g)] = 0  # ragged answers
    qi, ai = np.repeat(np.arange(8), 250), np.random.default_rng(1).permutation(2000)
    labels = (np.arange(2000) % 250 == 0).astype(int)  # each question's first answer its positive
    sampler = NegativeSampler(qi, ai, labels, "sampled_max", n=50, one_call=one_call)
    arch, hparams, encoders = SAMPLED_MAX_MODELS[name]
    torch.manual_seed(0)
    model = build_model(arch, hparams, vocab_size=40)
    q_batch = np.array([0, 3, 3, 5, 7, 1, 2, 6])  # 400 candidates: more than the default batch of 256
    rng = np.random.default_rng(7)  # replay the draws: the candidates each question's row is offered
    cand = np.stack([sampler._draw(int(q), 50, rng) for q in q_batch])
    alone = score_pairs(model.eval(), q_ids, a_ids, np.repeat(q_batch, 50), cand.reshape(-1), batch_size=1)
    model.train()

    calls = {"q": [], "a": []}
    for method, side in encoders.items():

        def counting(ids, *args, side=side, encode=getattr(model, method), **kwargs):
            calls["a" if side == "a" or kwargs.get("answer") else "q"].append(len(ids))
            return encode(ids, *args, **kwargs)

        monkeypatch.setattr(model, method, counting)
    chosen = sampler.sample(q_batch, np.random.default_rng(7), model, q_ids.numpy(), a_ids.numpy())
    assert model.training
    distinct = len(np.unique(cand))
    assert calls == {"q": [len(np.unique(q_batch))], "a": [distinct] if one_call else [256, distinct - 256]}
    assert np.array_equal(chosen, cand[np.arange(8), alone.reshape(8, 50).argmax(1)])
    assert len(set(chosen.tolist())) > 3  # the choice depends on the question and its draws
