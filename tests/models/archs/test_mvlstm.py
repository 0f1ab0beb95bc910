import pytest
import torch
import torch.nn.functional as F
from torch import nn

from ansel.models import build_model
from ansel.models.mvlstm import post_padded_bilstm
from ansel.models.registry import ModelConfigError
from tests.models.fitting import assert_classifies, assert_ranks_positives_first

VOCAB = 40
SMALL = {"embedding_dim": 8, "hidden": 5, "text1_maxlen": 5, "text2_maxlen": 9, "top_k": 12, "freeze_embeddings": False}
VARIANTS = {
    "MV-LSTM": {},
    "aMV-LSTM (Q)": {"attend_question": True},
    "aMV-LSTM (A)": {"attend_answer": True},
    "aMV-LSTM (Q+A)": {"attend_question": True, "attend_answer": True},
    "paper's variant": {"attend_question": True, "match": "cosine", "mask_padding": True},
}


def model(variant: str, seed: int = 0, **extra):
    torch.manual_seed(seed)
    return build_model("mv_lstm", {**SMALL, **VARIANTS[variant], **extra}, VOCAB)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("classes", [1, 2])
def test_one_score_per_pair_and_extra_padding_changes_nothing(variant, classes, padded_pairs):
    m = model(variant, classes=classes).eval()
    q, a = padded_pairs(VOCAB)
    with torch.no_grad():
        s = m(q, a)
        assert s.shape == (4,)
        # beyond the fixed widths, and a batch trimmed to its longest text: the same inputs
        assert torch.equal(s, m(F.pad(q, (0, 7)), F.pad(a, (0, 11))))
        assert torch.allclose(s[1:2], m(q[1:2, :3], a[1:2]), atol=1e-6)  # batch size: BLAS rounding


@pytest.mark.parametrize("lengths", [[9, 4, 1, 0], [3, 2, 3, 1], [0, 0, 0, 0]])
def test_post_padded_bilstm_is_the_bilstm_over_the_whole_width(lengths):
    """Scoring's BiLSTM, which runs the backward pass over the batch's shared padding once, gives
    the states of the plain BiLSTM over every column (to float rounding)."""
    torch.manual_seed(0)
    lstm = nn.LSTM(6, 5, batch_first=True, bidirectional=True)
    x = torch.randn(4, 9, 6) * (torch.arange(9) < torch.tensor(lengths).unsqueeze(1)).unsqueeze(2)  # zero padding
    with torch.no_grad():
        torch.testing.assert_close(post_padded_bilstm(lstm, x, max(lengths)), lstm(x)[0], rtol=0, atol=1e-6)


def test_unmasked_code_reads_padding_but_the_papers_masked_variant_does_not(padded_pairs):
    """As coded, a longer fixed width (more padding) changes the score; masked, it cannot."""
    q, a = padded_pairs(VOCAB)
    for variant, changes in (("aMV-LSTM (Q)", True), ("paper's variant", False)):
        m = model(variant).eval()
        wider = build_model("mv_lstm", {**SMALL, **VARIANTS[variant], "text2_maxlen": 15}, VOCAB).eval()
        wider.load_state_dict(m.state_dict())
        with torch.no_grad():
            assert torch.allclose(m(q, a), wider(q, a), atol=1e-6) is not changes, variant


def test_attention_weights_padding_only_in_the_unmasked_code(padded_pairs):
    q, _ = padded_pairs(VOCAB)
    for variant, padding_weight in (("aMV-LSTM (Q)", True), ("paper's variant", False)):
        m = model(variant)
        ids = F.pad(q, (0, SMALL["text1_maxlen"] - q.size(1)))
        w = m.attend_q.weights(m.embedding(ids), ids != 0)
        assert torch.allclose(w.sum(1), torch.ones(4))
        assert bool((w[ids == 0] > 0).all()) is padding_weight


def test_amv_lstm_q_with_every_attention_weight_one_is_mv_lstm(padded_pairs):
    q, a = padded_pairs(VOCAB)
    plain, attended = model("MV-LSTM", seed=1).eval(), model("aMV-LSTM (Q)", seed=2).eval()
    missing = attended.load_state_dict(plain.state_dict(), strict=False)
    assert missing.missing_keys == ["attend_q.v.weight"] and not missing.unexpected_keys
    with torch.no_grad():
        assert not torch.allclose(plain(q, a), attended(q, a))  # the attention does something
        attended.attend_q.weights = lambda x, mask: torch.ones(x.shape[:2])
        assert torch.equal(plain(q, a), attended(q, a))


@pytest.mark.parametrize("variant", VARIANTS)
def test_gradient_reaches_every_parameter(variant, padded_pairs):
    m = model(variant, dropout=0.0, lstm_dropout=0.0)
    q, a = padded_pairs(VOCAB)
    m(q, a).sum().backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_frozen_embeddings_by_default_and_normalised_on_request():
    import numpy as np

    vectors = np.random.default_rng(0).normal(size=(VOCAB, 8)).astype(np.float32) * 3
    plain = build_model("mv_lstm", {**SMALL, "freeze_embeddings": True}, VOCAB, vectors)
    normed = build_model("mv_lstm", {**SMALL, "normalize_embeddings": True}, VOCAB, vectors)
    assert not plain.embedding.weight.requires_grad
    assert torch.allclose(plain.embedding.weight[1:], torch.from_numpy(vectors[1:]))
    assert torch.allclose(normed.embedding.weight[1:].norm(dim=1), torch.ones(VOCAB - 1))


def test_top_k_larger_than_the_matrix_is_refused():
    with pytest.raises(ModelConfigError, match="top_k"):
        build_model("mv_lstm", {**SMALL, "top_k": 46}, VOCAB, where="models.x")


@pytest.mark.parametrize("variant", ["MV-LSTM", "aMV-LSTM (Q+A)", "paper's variant"])
def test_overfits_32_triples_with_rank_hinge(variant):
    g = torch.Generator().manual_seed(0)
    q = torch.randint(1, VOCAB, (32, 4), generator=g)
    pos, neg = torch.randint(1, VOCAB, (32, 7), generator=g), torch.randint(1, VOCAB, (32, 7), generator=g)
    assert_ranks_positives_first(model(variant, dropout=0.0, lstm_dropout=0.0), q, pos, neg)


def test_two_way_head_overfits_32_labelled_pairs():
    g = torch.Generator().manual_seed(1)
    q, a = torch.randint(1, VOCAB, (32, 4), generator=g), torch.randint(1, VOCAB, (32, 7), generator=g)
    y = torch.randint(0, 2, (32,), generator=g).float()
    assert_classifies(model("aMV-LSTM (Q)", classes=2, dropout=0.0, lstm_dropout=0.0), q, a, y)
