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
    "ggsa/two-encoders": {**SA, "group_size": 3, "shared_encoder": False},
    "iggsa/attention/two-encoders": {**SA, "group_size": 3, "composition": "attention", "shared_encoder": False},
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


@pytest.mark.parametrize(
    "name", ["global_sa", "local_sa+gate", "group_sa", "ggsa", "iggsa", "qa_lstm_attn", "multihop_lstm"]
)
def test_overfits_sixteen_triples(name):
    model = _build(name)
    q = torch.randint(1, VOCAB, (16, 5))
    pos = torch.randint(1, VOCAB, (16, 9))
    neg = torch.randint(1, VOCAB, (16, 9))
    assert_ranks_positives_first(model, q, pos, neg, margin=0.1, steps=100, lr=1e-2)


@pytest.mark.parametrize("arch", ["ggsa", "iggsa"])
def test_two_encoders_one_per_text_the_embeddings_shared(arch, padded_pairs):
    """§3.1: "GGSA uses two GGSA encoders to encode the question and the answer respectively"; the
    shared form keeps the state dict of the runs made before the option."""
    shared = build_model(arch, {**SA, "group_size": 3}, VOCAB)
    two = build_model(arch, {**SA, "group_size": 3, "shared_encoder": False}, VOCAB)
    assert not any(n.startswith("answer_encoder.") for n in shared.state_dict())
    q_params = {n[len("encoder.") :] for n in two.state_dict() if n.startswith("encoder.")}
    a_params = {n[len("answer_encoder.") :] for n in two.state_dict() if n.startswith("answer_encoder.")}
    # iGGSA: the interaction residual is the answer pass's only
    assert a_params - q_params == (
        {
            "interaction_ffn.0.weight",
            "interaction_ffn.0.bias",
            "interaction_ffn.2.weight",
            "interaction_ffn.2.bias",
            "interaction_norm.weight",
            "interaction_norm.bias",
        }
        if arch == "iggsa"
        else set()
    )
    assert not any(n.startswith("answer_embed") for n in two.state_dict())  # one embedding table
    two.eval()
    q, a = padded_pairs(VOCAB)
    with torch.no_grad():
        before, question = two(q, a), two.encode_question(q) if arch == "ggsa" else None
        for p in two.answer_encoder.parameters():
            p.add_(0.1)
        assert not torch.allclose(two(q, a), before)  # the answer's encoder reads the answer
        if arch == "ggsa":  # and only the answer
            torch.testing.assert_close(two.encode_question(q), question)


@pytest.mark.parametrize(
    "arch,reach",
    [("group_sa", {"group_size": 9}), ("group_sa", {"group_size": 20}), ("local_sa", {"window": 17})],
)
def test_one_group_or_a_window_of_2l_minus_1_is_the_global_sa_model(arch, reach, padded_pairs):
    """The paper's equivalences (group attention with one group, local attention over the whole
    text: global attention) hold for the built rankers, not only the attention layers."""
    q, a = padded_pairs(VOCAB)  # answers of 9 positions
    torch.manual_seed(0)
    expected = build_model("global_sa", {**SA, "final_norm": False}, VOCAB).eval()
    torch.manual_seed(0)
    model = build_model(arch, {**SA, **reach}, VOCAB).eval()
    with torch.no_grad():
        torch.testing.assert_close(model(q, a), expected(q, a), rtol=1e-5, atol=1e-6)
