import numpy as np
import pytest
import torch

from ansel.models.registry import build_model
from ansel.evaluation.scoring import score_pairs, score_siamese_cached


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


@pytest.mark.parametrize("hparams", [{}, {"attend_question": True, "match": "cosine", "mask_padding": True}])
def test_mv_lstm_scores_each_run_of_a_question_once_and_as_one_pair_at_a_time(pool, hparams):
    """Scoring batches share a question's BiLSTM states across its consecutive candidates: the
    scores are those of each pair alone (to BLAS rounding of other batch sizes)."""
    q_ids, a_ids, qi, ai = pool
    qi = np.sort(qi)  # each question beside its candidates, as a split's candidate table lists them
    torch.manual_seed(0)
    model = build_model("mv_lstm", {"embedding_dim": 8, "hidden": 5, "text1_maxlen": 6, "text2_maxlen": 12,
                                    "top_k": 10, **hparams}, vocab_size=40).eval()
    encoded = []  # question rows the question BiLSTM reads per call (packed: the first step's batch)
    model.lstm_q.register_forward_hook(lambda module, args, out: encoded.append(
        int(args[0].batch_sizes[0]) if hasattr(args[0], "batch_sizes") else args[0].size(0)))
    batched = score_pairs(model, q_ids, a_ids, qi, ai, batch_size=25)
    assert sum(encoded) == sum(len(np.unique(qi[i:i + 25])) for i in range(0, len(qi), 25)) < len(qi)
    with torch.no_grad():
        alone = np.concatenate([model(q_ids[qi[i:i + 1]], a_ids[ai[i:i + 1]]).numpy() for i in range(len(qi))])
    np.testing.assert_allclose(batched, alone, rtol=0, atol=1e-6)
    assert np.unique(np.round(batched, 4)).size > 30
