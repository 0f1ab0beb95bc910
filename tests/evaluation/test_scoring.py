import numpy as np
import pytest
import torch

from ansel.evaluation import scoring
from ansel.evaluation.scoring import score, score_cached, score_pairs
from ansel.models.base import InteractionRanker
from ansel.models.registry import build_model


def padded_texts(n, max_len, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, vocab, (n, max_len), generator=g)
    lengths = torch.randint(1, max_len + 1, (n,), generator=g)
    ids[torch.arange(max_len).unsqueeze(0) >= lengths.unsqueeze(1)] = 0
    return ids


@pytest.fixture
def pool():
    q_ids = padded_texts(7, 6, 40, seed=0)
    a_ids = padded_texts(15, 12, 40, seed=1)
    a_ids[3] = 0  # an empty answer among ragged, padded ones
    rng = np.random.default_rng(2)
    qi = rng.integers(0, 7, 60)  # repeated questions and answers, in no particular order
    ai = rng.integers(0, 15, 60)
    return q_ids, a_ids, qi, ai


MV_LSTM = {"embedding_dim": 8, "hidden": 5, "text1_maxlen": 6, "text2_maxlen": 12, "top_k": 10}
SA = {"embedding_dim": 8, "heads": 2, "group_size": 3}
MTAS = {"embedding_dim": 8, "hidden": 5, "attention": 4, "max_len": 12}
# every family whose sides are encoded alone: siamese (vectors), attentive pooling (encoder states
# composed pairwise), interaction (per-token states interacted)
MODELS = {
    "QA-CNN": ("qa_cnn", {"embedding_dim": 8, "filters": 10, "kernel": 3}),
    "QA-LSTM": ("qa_lstm", {"embedding_dim": 8, "hidden": 6}),
    "AP-CNN": ("ap_cnn", {"embedding_dim": 8, "filters": 6, "kernel": 3}),
    "AP-biLSTM": ("ap_bilstm", {"embedding_dim": 8, "hidden": 5}),
    "GGSA attention, two encoders": ("ggsa", {**SA, "composition": "attention", "shared_encoder": False}),
    "GGSA multihop": ("ggsa", {**SA, "composition": "multihop"}),
    "multihop LSTM": ("multihop_lstm", {"embedding_dim": 8, "hidden": 5}),
    "MV-LSTM": ("mv_lstm", MV_LSTM),
    "aMV-LSTM (Q)": ("mv_lstm", {**MV_LSTM, "attend_question": True}),
    "aMV-LSTM (A)": ("mv_lstm", {**MV_LSTM, "attend_answer": True}),
    "aMV-LSTM (Q+A)": ("mv_lstm", {**MV_LSTM, "attend_question": True, "attend_answer": True}),
    "MV-LSTM masked": ("mv_lstm", {**MV_LSTM, "mask_padding": True}),
    "MV-LSTM cosine": ("mv_lstm", {**MV_LSTM, "match": "cosine"}),
    "aMV-LSTM paper's variant": (
        "mv_lstm",
        {**MV_LSTM, "attend_question": True, "match": "cosine", "mask_padding": True},
    ),
    # MTAS: the answer's attention reads the question, its BiLSTM does not; as coded (fixed width,
    # padding read) and masked, with each head pooling
    "MTAS": ("mtas", {**MTAS, "heads": 2}),
    "MTAS masked, summed heads": ("mtas", {**MTAS, "mask_padding": True, "head_pooling": "sum"}),
    # texts longer than the fixed widths too: truncated on both paths
    "MatchPyramid": (
        "match_pyramid",
        {
            "embedding_dim": 8,
            "text1_maxlen": 4,
            "text2_maxlen": 9,
            "kernel_count": 4,
            "dpool_size": [2, 3],
            "dropout": 0.0,
        },
    ),
}


def model_named(name):
    arch, hparams = MODELS[name]
    torch.manual_seed(0)
    return build_model(arch, hparams, vocab_size=40, n_categories=3)  # MTAS classifies; the others ignore it


def widened(ids, columns):
    return torch.cat([ids, ids.new_zeros(len(ids), columns)], 1)


def text(row):
    return tuple(row[row != 0].tolist())


def count_encoded(model, monkeypatch):
    """{"q": texts, "a": texts} that the model's side encoders receive, as they receive them."""
    seen = {"q": [], "a": []}

    def counting(encode, side):
        def wrapped(ids, *args, **kwargs):
            which = "a" if side == "a" or kwargs.get("answer") else "q"
            seen[which] += [text(row) for row in ids]
            return encode(ids, *args, **kwargs)

        return wrapped

    methods = (
        {"encode_question": "q", "encode_answer": "a"}
        if model.siamese
        else {"encode_question_side": "q", "encode_answer_side": "a"}
        if isinstance(model, InteractionRanker)
        else {"encode_side": None}
    )
    for method, side in methods.items():
        monkeypatch.setattr(model, method, counting(getattr(model, method), side))
    return seen


