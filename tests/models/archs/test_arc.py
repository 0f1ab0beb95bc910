import numpy as np
import pytest
import torch

from ansel.evaluation.scoring import score_cached, score_pairs
from ansel.models import build_model
from ansel.models.registry import ModelConfigError
from tests.models.fitting import assert_classifies, assert_ranks_positives_first

VOCAB = 40
# small widths, trainable embeddings, no dropout; ARC-II: two blocks, 6 x 9 -> 3 x 4 -> 3 x 2
SMALL = {
    "arc_i": {
        "text1_maxlen": 6,
        "text2_maxlen": 9,
        "embedding_dim": 8,
        "freeze_embeddings": False,
        "dropout": 0.0,
        "kernel_count": 6,
        "kernel_size": 3,
        "q_pool_size": 2,
        "d_pool_size": 3,
    },
    "arc_ii": {
        "text1_maxlen": 6,
        "text2_maxlen": 9,
        "embedding_dim": 8,
        "freeze_embeddings": False,
        "dropout": 0.0,
        "kernel_count_1d": 6,
        "kernel_size_1d": 3,
        "kernel_counts_2d": [6, 5],
        "kernel_sizes_2d": [[3, 3], [1, 3]],
        "mpool_sizes_2d": [[2, 2], [1, 2]],
    },
}
CASES = [(arch, classes) for arch in SMALL for classes in (1, 2)]


def build(arch: str, seed: int = 0, **overrides):
    torch.manual_seed(seed)
    return build_model(arch, {**SMALL[arch], **overrides}, VOCAB)


def ids(rows, width: int) -> torch.Tensor:
    """Token-id rows post-padded with 0 to ``width`` columns."""
    out = torch.zeros(len(rows), width, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r)
    return out


def texts(n: int, max_len: int, seed: int) -> list[list[int]]:
    """n texts of 1..max_len random word ids."""
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randint(1, VOCAB, (int(k),), generator=g).tolist()
        for k in torch.randint(1, max_len + 1, (n,), generator=g)
    ]


# questions and answers longer than the models' 6 / 9 words: truncation is exercised too
QUESTIONS, ANSWERS = texts(5, 8, seed=1), texts(5, 12, seed=2)


def assert_padding_invariant(model, q_rows, a_rows):
    """Scores do not change with trailing padding beyond maxlen or a batch trimmed to its longest
    text; a text longer than maxlen scores as its first maxlen words."""
    model.eval()
    q_max, a_max = max(map(len, q_rows)), max(map(len, a_rows))
    with torch.no_grad():
        trimmed = model(ids(q_rows, q_max), ids(a_rows, a_max))
        torch.testing.assert_close(model(ids(q_rows, q_max + 7), ids(a_rows, a_max + 11)), trimmed)
        q_len, a_len = model.sides.maxlen
        cut = model(ids([r[:q_len] for r in q_rows], q_len), ids([r[:a_len] for r in a_rows], a_len))
        torch.testing.assert_close(cut, trimmed)


def assert_gradient_reaches_every_parameter(model, q, a):
    model.train()
    model(q, a).pow(2).sum().backward()
    silent = [
        n for n, p in model.named_parameters() if p.requires_grad and (p.grad is None or not p.grad.abs().sum() > 0)
    ]
    assert not silent


def assert_overfits_triples(model, steps: int = 200, lr: float = 0.01):
    """32 (question, positive, negative) triples, hinge loss max(0, 1 - s+ + s-): every positive
    ends above its negative."""
    q, pos, neg = (ids(texts(32, 9, seed), 9) for seed in (10, 11, 12))
    assert_ranks_positives_first(model, q, pos, neg, steps=steps, lr=lr)


def assert_classifies_pairs(model, steps: int = 200, lr: float = 0.01):
    """32 labelled pairs, BCE on the score as the match logit (a two-way softmax head): >= 0.97
    accuracy with score > 0 as the predicted match."""
    q, a = ids(texts(32, 9, 20), 9), ids(texts(32, 9, 21), 9)
    assert_classifies(model, q, a, (torch.arange(32) % 2).float(), steps=steps, lr=lr)


def test_defaults_are_the_wikiqa_configs_and_the_quora_ones_build():
    arc_i, arc_ii = build_model("arc_i", {}, VOCAB), build_model("arc_ii", {}, VOCAB)
    # ARC-I: 128 filters x (20 // 4 + 40 // 4) windows; ARC-II: 20 filters x (10 // 3) x (40 // 3)
    assert arc_i.head[2].linear.in_features == 128 * 15 and arc_ii.head[2].linear.in_features == 20 * 3 * 13
    assert arc_i.head[1].p == 0.95 and arc_ii.head[1].p == 0.9
    assert not arc_i.sides.embedding.weight.requires_grad and arc_i.sides.embedding.weight.shape == (VOCAB, 50)
    quora_i = build_model(
        "arc_i",
        {
            "text1_maxlen": 20,
            "text2_maxlen": 20,
            "embedding_dim": 8,
            "kernel_count": 16,
            "kernel_size": 15,
            "q_pool_size": 15,
            "d_pool_size": 15,
            "dropout": 0.9,
            "classes": 2,
        },
        VOCAB,
    )
    quora_ii = build_model(
        "arc_ii",
        {
            "text1_maxlen": 20,
            "text2_maxlen": 20,
            "embedding_dim": 8,
            "kernel_count_1d": 128,
            "kernel_size_1d": 15,
            "kernel_counts_2d": [128, 128],
            "kernel_sizes_2d": [[15, 15], [15, 15]],
            "mpool_sizes_2d": [[2, 2], [2, 2]],
            "dropout": 0.5,
            "classes": 2,
        },
        VOCAB,
    )
    assert quora_i.head[2].linear.in_features == 16 * 2 and quora_ii.head[2].linear.in_features == 128 * 5 * 5
    q, a = ids(QUESTIONS[:2], 8), ids(ANSWERS[:2], 12)
    with torch.no_grad():
        assert quora_i.eval()(q, a).shape == quora_ii.eval()(q, a).shape == (2,)


