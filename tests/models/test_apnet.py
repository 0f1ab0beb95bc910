import pytest
import torch
import torch.nn.functional as F

from ansel.models import apnet  # noqa: F401  (registers ap_cnn, ap_bilstm)
from ansel.models import qa_baselines  # noqa: F401
from ansel.models.apnet import AttentivePooling
from ansel.models.registry import ModelConfigError, build_model

SMALL = {
    "ap_cnn": {"embedding_dim": 8, "filters": 6, "kernel": 3},
    "ap_bilstm": {"embedding_dim": 8, "hidden": 5},
}


def hand_example(pad_q: int = 0, pad_a: int = 0):
    """Q = [(1,0), (0,1)], A = [(1,0), (0,2), (1,1)], U = I, plus padded positions holding
    large values that would dominate both the max and the softmax if they leaked in."""
    Q = torch.tensor([[1.0, 0.0], [0.0, 1.0]] + [[9.0, 9.0]] * pad_q).unsqueeze(0)
    A = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]] + [[9.0, 9.0]] * pad_a).unsqueeze(0)
    q_mask = torch.tensor([[True] * 2 + [False] * pad_q])
    a_mask = torch.tensor([[True] * 3 + [False] * pad_a])
    pooling = AttentivePooling(2)
    with torch.no_grad():
        pooling.U.copy_(torch.eye(2))
    return pooling(Q, q_mask, A, a_mask)


# Derived by hand: G = tanh([[1, 0, 1], [0, 2, 1]]); row maxima (tanh 1, tanh 2), column maxima
# (tanh 1, tanh 2, tanh 1); with d = tanh 2 - tanh 1 = 0.20244 and e^d = 1.22439:
# σq = (1, e^d) / (1 + e^d), σa = (1, e^d, 1) / (2 + e^d), r = Σ σ x, cosine of r_q and r_a.
SIGMA_Q = [0.44956, 0.55044]
SIGMA_A = [0.31014, 0.37973, 0.31014]
R_Q = [0.44956, 0.55044]
R_A = [0.62027, 1.06959]
COSINE = 0.98733


@pytest.mark.parametrize("pad_q,pad_a", [(0, 0), (2, 3)])
def test_attentive_pooling_matches_hand_computed_example(pad_q, pad_a):
    r_q, r_a, sigma_q, sigma_a = hand_example(pad_q, pad_a)
    assert sigma_q[0, :2].tolist() == pytest.approx(SIGMA_Q, abs=1e-4)
    assert sigma_a[0, :3].tolist() == pytest.approx(SIGMA_A, abs=1e-4)
    assert r_q[0].tolist() == pytest.approx(R_Q, abs=1e-4)
    assert r_a[0].tolist() == pytest.approx(R_A, abs=1e-4)
    assert F.cosine_similarity(r_q, r_a).item() == pytest.approx(COSINE, abs=1e-4)
    assert sigma_q[0, 2:].eq(0).all() and sigma_a[0, 3:].eq(0).all()


def test_empty_text_gets_zero_attention_not_nan():
    pooling = AttentivePooling(2)
    Q, A = torch.randn(1, 3, 2), torch.randn(1, 4, 2)
    _, r_a, sigma_q, sigma_a = pooling(Q, torch.zeros(1, 3, dtype=torch.bool), A, torch.ones(1, 4, dtype=torch.bool))
    assert sigma_q.eq(0).all()
    assert torch.isfinite(sigma_a).all() and sigma_a.sum().item() == pytest.approx(1.0)


def random_batch(vocab=30, batch=4, max_len=9, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, vocab, (batch, max_len), generator=g)
    lengths = torch.randint(2, max_len + 1, (batch,), generator=g)
    ids[torch.arange(max_len).unsqueeze(0) >= lengths.unsqueeze(1)] = 0
    return ids, lengths


@pytest.mark.parametrize("arch", sorted(SMALL))
def test_padding_gets_zero_attention_and_extra_padding_keeps_scores(arch):
    torch.manual_seed(0)
    model = build_model(arch, SMALL[arch], vocab_size=30).eval()
    q, q_len = random_batch(seed=1)
    a, a_len = random_batch(max_len=12, seed=2)
    sigma_q, sigma_a = model.attention(q, a)
    extra = 1 if arch == "ap_bilstm" else SMALL[arch]["kernel"]  # wide conv adds k-1 positions
    for sigma, lengths in ((sigma_q, q_len), (sigma_a, a_len)):
        real = torch.arange(sigma.size(1)).unsqueeze(0) < (lengths + extra - 1).unsqueeze(1)
        assert sigma[~real].eq(0).all()
        assert sigma.sum(1).tolist() == pytest.approx([1.0] * len(lengths), abs=1e-5)
    with torch.no_grad():
        scores = model(q, a)
        padded = model(F.pad(q, (0, 5)), F.pad(a, (0, 7)))
    assert torch.allclose(scores, padded, atol=1e-6)


@pytest.mark.parametrize("arch", sorted(SMALL))
def test_gradient_reaches_attention_matrix_encoder_and_embeddings(arch):
    torch.manual_seed(0)
    model = build_model(arch, SMALL[arch], vocab_size=30)
    q, _ = random_batch(seed=3)
    a, _ = random_batch(seed=4)
    model(q, a).sum().backward()
    encoder_grads = [p.grad for p in model.encoder.parameters()]
    assert model.pooling.U.grad.abs().sum() > 0
    assert all(g is not None and g.abs().sum() > 0 for g in encoder_grads)
    assert model.embedding.weight.grad.abs().sum() > 0


def test_unknown_hyperparameter_is_rejected():
    with pytest.raises(ModelConfigError, match="hidden"):
        build_model("ap_cnn", {"hidden": 3}, vocab_size=10)


def test_qa_bilstm_is_qa_lstm_with_tanh_after_pooling():
    q, _ = random_batch(seed=5)
    torch.manual_seed(0)
    plain = build_model("qa_lstm", {"embedding_dim": 8, "hidden": 5}, vocab_size=30)
    torch.manual_seed(0)
    with_tanh = build_model("qa_bilstm", {"embedding_dim": 8, "hidden": 5}, vocab_size=30)
    with torch.no_grad():
        assert torch.allclose(with_tanh.encode_question(q), torch.tanh(plain.encode_question(q)))


@pytest.mark.parametrize("arch", sorted(SMALL))
def test_overfits_32_pairs_with_hinge_loss(arch):
    torch.manual_seed(0)
    model = build_model(arch, {**SMALL[arch], "embedding_dim": 16}, vocab_size=60)
    q, _ = random_batch(vocab=60, batch=32, max_len=6, seed=6)
    pos, _ = random_batch(vocab=60, batch=32, max_len=10, seed=7)
    neg, _ = random_batch(vocab=60, batch=32, max_len=10, seed=8)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    margin = 0.2
    for _ in range(40):
        optimizer.zero_grad()
        loss = torch.relu(margin - model(q, pos) + model(q, neg)).mean()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        assert (model(q, pos) > model(q, neg)).all()
