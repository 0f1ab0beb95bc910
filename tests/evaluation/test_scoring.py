import numpy as np
import pytest
import torch

from ansel.models.registry import build_model
from ansel.evaluation import scoring
from ansel.evaluation.scoring import score, score_pairs, score_siamese_cached


def padded_texts(n, max_len, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, vocab, (n, max_len), generator=g)
    lengths = torch.randint(1, max_len + 1, (n,), generator=g)
    ids[torch.arange(max_len).unsqueeze(0) >= lengths.unsqueeze(1)] = 0
    return ids


@pytest.fixture
def pool():
    q_ids = padded_texts(7, 6, 40, seed=0)
    a_ids = padded_texts(15, 12, 40, seed=1)
    rng = np.random.default_rng(2)
    qi = rng.integers(0, 7, 60)   # repeated questions and answers, in no particular order
    ai = rng.integers(0, 15, 60)
    return q_ids, a_ids, qi, ai


@pytest.mark.parametrize("arch,hparams", [
    ("qa_cnn", {"embedding_dim": 8, "filters": 10, "kernel": 3}),
    ("qa_lstm", {"embedding_dim": 8, "hidden": 6}),
])
def test_cached_and_per_pair_scores_agree_in_pair_order(pool, arch, hparams):
    q_ids, a_ids, qi, ai = pool
    torch.manual_seed(0)
    model = build_model(arch, hparams, vocab_size=40).eval()
    cached = score_siamese_cached(model, q_ids.numpy(), a_ids.numpy(), qi, ai, batch_size=4)
    per_pair = score_pairs(model, q_ids, a_ids, qi, ai, batch_size=9)
    with torch.no_grad():
        direct = model(q_ids[qi], a_ids[ai]).numpy()
    assert cached.shape == (60,)
    np.testing.assert_allclose(cached, direct, atol=1e-5)
    np.testing.assert_allclose(per_pair, direct, atol=1e-5)
    assert np.unique(np.round(cached, 4)).size > 30   # scores differ across pairs: order matters


def test_cached_scoring_refuses_non_siamese_models(pool):
    q_ids, a_ids, qi, ai = pool
    model = build_model("ap_cnn", {"embedding_dim": 8, "filters": 6}, vocab_size=40).eval()
    with pytest.raises(TypeError, match="score_pairs"):
        score_siamese_cached(model, q_ids, a_ids, qi, ai, batch_size=4)
    assert score_pairs(model, q_ids, a_ids, qi, ai, batch_size=16).shape == (60,)


def test_mismatched_index_arrays_are_rejected(pool):
    q_ids, a_ids, qi, ai = pool
    model = build_model("qa_cnn", {"embedding_dim": 8, "filters": 10}, vocab_size=40).eval()
    with pytest.raises(ValueError, match="pairs"):
        score_pairs(model, q_ids, a_ids, qi, ai[:-1], batch_size=4)


MV_LSTM = {"embedding_dim": 8, "hidden": 5, "text1_maxlen": 6, "text2_maxlen": 12, "top_k": 10}
INTERACTION_MODELS = {
    "MV-LSTM": ("mv_lstm", MV_LSTM),
    "aMV-LSTM (Q)": ("mv_lstm", {**MV_LSTM, "attend_question": True}),
    "aMV-LSTM (A)": ("mv_lstm", {**MV_LSTM, "attend_answer": True}),
    "aMV-LSTM (Q+A)": ("mv_lstm", {**MV_LSTM, "attend_question": True, "attend_answer": True}),
    "MV-LSTM masked": ("mv_lstm", {**MV_LSTM, "mask_padding": True}),
    "MV-LSTM cosine": ("mv_lstm", {**MV_LSTM, "match": "cosine"}),
    "aMV-LSTM paper's variant": ("mv_lstm", {**MV_LSTM, "attend_question": True, "match": "cosine",
                                             "mask_padding": True}),
    # texts longer than the fixed widths too: truncated on both paths
    "MatchPyramid": ("match_pyramid", {"embedding_dim": 8, "text1_maxlen": 4, "text2_maxlen": 9,
                                       "kernel_count": 4, "dpool_size": [2, 3], "dropout": 0.0}),
}


