import pytest
import torch

from ansel.models import build_model
from ansel.models.matchpyramid import dynamic_max_pool, dynamic_pooling_index
from ansel.models.registry import ModelConfigError
from tests.models.archs.test_arc import (
    ANSWERS,
    QUESTIONS,
    VOCAB,
    assert_classifies_pairs,
    assert_gradient_reaches_every_parameter,
    assert_overfits_triples,
    assert_padding_invariant,
    ids,
)

# 6 x 9 match matrix pooled to 3 x 3 (windows of 2 x 3); trainable embeddings, no dropout
SMALL = {
    "text1_maxlen": 6,
    "text2_maxlen": 9,
    "embedding_dim": 8,
    "dropout": 0.0,
    "kernel_count": 4,
    "kernel_size": [3, 3],
    "dpool_size": [3, 3],
}


def build(seed: int = 0, **overrides):
    torch.manual_seed(seed)
    return build_model("match_pyramid", {**SMALL, **overrides}, VOCAB)


def test_pooling_index_stretches_the_real_rows_over_the_grid():
    index = dynamic_pooling_index(torch.tensor([10, 5, 4, 3, 1, 0]), 10)
    assert index.tolist() == [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],  # full text: every row once
        [0, 0, 1, 1, 2, 2, 3, 3, 4, 4],  # stride 2
        [0, 0, 0, 1, 1, 2, 2, 2, 3, 3],  # stride 2.5
        [0, 0, 0, 0, 1, 1, 1, 2, 2, 2],  # stride 3.33
        [0] * 10,  # one word
        [0] * 10,  # empty: row 0 (MatchZoo 2.x), not a division by zero
    ]
    # upstream's float64 int(i / (18 / 14)): row 9 reads 6 where the exact floor(9 * 14 / 18) is 7
    assert dynamic_pooling_index(torch.tensor([14]), 18).tolist() == [
        [0, 0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 9, 10, 10, 11, 12, 13]
    ]


def test_dynamic_max_pool_reads_only_the_real_region():
    # 4 x 6 matrix of 2 x 3 real words, padding cells larger than any real one: the stretched real
    # region tiles the 2 x 3 grid exactly
    x = torch.arange(1.0, 25.0).view(1, 1, 4, 6)
    x[..., 2:, :] += 100
    x[..., :, 3:] += 100
    pooled = dynamic_max_pool(x, torch.tensor([2]), torch.tensor([3]), (2, 3))
    assert pooled.tolist() == [[[[1, 2, 3], [7, 8, 9]]]]


def test_dynamic_max_pool_of_texts_shorter_than_the_grid_and_of_a_remainder():
    column = torch.tensor([10.0, 20, 30, 40, 50, 90]).view(1, 1, 6, 1)
    # 2 real rows stretched to [r0 r0 r0 r1 r1 r1], windows of 2: r0, max(r0, r1), r1
    assert dynamic_max_pool(column, torch.tensor([2]), torch.tensor([1]), (3, 1)).flatten().tolist() == [10, 20, 20]
    # 5 real rows in 2 windows of 5 // 2 = 2: the fifth row is dropped, as by upstream's 'VALID' pooling
    fifth_dropped = dynamic_max_pool(column[:, :, :5], torch.tensor([5]), torch.tensor([1]), (2, 1))
    assert fifth_dropped.flatten().tolist() == [20, 40]
    # an empty text reads its first row in every window
    assert dynamic_max_pool(column, torch.tensor([0]), torch.tensor([1]), (3, 1)).flatten().tolist() == [10, 10, 10]


def test_batched_pooling_is_per_row():
    # each pair's pooling follows its own lengths: alone, or among batch-mates of other lengths
    model = build().eval()
    q, a = ids(QUESTIONS, 8), ids(ANSWERS, 12)
    with torch.no_grad():
        batch = model(q, a)
        alone = torch.cat([model(q[i : i + 1], a[i : i + 1]) for i in range(len(q))])
    torch.testing.assert_close(batch, alone)
    x = torch.randn(3, 2, 6, 9)
    lengths1, lengths2 = torch.tensor([6, 2, 4]), torch.tensor([1, 9, 5])
    rows = [dynamic_max_pool(x[i : i + 1], lengths1[i : i + 1], lengths2[i : i + 1], (3, 3)) for i in range(3)]
    torch.testing.assert_close(dynamic_max_pool(x, lengths1, lengths2, (3, 3)), torch.cat(rows))


