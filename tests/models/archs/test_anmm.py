import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ansel.data.vocab import Lexicon
from ansel.models import build_model
from ansel.models.registry import ModelConfigError, needs_lexicon, parse_hparams
from tests.models.fitting import assert_classifies, assert_ranks_positives_first
from tests.models.ids import padded_ids


def _lexicon(vocab: int, seed: int = 0) -> Lexicon:
    df = np.random.default_rng(seed).integers(0, 20, vocab)
    return Lexicon([f"w{i}" for i in range(vocab)], df, df * 2, 50)


def _model(hparams=None, vocab=30, dim=8, embeddings="random", lexicon=None, seed=0):
    if isinstance(embeddings, str):
        embeddings = np.random.default_rng(seed).normal(size=(vocab, dim)).astype(np.float32)
    hp = {"embedding_dim": dim, "gate_dim": dim, "text1_maxlen": 4, **(hparams or {})}
    return build_model("anmm", hp, vocab, embeddings, lexicon=lexicon or _lexicon(vocab))


# Hand-made vectors: 2 = x, 3 = -x (given as -2x: the table is normalised), 4 = (0.6, 0.8, 0),
# 5 = (1, 2, 3) / sqrt(14), whose float32 cosine with itself is 0.99999988 (an exact match all the same).
VECTORS = np.array([[0, 0, 0], [0, 0, 1], [1, 0, 0], [-2, 0, 0], [3, 4, 0], [1, 2, 3]], dtype=np.float32)


def _bins(*entries):
    row = np.zeros(20, dtype=np.float32)
    for b, v in entries:
        row[b] += v
    return row


def test_registered_with_a_lexicon_and_checked():
    assert needs_lexicon("anmm")
    with pytest.raises(ModelConfigError, match="hidden_sizes"):
        parse_hparams("anmm", {"hidden_sizes": [20, 2]})
    with pytest.raises(ModelConfigError, match="gate"):
        parse_hparams("anmm", {"gate": "tfidf"})


@pytest.mark.parametrize("classes", [1, 2])
@pytest.mark.parametrize("gate", ["idf", "embedding"])
def test_shapes(classes, gate, padded_pairs):
    q, a = padded_pairs(30, lq=7)  # longer than text1_maxlen 4: truncated
    assert _model({"classes": classes, "gate": gate})(q, a).shape == (4,)


def test_bin_features_equal_a_hand_computation():
    m = _model({"text1_maxlen": 4}, vocab=6, dim=3, embeddings=VECTORS)
    q = padded_ids([[2, 4, 5]], 3)
    a = padded_ids([[2, 3, 4, 2, 5]], 7)  # two padding columns
    r = 1 / math.sqrt(14)  # cos(2, 5); cos(3, 5) = -r; cos(4, 5) = 2.2 r
    # bin of v: int((v + 1) / 2 * 19): 1 -> 19, -1 -> 0, 0.6 -> 15, -0.6 -> 3, r -> 12, -r -> 6, 2.2 r -> 15
    expected = np.stack(
        [
            _bins((19, 1), (0, -1), (15, 0.6), (19, 1), (12, r)),
            _bins((15, 0.6), (3, -0.6), (19, 1), (15, 0.6), (15, 2.2 * r)),
            _bins((12, r), (6, -r), (15, 2.2 * r), (12, r), (19, 1)),
            _bins(),  # the padding row of the question, post-padded to text1_maxlen
        ]
    )
    from ansel.models.layers import fixed_length

    got = m.bin_features(fixed_length(q, 4), a)
    assert torch.allclose(got[0], torch.from_numpy(expected), atol=1e-6)


@pytest.mark.parametrize("gate", ["idf", "embedding"])
def test_trailing_padding_changes_no_score(gate, padded_pairs):
    m = _model({"gate": gate, "classes": 2}).eval()
    q, a = padded_pairs(30)
    loose_q, loose_a = F.pad(q, (0, 6)), F.pad(a, (0, 5))
    assert torch.allclose(m(q, a), m(loose_q, loose_a), atol=1e-6)
    assert torch.allclose(m(q[:, :3], a), m(loose_q[:, :3], loose_a), atol=1e-6)  # padded up to text1_maxlen