@pytest.mark.parametrize("name", INTERACTION_MODELS)
def test_interaction_models_score_as_one_pair_at_a_time(pool, name):
    """Sides encoded once in batches of similar length, pairs interacted in batches: the scores
    of each pair's own forward pass, to float rounding."""
    q_ids, a_ids, qi, ai = pool
    a_ids = a_ids.clone()
    a_ids[3] = 0  # an empty answer among ragged, padded ones
    arch, hparams = INTERACTION_MODELS[name]
    torch.manual_seed(0)
    model = build_model(arch, hparams, vocab_size=40)
    cached = score(model, q_ids.numpy(), a_ids.numpy(), qi, ai, batch_size=8)
    assert model.training  # score leaves the mode as it found it
    alone = score_pairs(model.eval(), q_ids, a_ids, qi, ai, batch_size=1)
    assert cached.shape == (60,) and cached.dtype == np.float32
    torch.testing.assert_close(torch.from_numpy(cached), torch.from_numpy(alone), rtol=1e-5, atol=1e-7)
    assert np.unique(cached).size > 30   # scores differ across pairs: order matters


def test_interaction_scoring_encodes_each_distinct_text_once_per_block(pool, monkeypatch):
    q_ids, a_ids, qi, ai = pool
    qi = np.sort(qi)  # each question beside its candidates, as a split's candidate table lists them
    model = build_model("mv_lstm", MV_LSTM, vocab_size=40)
    encoded = {"q": 0, "a": 0}
    for side, method in (("q", "encode_question_side"), ("a", "encode_answer_side")):
        def counting(ids, side=side, encode=getattr(model, method)):
            encoded[side] += len(ids)
            return encode(ids)
        monkeypatch.setattr(model, method, counting)
    score(model, q_ids, a_ids, qi, ai, batch_size=4)
    block = 4 * scoring._BLOCK_BATCHES
    blocks = range(0, len(qi), block)
    assert encoded["q"] == sum(len(np.unique(qi[i:i + block])) for i in blocks) < len(qi)
    assert encoded["a"] == sum(len(np.unique(ai[i:i + block])) for i in blocks) < len(ai)


def test_interaction_scoring_refuses_other_models(pool):
    q_ids, a_ids, qi, ai = pool
    model = build_model("ap_cnn", {"embedding_dim": 8, "filters": 6}, vocab_size=40).eval()
    with pytest.raises(TypeError, match="score_pairs"):
        scoring.score_interaction_cached(model, q_ids, a_ids, qi, ai, batch_size=4)


PAIR_MODELS = {
    "AP-CNN": ("ap_cnn", {"embedding_dim": 8, "filters": 6, "kernel": 3}),
    "AP-biLSTM": ("ap_bilstm", {"embedding_dim": 8, "hidden": 5}),
}


@pytest.mark.parametrize("name", PAIR_MODELS)
def test_pair_models_encode_each_text_once_and_score_as_one_pair_at_a_time(pool, name, monkeypatch):
    """Attentive pooling reads both sides, but each side's encoder states are its own: scoring
    encodes a batch's distinct texts once and compares the pairs on them, to the scores of each
    pair's own forward pass."""
    q_ids, a_ids, qi, ai = pool
    a_ids = a_ids.clone()
    a_ids[3] = 0  # an empty answer among ragged, padded ones
    qi = np.sort(qi)  # each question beside its candidates, as sampled-max and a split's table list them
    arch, hparams = PAIR_MODELS[name]
    torch.manual_seed(0)
    model = build_model(arch, hparams, vocab_size=40)
    alone = score_pairs(model.eval(), q_ids, a_ids, qi, ai, batch_size=1)
    model.train()
    encoded, encode = [], model.encode_side
    monkeypatch.setattr(model, "encode_side", lambda ids, answer=False: encoded.append(len(ids)) or encode(ids, answer))
    cached = score(model, q_ids.numpy(), a_ids.numpy(), qi, ai, batch_size=16)
    assert model.training
    torch.testing.assert_close(torch.from_numpy(cached), torch.from_numpy(alone), rtol=1e-5, atol=1e-6)
    assert np.unique(cached).size > 30
    batches = range(0, len(qi), 16)
    assert sum(encoded) == sum(len(np.unique(qi[i:i + 16])) + len(np.unique(ai[i:i + 16])) for i in batches) < 2 * len(qi)
