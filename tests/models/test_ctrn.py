import pytest
import torch
import torch.nn.functional as F

from ansel.models import ctrn  # noqa: F401  (registers ctrn)
from ansel.models.ctrn import fo_pool
from ansel.models.registry import ModelConfigError, build_model

VOCAB = 40
SMALL = {"embedding_dim": 8, "hidden": 6, "kernel": 3}


def _build(seed=0, **overrides):
    torch.manual_seed(seed)
    return build_model("ctrn", {**SMALL, **overrides}, VOCAB)


def test_fo_pool_matches_hand_recurrence_and_holds_state_on_padding():
    z = torch.tensor([[[1.0], [-1.0], [9.0]]])
    f = torch.tensor([[[0.5], [0.25], [0.0]]])
    o = torch.tensor([[[1.0], [0.5], [1.0]]])
    h = fo_pool(z, f, o, torch.tensor([[True, True, False]]))
    # c1 = 0.5*0 + 0.5*1 = 0.5; c2 = 0.25*0.5 + 0.75*(-1) = -0.625, h2 = 0.5*c2; step 3 is padding: c stays.
    assert h.squeeze().tolist() == pytest.approx([0.5, -0.3125, -0.625])


@pytest.mark.parametrize("scorer", ["mlp", "cosine"])
def test_scores_shape_and_padding_invariance(scorer, padded_pairs):
    model = _build(scorer=scorer).eval()
    q, a = padded_pairs(VOCAB)
    with torch.no_grad():
        scores = model(q, a)
        assert scores.shape == (4,) and torch.isfinite(scores).all()
        torch.testing.assert_close(model(F.pad(q, (0, 6)), a), scores, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(model(q, F.pad(a, (0, 11))), scores, rtol=1e-5, atol=1e-6)


def test_question_representation_depends_on_the_answer(padded_pairs):
    model = _build().eval()
    q, a = padded_pairs(VOCAB)
    _, other = padded_pairs(VOCAB, seed=1)
    with torch.no_grad():
        vq, _ = model.encode(q, a)
        vq_other, _ = model.encode(q, other)
        vq_again, _ = model.encode(q, a)
    assert not torch.allclose(vq, vq_other, atol=1e-4)
    torch.testing.assert_close(vq, vq_again)


def test_gradient_reaches_embeddings_and_every_parameter(padded_pairs):
    model = _build().train()
    q, a = padded_pairs(VOCAB)
    model(q, a).pow(2).sum().backward()
    silent = [n for n, p in model.named_parameters() if p.grad is None or not p.grad.abs().sum() > 0]
    assert not silent
    assert model.embedding.weight.grad[1:].abs().sum() > 0


def test_overfits_sixteen_pairs_pointwise():
    torch.manual_seed(0)
    q = torch.randint(1, VOCAB, (16, 5))
    pos = torch.randint(1, VOCAB, (16, 9))
    neg = torch.randint(1, VOCAB, (16, 9))
    model = build_model("ctrn", {**SMALL, "embedding_dim": 16, "hidden": 16}, VOCAB)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    labels = torch.cat([torch.ones(16), torch.zeros(16)])
    losses = []
    for _ in range(200):
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(torch.cat([model(q, pos), model(q, neg)]), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        assert (model(q, pos) > model(q, neg)).all()
    assert losses[-1] < 0.1 * losses[0]


def test_unknown_hyperparameter_is_rejected():
    with pytest.raises(ModelConfigError, match="filters"):
        build_model("ctrn", {"filters": 3}, VOCAB)
