import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ansel.evaluation.scoring import score_cached, score_pairs
from ansel.models.registry import ModelConfigError, build_model, parse_hparams
from tests.models.fitting import assert_ranks_positives_first, fit
from tests.models.ids import padded_ids

MTAS = {"embedding_dim": 8, "hidden": 5, "attention": 4, "heads": 3, "max_len": 12}
# the paper's readings: masked attention, weighted sum, eq. (7)'s classifier
MTAS_PAPER = {**MTAS, "mask_padding": True, "head_pooling": "sum", "classifier": "paper"}
IARNN = {"embedding_dim": 8, "hidden": 5, "max_len": 12}
CNN = {"embedding_dim": 8, "filters": 6, "kernels": [1, 2, 3, 5], "max_len": 12}
# the Table 4 baselines of other papers' architectures, as the MTAS authors' code runs them
AS_CODED = {"embedding_dim": 8, "hidden": 5, "mask_padding": False, "max_len": 12, "init": "tf"}
VARIANTS = {
    "mtas": ("mtas", MTAS),
    "mtas_paper": ("mtas", MTAS_PAPER),
    "iarnn_word": ("iarnn_word", IARNN),
    "iarnn_word_masked": ("iarnn_word", {**IARNN, "mask_padding": True}),
    "multi_cnn": ("multi_cnn", CNN),
    "multi_cnn_masked": ("multi_cnn", {**CNN, "mask_padding": True}),
    "qa_bilstm": ("qa_bilstm", AS_CODED),
    "ap_bilstm": ("ap_bilstm", AS_CODED),
}
PADDING_INVARIANT = ["mtas_paper", "iarnn_word_masked", "multi_cnn_masked"]
READS_PADDING = ["mtas", "iarnn_word", "multi_cnn", "qa_bilstm", "ap_bilstm"]
CATEGORIES = 4


def _build(variant, vocab=30, seed=0, **changes):
    torch.manual_seed(seed)
    arch, hparams = VARIANTS[variant]
    return build_model(arch, {**hparams, **changes}, vocab_size=vocab, n_categories=CATEGORIES)


@pytest.mark.parametrize("variant", VARIANTS)
def test_shapes_and_cosine_range(variant, padded_pairs):
    m = _build(variant).eval()
    q, a = padded_pairs(30)
    with torch.no_grad():
        s = m(q, a)
    assert s.shape == (4,) and bool(((s >= -1 - 1e-6) & (s <= 1 + 1e-6)).all())
    if variant.startswith("mtas"):
        assert m.classify(q).shape == (4, CATEGORIES)
        assert m.answer_attention(m.states(q)[0].max(1).values, *m.states(a)).shape == (4, 3 * 10)
        assert not m.siamese
    if variant.startswith("multi_cnn"):
        assert m.encode_question(q).shape == m.encode_answer(a).shape == (4, 4 * 6)


def test_upstream_classifier_returns_sigmoid_outputs(padded_pairs):
    q, _ = padded_pairs(30)
    logits = _build("mtas").classify(q)
    assert bool(((logits > 0) & (logits < 1)).all())


@pytest.mark.parametrize("variant", PADDING_INVARIANT)
def test_padding_does_not_change_scores(variant, padded_pairs):
    m = _build(variant).eval()
    q, a = padded_pairs(30)
    a[3, 1:] = 0  # a one-word answer: shorter than multi_cnn's widest kernel
    with torch.no_grad():
        s = m(q, a)
        assert torch.allclose(s, m(F.pad(q, (0, 4)), F.pad(a, (0, 6))), atol=1e-6)
        # a row scores the same without its batch-mates' padding
        assert torch.allclose(s[3:], m(q[3:, :5], a[3:, :1]), atol=1e-6)
        if variant == "mtas_paper":
            assert torch.allclose(m.classify(q), m.classify(F.pad(q, (0, 4))), atol=1e-6)


@pytest.mark.parametrize("variant", READS_PADDING)
def test_every_as_coded_row_reads_padding_at_a_fixed_width(variant, padded_pairs):
    """Table 4's rows as the authors' TF code runs them: fixed max_len-word inputs, padding read,
    so a score depends on the text's padding up to max_len but never on how far its batch pads;
    masking the padding gives other scores."""
    m = _build(variant).eval()
    q, a = padded_pairs(30)
    with torch.no_grad():
        s = m(q, a)
        assert torch.allclose(s, m(F.pad(q, (0, 4)), F.pad(a, (0, 2))), atol=1e-6)
        assert torch.allclose(s[:1], m(q[:1], a[:1, :4]), atol=1e-6)  # answer 0 has 4 words
        masked = _build(variant, mask_padding=True).eval()
        assert not torch.allclose(s, masked(q, a), atol=1e-4)