@pytest.mark.parametrize("arch, classes", CASES)
def test_one_finite_score_per_pair(arch, classes):
    model = build(arch, classes=classes).eval()
    with torch.no_grad():
        scores = model(ids(QUESTIONS, 8), ids(ANSWERS, 12))
    assert scores.shape == (5,) and torch.isfinite(scores).all()


@pytest.mark.parametrize("arch", SMALL)
def test_padding_and_truncation_do_not_change_scores(arch):
    assert_padding_invariant(build(arch), QUESTIONS, ANSWERS)


def test_arc_ii_adds_every_pair_of_convolved_positions():
    model = build("arc_ii").eval()
    q, a = ids(QUESTIONS, 8), ids(ANSWERS, 12)
    grids = []
    model.blocks.register_forward_hook(lambda module, args, out: grids.append(args[0]))
    with torch.no_grad():
        model(q, a)
        hq, ha = model.sides(q, 0), model.sides(a, 1)  # [B, C, 6], [B, C, 9]: 'same' padding keeps lengths
        assert hq.shape == (5, 6, 6) and ha.shape == (5, 6, 9)
        torch.testing.assert_close(grids[0][:, :, 4, 7], hq[:, :, 4] + ha[:, :, 7])
        torch.testing.assert_close(grids[0], hq[..., None] + ha[:, :, None, :])


def test_arc_i_is_siamese_and_cached_scoring_equals_pairwise():
    model = build("arc_i").eval()
    assert model.siamese and not build("arc_ii").siamese
    q_ids, a_ids = ids(QUESTIONS, 10).numpy(), ids(ANSWERS, 14).numpy()
    qi, ai = np.array([0, 0, 1, 2, 4, 3, 3]), np.array([0, 1, 2, 3, 4, 0, 4])
    np.testing.assert_allclose(
        score_cached(model, q_ids, a_ids, qi, ai, batch_size=2),
        score_pairs(model, q_ids, a_ids, qi, ai, batch_size=3),
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.mark.parametrize("arch", SMALL)
def test_gradient_reaches_every_trainable_parameter(arch):
    assert_gradient_reaches_every_parameter(build(arch), ids(QUESTIONS, 8), ids(ANSWERS, 12))


@pytest.mark.parametrize("arch", SMALL)
def test_overfits_32_triples_with_hinge_loss(arch):
    assert_overfits_triples(build(arch))


@pytest.mark.parametrize("arch", SMALL)
def test_two_class_head_fits_32_labelled_pairs(arch):
    assert_classifies_pairs(build(arch, classes=2))


@pytest.mark.parametrize(
    "arch, hparams, key",
    [
        ("arc_i", {"text1_maxlen": 3, "q_pool_size": 4}, "q_pool_size"),
        ("arc_i", {"dropout": 1.0}, "dropout"),
        ("arc_ii", {"kernel_counts_2d": [4, 4]}, "kernel_sizes_2d"),  # one kernel size for two layers
        ("arc_ii", {"kernel_sizes_2d": [[3]]}, "kernel_sizes_2d"),
        ("arc_ii", {"text1_maxlen": 4, "mpool_sizes_2d": [[5, 2]]}, "mpool_sizes_2d"),
        ("arc_ii", {"kernel_counts_2d": [], "kernel_sizes_2d": [], "mpool_sizes_2d": []}, "kernel_counts_2d"),
    ],
)
def test_settings_that_cannot_build_are_refused_by_key(arch, hparams, key):
    with pytest.raises(ModelConfigError, match=f"model.{key}"):
        build_model(arch, hparams, VOCAB)


@pytest.mark.parametrize("arch", ["arc_i", "arc_ii", "match_pyramid"])
def test_word_vectors_scaled_to_unit_length_on_request(arch):
    """`normalize_embeddings` (the fork's "_norm" GloVe files of ARC-I and MatchPyramid): unit rows,
    padding still zero; off, the vectors as given."""
    from tests.models.archs.test_matchpyramid import SMALL as PYRAMID

    small = PYRAMID if arch == "match_pyramid" else SMALL[arch]
    vectors = np.random.default_rng(0).normal(size=(VOCAB, small["embedding_dim"])).astype(np.float32) * 3
    plain = build_model(arch, small, VOCAB, vectors).sides.embedding.weight
    normed = build_model(arch, {**small, "normalize_embeddings": True}, VOCAB, vectors).sides.embedding.weight
    assert torch.allclose(plain[1:], torch.from_numpy(vectors[1:]))
    assert torch.allclose(normed[1:].norm(dim=1), torch.ones(VOCAB - 1)) and not normed[0].any()


def test_the_authors_wikiqa_configs_normalise_arc_i_and_matchpyramid_only():
    """upstream-notes §2.4: ARC-I (glove6B-50 norm) and MatchPyramid (glove840B-300 norm) load unit
    vectors; ARC-II and MV-LSTM the raw ones."""
    from ansel.config import load, model_config

    config = load()
    normalised = {
        m: bool(model_config(config, m)["hparams"].get("normalize_embeddings"))
        for m in ("amv_arc_i_wikiqa", "amv_match_pyramid_wikiqa", "amv_arc_ii_wikiqa", "amv_mv_lstm_wikiqa")
    }
    assert normalised == {
        "amv_arc_i_wikiqa": True,
        "amv_match_pyramid_wikiqa": True,
        "amv_arc_ii_wikiqa": False,
        "amv_mv_lstm_wikiqa": False,
    }
