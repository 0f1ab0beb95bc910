import pytest
import torch
import torch.nn.functional as F

from ansel.models.registry import ModelConfigError, build_model

VOCAB = 40
SMALL = {"embedding_dim": 8, "hidden": 6, "kernel": 3}


def _build(seed=0, **overrides):
    torch.manual_seed(seed)
    return build_model("ctrn", {**SMALL, **overrides}, VOCAB)


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
        vq, _ = model.composition(*model.states(q, a))
        vq_other, _ = model.composition(*model.states(q, other))
        vq_again, _ = model.composition(*model.states(q, a))
    assert not torch.allclose(vq, vq_other, atol=1e-4)
    torch.testing.assert_close(vq, vq_again)


def test_gradient_reaches_embeddings_and_every_parameter(padded_pairs):
    model = _build().train()
    q, a = padded_pairs(VOCAB)
    model(q, a).pow(2).sum().backward()
    silent = [n for n, p in model.named_parameters() if p.grad is None or not p.grad.abs().sum() > 0]
    assert not silent
    assert model.embed.embedding.weight.grad[1:].abs().sum() > 0


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
