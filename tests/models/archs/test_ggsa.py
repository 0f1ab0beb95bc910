import pytest
import torch

from ansel.models.base import SiameseRanker
from ansel.models.registry import ModelConfigError, build_model
from tests.models.fitting import assert_ranks_positives_first

VOCAB = 40
SA = {"embedding_dim": 12, "heads": 6, "ffn_dim": 16, "dropout": 0.0}
LSTM = {"embedding_dim": 12, "hidden": 6, "dropout": 0.0}
CONFIGS = {
    "global_sa": SA,
    "global_sa/attention": {**SA, "composition": "attention"},
    "local_sa+gate": {**SA, "window": 3, "gate": True},
    "group_sa": {**SA, "group_size": 3},
    "ggsa": {**SA, "group_size": 3},
    "ggsa/attention/mlp": {**SA, "group_size": 3, "composition": "attention", "scorer": "mlp"},
    "iggsa": {**SA, "group_size": 3},
    "iggsa/multihop": {**SA, "group_size": 3, "composition": "multihop"},
    "qa_lstm_attn": LSTM,
    "multihop_lstm": LSTM,
}


def _build(name, seed=0):
    torch.manual_seed(seed)
    arch = name.split("/")[0].split("+")[0]
    return build_model(arch, CONFIGS[name], VOCAB)


def _pad(ids, extra):
    return torch.cat([ids, torch.zeros(ids.size(0), extra, dtype=ids.dtype)], dim=1)


def test_siamese_flags():
    assert isinstance(_build("ggsa"), SiameseRanker)
    assert not _build("iggsa").siamese and not _build("ggsa/attention/mlp").siamese
    with pytest.raises(ModelConfigError, match="window"):
        build_model("ggsa", {"window": 3}, VOCAB)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_scores_ignore_padding(name, padded_pairs):
    model = _build(name).eval()
    q, a = padded_pairs(VOCAB)
    with torch.no_grad():
        reference = model(q, a)
        assert reference.shape == (4,) and torch.isfinite(reference).all()
        torch.testing.assert_close(model(_pad(q, 4), _pad(a, 7)), reference, rtol=1e-5, atol=1e-5)


def test_siamese_pooled_vectors_ignore_padding(padded_pairs):
    model = _build("ggsa").eval()
    _, a = padded_pairs(VOCAB)
    with torch.no_grad():
        torch.testing.assert_close(model.encode_answer(_pad(a, 11)), model.encode_answer(a), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_gradient_reaches_every_parameter(name, padded_pairs):
    model = _build(name).train()
    q, a = padded_pairs(VOCAB)
    model(q, a).pow(2).sum().backward()
    silent = [n for n, p in model.named_parameters() if p.grad is None or not p.grad.abs().sum() > 0]
    assert not silent


@pytest.mark.parametrize("name", ["ggsa", "iggsa"])
def test_overfits_sixteen_triples(name):
    torch.manual_seed(0)
    q = torch.randint(1, VOCAB, (16, 5))
    pos = torch.randint(1, VOCAB, (16, 9))
    neg = torch.randint(1, VOCAB, (16, 9))
    assert_ranks_positives_first(build_model(name, {**SA, "group_size": 3}, VOCAB), q, pos, neg,
                                 margin=0.1, steps=100, lr=1e-2)