def test_convolves_the_dot_products_of_the_word_vectors():
    model = build().eval()
    q, a = ids(QUESTIONS, 8), ids(ANSWERS, 12)
    images = []
    model.conv.register_forward_hook(lambda module, args, out: images.append(args[0]))
    with torch.no_grad():
        model(q, a)
        vq, va = model.sides.embedding(q[:, :6]), model.sides.embedding(a[:, :9])
    torch.testing.assert_close(images[0], torch.einsum("bid,bjd->bij", vq, va).unsqueeze(1))


def test_defaults_are_the_wikiqa_config_and_the_quora_one_builds():
    model = build_model("match_pyramid", {}, VOCAB)
    assert model.head[2].linear.in_features == 64 * 3 * 10 and model.head[1].p == 0.95
    assert model.sides.embedding.weight.requires_grad and model.sides.embedding.weight.shape == (VOCAB, 300)
    quora = build_model(
        "match_pyramid",
        {
            "text1_maxlen": 20,
            "text2_maxlen": 20,
            "embedding_dim": 8,
            "kernel_size": [5, 5],
            "dpool_size": [5, 5],
            "classes": 2,
        },
        VOCAB,
    ).eval()
    with torch.no_grad():
        assert quora(ids(QUESTIONS, 8), ids(ANSWERS, 12)).shape == (5,)


@pytest.mark.parametrize("classes", [1, 2])
def test_one_finite_score_per_pair(classes):
    with torch.no_grad():
        scores = build(classes=classes).eval()(ids(QUESTIONS, 8), ids(ANSWERS, 12))
    assert scores.shape == (5,) and torch.isfinite(scores).all()


POOLINGS = ["dynamic_max", "adaptive_avg"]


@pytest.mark.parametrize("pooling", POOLINGS)
def test_padding_and_truncation_do_not_change_scores(pooling):
    assert_padding_invariant(build(pooling=pooling), QUESTIONS, ANSWERS)


@pytest.mark.parametrize("pooling", POOLINGS)
def test_gradient_reaches_every_trainable_parameter(pooling):
    assert_gradient_reaches_every_parameter(build(pooling=pooling), ids(QUESTIONS, 8), ids(ANSWERS, 12))


@pytest.mark.parametrize("pooling", POOLINGS)
def test_overfits_32_triples_with_hinge_loss(pooling):
    assert_overfits_triples(build(pooling=pooling))


def _conv_output(model, q, a):
    """The model's scores and its convolution's output [B, C, text1_maxlen, text2_maxlen]."""
    out = []
    hook = model.conv.register_forward_hook(lambda module, args, result: out.append(result))
    with torch.no_grad():
        scores = model(q, a)
    hook.remove()
    return scores, out[0]


def test_default_pooling_is_the_dynamic_max_pooling_every_record_ran():
    """Unset, ``pooling`` is today's arithmetic to the bit: ReLU of the dynamic max pooling of the
    convolution over the real tokens, then the head."""
    model = build().eval()
    assert model.pooling == "dynamic_max"
    q, a = ids(QUESTIONS, 8), ids(ANSWERS, 12)
    scores, conv = _conv_output(model, q, a)
    lq, la = (q[:, :6] != 0).sum(1), (a[:, :9] != 0).sum(1)
    with torch.no_grad():
        expected = model.head(torch.relu(dynamic_max_pool(conv, lq, la, (3, 3))))
    assert torch.equal(scores, expected)
    explicit = build(pooling="dynamic_max").eval()
    with torch.no_grad():
        assert torch.equal(explicit(q, a), scores)


