import pytest
import torch
import torch.nn.functional as F

from ansel.models.registry import ModelConfigError, build_model
from tests.models.fitting import assert_ranks_positives_first

SMALL = {
    "ap_cnn": {"embedding_dim": 8, "filters": 6, "kernel": 3},
    "ap_bilstm": {"embedding_dim": 8, "hidden": 5},
}


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
    assert model.composition.U.grad.abs().sum() > 0
    assert all(g is not None and g.abs().sum() > 0 for g in encoder_grads)
    assert model.embed.embedding.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("padding, extra", [("wide", 2), ("narrow", -2), ("same", 0)])  # k = 3
def test_conv_padding_sets_the_real_positions_and_extra_padding_keeps_scores(padding, extra):
    """AP-CNN's convolution (E3 of issue 51): L + k - 1 positions (wide), L - k + 1 but at least
    one (narrow: a text shorter than k is one window of its words and zeros), L (same)."""
    torch.manual_seed(0)
    model = build_model("ap_cnn", {**SMALL["ap_cnn"], "conv_padding": padding}, vocab_size=30).eval()
    q, q_len = random_batch(seed=1)
    a, a_len = random_batch(max_len=12, seed=2)
    q[0, 2:], q_len[0] = 0, 2  # shorter than the kernel
    sigma_q, sigma_a = model.attention(q, a)
    for sigma, lengths in ((sigma_q, q_len), (sigma_a, a_len)):
        assert sigma.gt(0).sum(1).tolist() == (lengths + extra).clamp_min(1).tolist()
    with torch.no_grad():
        assert torch.allclose(model(q, a), model(F.pad(q, (0, 5)), F.pad(a, (0, 7))), atol=1e-6)
    with torch.no_grad():  # a batch padded to fewer positions than the kernel still has a narrow window
        assert model(q[:1, :2], a[:1, :2]).isfinite().all()


def test_conv_bias_false_drops_b1_and_a_wrong_padding_is_named():
    model = build_model("ap_cnn", {**SMALL["ap_cnn"], "conv_bias": False}, vocab_size=30)
    assert model.encoder.conv.bias is None
    assert build_model("ap_cnn", SMALL["ap_cnn"], vocab_size=30).encoder.conv.bias is not None
    with pytest.raises(ModelConfigError, match="conv_padding"):
        build_model("ap_cnn", {**SMALL["ap_cnn"], "conv_padding": "full"}, vocab_size=10)


def test_unknown_hyperparameter_is_rejected():
    with pytest.raises(ModelConfigError, match="hidden"):
        build_model("ap_cnn", {"hidden": 3}, vocab_size=10)


@pytest.mark.parametrize("arch", sorted(SMALL))
def test_overfits_32_pairs_with_hinge_loss(arch):
    torch.manual_seed(0)
    model = build_model(arch, {**SMALL[arch], "embedding_dim": 16}, vocab_size=60)
    q, _ = random_batch(vocab=60, batch=32, max_len=6, seed=6)
    pos, _ = random_batch(vocab=60, batch=32, max_len=10, seed=7)
    neg, _ = random_batch(vocab=60, batch=32, max_len=10, seed=8)
    assert_ranks_positives_first(model, q, pos, neg, margin=0.2, steps=40, lr=0.02)