def test_idf_gate_is_a_softmax_of_a_scalar_times_idf():
    lex = _lexicon(30)
    m = _model({"text1_maxlen": 5}, lexicon=lex)
    with torch.no_grad():
        m.gate.weight.uniform_(-1, 1)
    q = padded_ids([[3, 7, 7], [12, 5, 9, 20, 11]], 5)
    scale = m.gate.weight.sum().item()
    idf = [[0.0 if w == 0 else math.log(51 / (1 + lex.df[w])) + 1 for w in row] for row in q.tolist()]
    expected = torch.softmax(scale * torch.tensor(idf), dim=1)  # padding: idf 0, in the softmax
    assert torch.allclose(m.gate_weights(q), expected, atol=1e-6)
    # and the score is the gate-weighted sum of the per-word values
    a = padded_ids([[3, 4, 5, 6], [9, 12]], 4)
    values = m.mlp(m.bin_features(q, a)).squeeze(-1)
    assert torch.allclose(m(q, a), (expected * values).sum(1), atol=1e-6)


@pytest.mark.parametrize("gate", ["idf", "embedding"])
@pytest.mark.parametrize("classes", [1, 2])
def test_gradient_reaches_every_trainable_parameter(gate, classes, padded_pairs):
    m = _model({"gate": gate, "classes": classes})
    q, a = padded_pairs(30)
    m(q, a).sum().backward()
    assert not m.embedding.weight.requires_grad
    trainable = [(n, p) for n, p in m.named_parameters() if p.requires_grad]
    assert {n for n, _ in trainable} >= {"gate.weight", "mlp.1.weight", "mlp.3.bias"}
    for name, p in trainable:
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def _matching_task(n: int, vocab: int = 40, seed: int = 0):
    """Questions of 4 words; a matching answer shares two of them, a non-matching one none (with
    frozen vectors an exact match is what tells the two apart)."""
    rng = np.random.default_rng(seed)
    q, pos, neg = [], [], []
    for _ in range(n):
        words = rng.permutation(np.arange(2, vocab))
        q.append(words[:4])
        pos.append(rng.permutation(np.concatenate([words[:2], rng.integers(2, vocab, 4)])))
        neg.append(words[4:10])
    return (torch.tensor(np.array(x)) for x in (q, pos, neg))


def test_overfits_triples_with_hinge_loss():
    m = _model(vocab=40, dim=16)
    assert_ranks_positives_first(m, *_matching_task(32), steps=300, lr=0.02)


def test_classifies_pairs_with_two_classes():
    m = _model({"classes": 2}, vocab=40, dim=16)
    q, pos, neg = _matching_task(16, seed=1)
    qq, aa = torch.cat([q, q]), torch.cat([pos, neg])
    assert_classifies(m, qq, aa, torch.cat([torch.ones(16), torch.zeros(16)]), steps=300, lr=0.02)


@pytest.mark.parametrize("gate", ["idf", "embedding"])
def test_state_dict_round_trip(gate, tmp_path, padded_pairs):
    m = _model({"gate": gate, "classes": 2}).eval()
    with torch.no_grad():
        for p in m.parameters():
            p.add_(0.1)
    torch.save(m.state_dict(), tmp_path / "w.pt")
    # as io.load_model builds it: no vectors; here also another lexicon (the saved IDF wins)
    fresh = _model({"gate": gate, "classes": 2}, embeddings=None, lexicon=_lexicon(30, seed=9)).eval()
    fresh.load_state_dict(torch.load(tmp_path / "w.pt", weights_only=True))
    q, a = padded_pairs(30)
    assert torch.equal(m(q, a), fresh(q, a))
