import pytest
import torch
import torch.nn.functional as F

from ansel.models.compositions import AttentivePooling, MaxPooling, Pooling, fo_pool, make_composition
from ansel.models.hparams import COMPOSITIONS
from ansel.models.layers import masked_max


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
    return (*pooling(Q, q_mask, A, a_mask), *pooling.attention(Q, q_mask, A, a_mask))


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


def test_attentive_pooling_gives_an_empty_text_zero_attention_not_nan():
    pooling = AttentivePooling(2)
    Q, A = torch.randn(1, 3, 2), torch.randn(1, 4, 2)
    sigma_q, sigma_a = pooling.attention(Q, torch.zeros(1, 3, dtype=torch.bool), A, torch.ones(1, 4, dtype=torch.bool))
    assert sigma_q.eq(0).all()
    assert torch.isfinite(sigma_a).all() and sigma_a.sum().item() == pytest.approx(1.0)


def test_max_pooling_pools_each_side_on_its_own_then_tanh():
    h, mask = torch.randn(2, 4, 3), torch.tensor([[True, True, False, False], [True] * 4])
    vq, va = MaxPooling(tanh=True)(h, mask, h[:, :2], mask[:, :2])
    torch.testing.assert_close(vq, torch.tanh(masked_max(h, mask)))
    torch.testing.assert_close(va, torch.tanh(h[:, :2].max(1).values))


@pytest.mark.parametrize("name", COMPOSITIONS)
def test_every_configurable_composition_returns_vectors_per_side(name):
    torch.manual_seed(0)
    composition = make_composition(name, 6, hops=3)
    hq, ha = torch.randn(2, 4, 6), torch.randn(2, 7, 6)
    mq, ma = torch.ones(2, 4, dtype=torch.bool), torch.ones(2, 7, dtype=torch.bool)
    vq, va = composition(hq, mq, ha, ma)
    hops = (3,) if name == "multihop" else ()
    assert vq.shape == va.shape == (2, *hops, 6)
    assert isinstance(composition, Pooling) == (name == "max")
    with pytest.raises(ValueError, match="unknown composition"):
        make_composition("nope", 6, 1)


def test_fo_pool_matches_hand_recurrence_and_holds_state_on_padding():
    z = torch.tensor([[[1.0], [-1.0], [9.0]]])
    f = torch.tensor([[[0.5], [0.25], [0.0]]])
    o = torch.tensor([[[1.0], [0.5], [1.0]]])
    h = fo_pool(z, f, o, torch.tensor([[True, True, False]]))
    # c1 = 0.5*0 + 0.5*1 = 0.5; c2 = 0.25*0.5 + 0.75*(-1) = -0.625, h2 = 0.5*c2; step 3 is padding: c stays.
    assert h.squeeze().tolist() == pytest.approx([0.5, -0.3125, -0.625])