@pytest.mark.parametrize("arch", ["qa_bilstm", "ap_bilstm", "iarnn_word"])
def test_tf_initialisation_sets_the_forget_gate_bias(arch):
    """init: tf (the MTAS authors' LSTMs): forget-gate bias 1, the other biases 0; torch's own
    initialisation otherwise (the AP paper's rows)."""
    biases = {
        init: dict(build_model(arch, {**AS_CODED, "init": init}, vocab_size=30).named_parameters())
        for init in ("tf", "torch")
    }
    ih = next(n for n in biases["tf"] if n.endswith("bias_ih_l0"))
    hidden = AS_CODED["hidden"]
    assert torch.equal(biases["tf"][ih][hidden : 2 * hidden], torch.ones(hidden))
    assert not biases["tf"][ih][:hidden].any() and not biases["tf"][ih.replace("_ih", "_hh")].any()
    assert biases["torch"][ih][hidden : 2 * hidden].abs().sum() > 0 and not torch.equal(
        biases["torch"][ih][hidden : 2 * hidden], torch.ones(hidden)
    )


def test_as_coded_mtas_reads_padding_at_a_fixed_width(padded_pairs):
    """Unmasked, padding takes attention and changes scores; every text is read max_len wide, so a
    row's score does not depend on how far its batch pads."""
    m = _build("mtas").eval()
    q, a = padded_pairs(30)
    with torch.no_grad():
        s = m(q, a)
        assert torch.allclose(s, m(F.pad(q, (0, 4)), F.pad(a, (0, 2))), atol=1e-6)
        assert torch.allclose(s[:1], m(q[:1], a[:1, :4]), atol=1e-6)
        pooled = m.states(q)[0].max(1).values
        s_t = m.answer_attention.weights(pooled, *m.states(a))
        assert s_t.shape == (4, 3, 12) and bool((s_t[0, :, 4:] > 0).all())  # answer 0 has 4 words
        masked = _build("mtas", mask_padding=True).eval()
        assert not torch.allclose(s[0], masked(q, a)[0], atol=1e-4)


@pytest.mark.parametrize("variant", VARIANTS)
def test_gradient_reaches_every_parameter(variant, padded_pairs):
    m = _build(variant)
    q, a = padded_pairs(30, seed=1)
    m(q, a).sum().backward()
    classifier = {n for n, _ in m.named_parameters() if n.startswith("classifier.")}
    for name, p in m.named_parameters():
        assert (p.grad is not None and p.grad.abs().sum() > 0) != (name in classifier), name
    if classifier:  # the category head trains the embedding and the BiLSTM too
        m.zero_grad()
        F.cross_entropy(m.classify(q), torch.arange(4) % CATEGORIES).backward()
        for name, p in m.named_parameters():
            reached = p.grad is not None and p.grad.abs().sum() > 0
            assert reached == (not name.startswith("answer_attention.")), name


@pytest.mark.parametrize("variant", VARIANTS)
def test_overfits_32_triples(variant):
    m = _build(variant, vocab=60)
    g = torch.Generator().manual_seed(5)
    q, pos, neg = (torch.randint(1, 60, (32, n), generator=g) for n in (4, 6, 6))
    assert_ranks_positives_first(m, q, pos, neg, margin=0.2, steps=60, lr=0.02)


@pytest.mark.parametrize("variant,fitted", [("mtas", 30), ("mtas_paper", 32)])
def test_joint_loss_fits_rankings_and_categories(variant, fitted):
    """Hinge + category cross-entropy. The as-coded head's logits are sigmoid outputs: bounded in
    (0, 1), and a unit saturated at 0 gets no gradient, so it may leave a question or two wrong."""
    m = _build(variant, vocab=60)
    g = torch.Generator().manual_seed(6)
    q, pos, neg = (torch.randint(1, 60, (32, n), generator=g) for n in (4, 6, 6))
    cats = torch.arange(32) % CATEGORIES

    def loss():
        rank = F.relu(0.2 - m(q, pos) + m(q, neg)).mean()
        return 0.5 * rank + 0.5 * F.cross_entropy(m.classify(q), cats)

    fit(m, loss, steps=100, lr=0.02)
    with torch.no_grad():
        assert bool((m(q, pos) > m(q, neg)).all())
        assert (m.classify(q).argmax(1) == cats).sum() >= fitted


@pytest.mark.parametrize("changes", [{}, {"mask_padding": True, "head_pooling": "sum"}])
def test_identical_heads_score_like_one_head(changes, padded_pairs):
    """cos([q; q; q], [h; h; h]) = cos(q, h): three heads sharing one head's weights score like it."""
    one, three = _build("mtas", heads=1, **changes).eval(), _build("mtas", heads=3, seed=1, **changes).eval()
    three.embed.load_state_dict(one.embed.state_dict())
    three.encoder.load_state_dict(one.encoder.state_dict())
    with torch.no_grad():
        for name in ("question_proj.weight", "answer_proj.weight", "score"):
            three.answer_attention.get_parameter(name).copy_(one.answer_attention.get_parameter(name).repeat(3, 1))
        q, a = padded_pairs(30)
        assert torch.allclose(three(q, a), one(q, a), atol=1e-6)