def test_adaptive_avg_pooling_is_matchzoo_py_s_mean_over_the_whole_grid():
    """MatchZoo-py 1.1.1's AdaptiveAvgPool2d written out: window i of n over L cells spans
    [floor(i L / n), ceil((i + 1) L / n)), so 5 rows in 3 windows overlap (rows 0-1, 1-3, 3-4) and 9
    columns make 3 of 3; each window's mean of ReLU(conv) over every cell, padding included."""
    model = build(text1_maxlen=5, pooling="adaptive_avg").eval()
    q, a = ids(QUESTIONS, 8), ids(ANSWERS, 12)
    scores, conv = _conv_output(model, q, a)
    relu = torch.relu(conv)
    rows, cols = [(0, 2), (1, 4), (3, 5)], [(0, 3), (3, 6), (6, 9)]
    pooled = torch.stack(
        [torch.stack([relu[:, :, r0:r1, c0:c1].mean((2, 3)) for c0, c1 in cols], -1) for r0, r1 in rows], -2
    )
    with torch.no_grad():
        torch.testing.assert_close(scores, model.head(pooled), rtol=0, atol=1e-6)
    # the padding cells are read: a question's padding row within the grid moves its window's mean
    # (QUESTIONS[1] has 4 words: row 4 is padding), where dynamic max pooling never reads them
    assert len(QUESTIONS[1]) == 4 and (relu[1, :, 4:, :] > 0).any()


def test_adaptive_avg_pooling_takes_grids_dynamic_pooling_refuses():
    model = build_model("match_pyramid", {"dpool_size": [4, 10], "pooling": "adaptive_avg"}, VOCAB)
    assert model.head[2].linear.in_features == 64 * 4 * 10
    with pytest.raises(ModelConfigError, match="model.pooling"):
        build_model("match_pyramid", {"pooling": "average"}, VOCAB)
    with pytest.raises(ModelConfigError, match="model.dpool_size"):
        build_model("match_pyramid", {"dpool_size": [11, 10], "pooling": "adaptive_avg"}, VOCAB)


def test_two_class_head_fits_32_labelled_pairs():
    assert_classifies_pairs(build(classes=2))


@pytest.mark.parametrize(
    "hparams",
    [
        {"dpool_size": [4, 10]},  # 10 rows in windows of 2 make 5, not 4
        {"text2_maxlen": 8, "dpool_size": [3, 10]},  # more windows than columns
        {"dpool_size": [3]},
    ],
)
def test_pool_grids_upstream_cannot_make_are_refused(hparams):
    with pytest.raises(ModelConfigError, match="model.dpool_size"):
        build_model("match_pyramid", hparams, VOCAB)


def test_dynamic_max_pool_equals_stretching_both_axes_then_max_pooling():
    """The cell gather and channels-last pooling against upstream's recipe as written: gather the
    rows, gather the columns, max-pool. Same values and the same gradient (the first maximum of a
    window gets it), with repeated rows, empty texts and a remainder row dropped."""

    def upstream(x, lengths1, lengths2, size):
        b, c, m1, m2 = x.shape
        rows = dynamic_pooling_index(lengths1, m1)[:, None, :, None].expand(b, c, m1, m2)
        cols = dynamic_pooling_index(lengths2, m2)[:, None, None, :].expand(b, c, m1, m2)
        return torch.nn.functional.max_pool2d(x.gather(2, rows).gather(3, cols), (m1 // size[0], m2 // size[1]))

    torch.manual_seed(0)
    x = torch.randn(6, 4, 10, 40).round(decimals=1)  # ties within windows
    lengths1, lengths2 = torch.tensor([10, 3, 0, 7, 1, 10]), torch.tensor([40, 9, 0, 17, 40, 1])
    grad = torch.randn(6, 4, 3, 10)
    ours, theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    pooled = dynamic_max_pool(ours, lengths1, lengths2, (3, 10))
    expected = upstream(theirs, lengths1, lengths2, (3, 10))
    assert torch.equal(pooled, expected)
    (pooled * grad).sum().backward()
    (expected * grad).sum().backward()
    torch.testing.assert_close(ours.grad, theirs.grad, rtol=0, atol=1e-6)
