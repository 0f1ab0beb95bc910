import pytest
import torch

from ansel.evaluation.scoring import score_cached, score_pairs
from ansel.models import build_model
from tests.models.fitting import assert_ranks_positives_first
from tests.models.ids import padded_ids

ARCHS = {
    "qa_lstm": {"embedding_dim": 8, "hidden": 6},
    "qa_bilstm": {"embedding_dim": 8, "hidden": 6},  # masked (the AP paper's row); as coded: test_mtas.py
    "qa_cnn": {"embedding_dim": 8, "filters": 12, "kernel": 3},
}


@pytest.mark.parametrize("arch", ARCHS)
def test_shapes_and_cosine_range(arch):
    m = build_model(arch, ARCHS[arch], vocab_size=30)
    q, a = torch.randint(1, 30, (4, 5)), torch.randint(1, 30, (4, 9))
    assert m.encode_question(q).shape == (4, m.encode_answer(a).shape[1])
    s = m(q, a)
    assert s.shape == (4,) and bool(((s >= -1 - 1e-6) & (s <= 1 + 1e-6)).all())


@pytest.mark.parametrize("arch", ARCHS)
def test_padding_does_not_change_encoding(arch):
    m = build_model(arch, ARCHS[arch], vocab_size=30).eval()
    rows = [[3, 4, 5], [6, 7, 8, 9, 10, 11]]
    tight, loose = padded_ids(rows, 6), padded_ids(rows, 15)
    assert torch.allclose(m.encode_answer(tight), m.encode_answer(loose), atol=1e-6)
    # a row's encoding does not depend on its batch-mates
    alone = m.encode_answer(padded_ids(rows[:1], 3))
    assert torch.allclose(alone[0], m.encode_answer(tight)[0], atol=1e-6)


@pytest.mark.parametrize("arch", ARCHS)
def test_gradient_reaches_every_parameter(arch):
    m = build_model(arch, ARCHS[arch], vocab_size=30)
    q, a = torch.randint(1, 30, (4, 5)), torch.randint(1, 30, (4, 7))
    m(q, a).sum().backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


@pytest.mark.parametrize("arch", ARCHS)
def test_overfits_tiny_triples(arch):
    torch.manual_seed(0)
    m = build_model(arch, ARCHS[arch], vocab_size=40)
    q = torch.randint(1, 40, (16, 4))
    pos, neg = torch.randint(1, 40, (16, 6)), torch.randint(1, 40, (16, 6))
    assert_ranks_positives_first(m, q, pos, neg, margin=0.2, steps=150, lr=0.02)


@pytest.mark.parametrize("arch", ARCHS)
def test_cached_scoring_equals_pairwise(arch):
    m = build_model(arch, ARCHS[arch], vocab_size=30).eval()
    q_ids = padded_ids([[1, 2], [3, 4, 5, 6], [7]], 6).numpy()
    a_ids = padded_ids([[8, 9, 10], [11], [12, 13, 14, 15, 16], [2, 3]], 8).numpy()
    import numpy as np

    qi, ai = np.array([0, 0, 1, 2, 2, 1]), np.array([0, 1, 2, 3, 0, 0])
    assert np.allclose(
        score_cached(m, q_ids, a_ids, qi, ai, batch_size=2),
        score_pairs(m, q_ids, a_ids, qi, ai, batch_size=4),
        atol=1e-6,
    )


def test_qa_bilstm_is_qa_lstm_with_tanh_after_pooling(padded_pairs):
    _, q = padded_pairs(30)
    torch.manual_seed(0)
    plain = build_model("qa_lstm", {"embedding_dim": 8, "hidden": 5}, vocab_size=30)
    torch.manual_seed(0)
    with_tanh = build_model("qa_bilstm", {"embedding_dim": 8, "hidden": 5}, vocab_size=30)
    with torch.no_grad():
        assert torch.allclose(with_tanh.encode_question(q), torch.tanh(plain.encode_question(q)))


def test_random_baseline_is_deterministic_and_batch_independent():
    q, a = torch.randint(1, 10, (5, 4)), torch.randint(1, 10, (5, 6))
    torch.manual_seed(3)
    m = build_model("random", {}, vocab_size=10)
    s = m(q, a)
    torch.manual_seed(3)
    assert torch.equal(s, build_model("random", {}, vocab_size=10)(q, a))
    torch.manual_seed(4)
    assert not torch.equal(s, build_model("random", {}, vocab_size=10)(q, a))
    assert torch.equal(s[2:3], m(q[2:3], a[2:3]))
    assert len(set(s.tolist())) == 5 and bool(((s >= 0) & (s < 1)).all())