@pytest.mark.parametrize("name", MODELS)
def test_cached_scores_are_each_pairs_own_forward_pass_at_any_padding_and_batch(pool, name):
    """Sides encoded once in length-sorted batches, pairs scored per batch of answers: each pair's
    score is that of its own forward pass, to 1e-6, whatever the padding width or batch size."""
    q_ids, a_ids, qi, ai = pool
    model = model_named(name)
    alone = score_pairs(model.eval(), q_ids, a_ids, qi, ai, batch_size=1)
    model.train()
    for q_pad, a_pad, batch_size in ((0, 0, 8), (5, 9, 3), (2, 30, 1), (0, 4, 1000)):
        cached = score(model, widened(q_ids, q_pad).numpy(), widened(a_ids, a_pad).numpy(), qi, ai, batch_size)
        assert model.training  # score leaves the mode as it found it
        assert cached.shape == (60,) and cached.dtype == np.float32
        np.testing.assert_allclose(cached, alone, rtol=1e-6, atol=1e-6, err_msg=f"{q_pad}, {a_pad}, {batch_size}")
    assert np.unique(cached).size > 30  # scores differ across pairs: order matters


@pytest.mark.parametrize("name", MODELS)
def test_cached_rankings_are_those_of_each_pairs_own_forward_pass(name):
    """A split's candidate table: each question beside distinct candidates; every question ranks
    its candidates as their own forward passes do."""
    q_ids, a_ids = padded_texts(9, 6, 40, seed=3), padded_texts(40, 12, 40, seed=4)
    rng = np.random.default_rng(5)
    qi = np.repeat(np.arange(9), 12)
    ai = np.concatenate([rng.choice(40, 12, replace=False) for _ in range(9)])
    model = model_named(name).eval()
    alone = score_pairs(model, q_ids, a_ids, qi, ai, batch_size=1).reshape(9, 12)
    cached = score(model, q_ids, widened(a_ids, 7), qi, ai, batch_size=5).reshape(9, 12)
    np.testing.assert_allclose(cached, alone, rtol=1e-6, atol=1e-6)
    assert np.array_equal(np.argsort(-cached, 1, kind="stable"), np.argsort(-alone, 1, kind="stable"))


@pytest.mark.parametrize("name", MODELS)
def test_each_distinct_text_is_encoded_once_a_pass(pool, name, monkeypatch):
    """Answers recur across questions (InsuranceQA: 500 candidates of ~24k answers a question):
    however the pairs are ordered and batched, a pass encodes each distinct text exactly once."""
    q_ids, a_ids, qi, ai = pool
    model = model_named(name)
    seen = count_encoded(model, monkeypatch)
    score(model, q_ids, a_ids, qi, ai, batch_size=4)
    assert sorted(seen["q"]) == sorted(text(q_ids[r]) for r in np.unique(qi))
    assert sorted(seen["a"]) == sorted(text(a_ids[r]) for r in np.unique(ai))
    assert len(seen["a"]) < len(ai)


@pytest.mark.parametrize(
    ("name", "in_place"), [("MTAS", True), ("MV-LSTM", True), ("QA-LSTM", True), ("AP-CNN", False)]
)
def test_answers_each_beside_one_question_are_scored_from_their_batch_in_place(name, in_place, monkeypatch):
    """A split whose answers each stand beside one question (WikiQA, the synthetic corpora): the
    pairs of a batch of answers read its encoded states themselves, not a copy gathered per pair;
    a convolution's strided states are still gathered (a product over them rounds by row order).
    The scores are those of each pair's own forward pass either way."""
    q_ids, a_ids = padded_texts(6, 6, 40, seed=6), padded_texts(30, 12, 40, seed=7)
    qi, ai = np.repeat(np.arange(6), 5), np.random.default_rng(8).permutation(30)
    model = model_named(name).eval()
    encoded, given, sides = [], [], scoring._sides

    def spying(model):
        encode_question, encode_answer, pair_scores = sides(model)

        def encoding(ids, *args, **kwargs):
            encoded.append(scoring._parts(encode_answer(ids, *args, **kwargs)))
            return encoded[-1]

        def scoring_pairs(q, a):
            given.append(a)
            return pair_scores(q, a)

        return encode_question, encoding, scoring_pairs

    monkeypatch.setattr(scoring, "_sides", spying)
    cached = score(model, q_ids, a_ids, qi, ai, batch_size=8)
    np.testing.assert_allclose(cached, score_pairs(model, q_ids, a_ids, qi, ai, batch_size=1), rtol=1e-6, atol=1e-6)
    assert len(given) == len(encoded) == 4
    shared = [a[0].data_ptr() == e[0].data_ptr() for a, e in zip(given, encoded)]
    assert shared == [in_place] * 4


def test_a_model_whose_answer_encoding_reads_the_question_is_scored_pair_by_pair(pool):
    q_ids, a_ids, qi, ai = pool
    torch.manual_seed(0)
    model = build_model("iggsa", SA, vocab_size=40).eval()
    with pytest.raises(TypeError, match="score_pairs"):
        score_cached(model, q_ids, a_ids, qi, ai, batch_size=4)
    with torch.no_grad():
        direct = model(q_ids[qi], a_ids[ai]).numpy()
    np.testing.assert_allclose(score(model, q_ids, a_ids, qi, ai, batch_size=16), direct, atol=1e-6)


def test_mismatched_index_arrays_are_rejected(pool):
    q_ids, a_ids, qi, ai = pool
    model = model_named("QA-CNN").eval()
    for fn in (score_pairs, score_cached):
        with pytest.raises(ValueError, match="pairs"):
            fn(model, q_ids, a_ids, qi, ai[:-1], batch_size=4)


def test_no_pairs_no_scores(pool):
    q_ids, a_ids, _, _ = pool
    model = model_named("AP-CNN")
    assert score(model, q_ids, a_ids, [], []).shape == (0,)