def test_as_coded_attention_skips_the_masking_and_sums_in_place_to_the_same_bits(padded_pairs):
    """As coded every answer position is read (an all-True mask): the heads' softmax and max skip the
    masking passes, and W_qm o_q is added into W_am h^a in place. Their output and every gradient are
    those of the masking path and of the plain, out-of-place formula, to the bit."""
    m = _build("mtas").eval()
    q, a = padded_pairs(30)
    att = m.answer_attention
    assert att.reads_padding

    def plain(oq, ha, ma):
        summed = torch.tanh(att.answer_proj(ha) + att.question_proj(oq).unsqueeze(1))
        s = torch.softmax((summed.unflatten(-1, (att.heads, -1)) * att.score).sum(-1).transpose(1, 2), -1)
        return torch.tanh((s.transpose(1, 2).unsqueeze(-1) * ha.unsqueeze(2)).flatten(2).max(1).values)

    def masking(oq, ha, ma):
        att.reads_padding = False
        try:
            return att(oq, ha, ma)
        finally:
            att.reads_padding = True

    results = []
    for heads in (att, masking, plain):
        oq, (ha, ma) = m.states(q)[0].max(1).values, m.states(a)
        out = heads(oq, ha, ma)
        loss = (out * torch.arange(out.numel()).reshape(out.shape)).sum()
        results.append((out, torch.autograd.grad(loss, list(m.parameters()), allow_unused=True)))
    for out, grads in results[1:]:
        assert torch.equal(out, results[0][0])
        assert all((x is None and y is None) or torch.equal(x, y) for x, y in zip(grads, results[0][1]))


@pytest.mark.parametrize("width", [12, 25])  # one chunk of positions and a part; several and a part
def test_as_coded_heads_pool_without_gradients_to_the_same_bits(padded_pairs, width):
    """Scoring (no gradients) pools the as-coded heads by a running max over a few positions at a
    time: the scores are those of the whole product's max, to the bit."""
    m = _build("mtas", max_len=width).eval()
    q, a = padded_pairs(30)
    oq, (ha, ma) = m.states(q)[0].max(1).values, m.states(a)
    with torch.no_grad():
        running = m.answer_attention(oq, ha, ma)
    whole = m.answer_attention(oq, ha, ma)
    assert whole.requires_grad and torch.equal(running, whole.detach())


def test_mtas_needs_at_least_two_categories():
    for n in (None, 0, 1):
        with pytest.raises(ValueError, match=r"^models\.m: arch 'mtas' classifies question categories"):
            build_model("mtas", MTAS, vocab_size=30, where="models.m", n_categories=n)


def test_classify_reads_the_question_only(padded_pairs):
    """Changing the answer-side attention changes the scores, not the categories."""
    m = _build("mtas").eval()
    q, a = padded_pairs(30)
    with torch.no_grad():
        logits, scores = m.classify(q), m(q, a)
        m.answer_attention.answer_proj.weight.mul_(3.0)
        assert torch.equal(m.classify(q), logits)
        assert not torch.allclose(m(q, a), scores)


def test_multi_cnn_cached_scoring_equals_pairwise():
    m = _build("multi_cnn").eval()
    q_ids = padded_ids([[1, 2], [3, 4, 5, 6], [7]], 6).numpy()
    a_ids = padded_ids([[8, 9, 10], [11], [12, 13, 14, 15, 16, 17], [2, 3]], 8).numpy()
    qi, ai = np.array([0, 0, 1, 2, 2, 1]), np.array([0, 1, 2, 3, 0, 0])
    assert np.allclose(
        score_cached(m, q_ids, a_ids, qi, ai, batch_size=2),
        score_pairs(m, q_ids, a_ids, qi, ai, batch_size=4),
        atol=1e-6,
    )


@pytest.mark.parametrize(
    "arch,key,value,message",
    [
        ("multi_cnn", "kernels", [], "is not a list of positive kernel widths"),
        ("multi_cnn", "kernels", [2, 0], "is not a list of positive kernel widths"),
        ("mtas", "head_pooling", "mean", "is not one of max, sum"),
        ("mtas", "classifier", "tanh", "is not one of upstream, paper"),
        ("mtas", "attention", 0, "is not positive"),
    ],
)
def test_hyperparameters_are_range_checked(arch, key, value, message):
    with pytest.raises(ModelConfigError, match=rf"^m\.{key}: {value!r} {message}$".replace("[", r"\[")):
        parse_hparams(arch, {key: value}, "m")


def test_defaults_follow_the_code():
    mtas, iarnn, cnn, bilstm = (parse_hparams(a, {}) for a in ("mtas", "iarnn_word", "multi_cnn", "qa_bilstm"))
    assert (mtas.embedding_dim, mtas.hidden, mtas.attention, mtas.heads, mtas.max_len) == (150, 300, 100, 4, 100)
    assert (mtas.mask_padding, mtas.head_pooling, mtas.classifier) == (False, "max", "upstream")
    assert (iarnn.embedding_dim, iarnn.hidden, iarnn.mask_padding, iarnn.max_len, iarnn.init) == (
        150,
        1000,
        False,
        100,
        "tf",
    )
    assert (cnn.filters, tuple(cnn.kernels), cnn.mask_padding, cnn.max_len) == (600, (1, 2, 3, 5), False, 100)
    assert (bilstm.mask_padding, bilstm.init) == (True, "torch")  # the AP paper's reading, unless a row says
