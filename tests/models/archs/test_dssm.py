import io

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from ansel.data.vocab import Lexicon
from ansel.evaluation.scoring import score_cached, score_pairs
from ansel.models import build_model
from ansel.models.archs.dssm import letter_trigrams, trigram_table
from ansel.models.layers import OutputHead
from ansel.models.registry import ModelConfigError, parse_hparams
from tests.models.fitting import assert_classifies, assert_ranks_positives_first
from tests.models.ids import padded_ids

# small widths; trigrams kept from 2 occurrences, so the filter drops some
SMALL = {
    "dssm": {"hidden_sizes": [12, 8], "dropout": 0.0, "trigram_min_freq": 2},
    "cdssm": {
        "embedding_dim": 8,
        "filters": 10,
        "hidden_sizes": [6],
        "dropout": 0.0,
        "trigram_min_freq": 2,
        "text1_maxlen": 6,
        "text2_maxlen": 10,
    },
}
CASES = [(arch, classes) for arch in SMALL for classes in (1, 2)]


def _lexicon(n_words: int = 60, seed: int = 0) -> Lexicon:
    rng = np.random.default_rng(seed)
    words = set()
    while len(words) < n_words:
        words.add("".join(rng.choice(list("abcdef"), rng.integers(1, 7))))
    tokens = ["<pad>", "<unk>", *sorted(words)]
    n = len(tokens)
    return Lexicon(tokens, np.ones(n, np.int64), rng.integers(1, 50, n), n_docs=100)


def _build(arch: str, classes: int = 1, lexicon: Lexicon | None = None, **overrides):
    lexicon = lexicon or _lexicon()
    hparams = {**SMALL[arch], "classes": classes, **overrides}
    return build_model(arch, hparams, len(lexicon.tokens), lexicon=lexicon)


def _texts(n: int, length: int, vocab: int, g: torch.Generator) -> list[list[int]]:
    """n texts of 1..length word ids in [1, vocab) (1 = <unk> included)."""
    lengths = torch.randint(1, length + 1, (n,), generator=g)
    return [torch.randint(1, vocab, (int(k),), generator=g).tolist() for k in lengths]


def test_letter_trigrams_mark_word_boundaries_and_keep_repeats():
    assert letter_trigrams("a") == ["#a#"]
    assert letter_trigrams("aaaa") == ["#aa", "aaa", "aaa", "aa#"]


def test_trigram_filter_counts_occurrences_over_vocabulary_words():
    tokens = ["<pad>", "<unk>", "ab", "abc", "abab", "abba", "aaaa", "bc"]
    # per word: #ab ab# | #ab abc bc# | #ab aba bab ab# | #ab abb bba ba# | #aa aaa aaa aa# | #bc bc#
    # counts: #ab 4, ab# 2, bc# 2, aaa 2 (twice in one word), every other trigram 1
    cf = np.array([0, 0, 1, 1, 1, 1, 1, 1000])  # corpus frequency is not the filter's count
    lex = Lexicon(tokens, np.ones(len(tokens), np.int64), cf, n_docs=10)
    table, kept = trigram_table(lex, min_freq=2, max_freq=3)
    assert kept == ["aaa", "ab#", "bc#"]  # by decreasing count, then alphabetically
    pad = len(kept)
    assert table.shape == (len(tokens), 2) and table.dtype == np.int64
    assert table.tolist() == [[pad, pad], [pad, pad], [1, pad], [2, pad], [1, pad], [pad, pad], [0, 0], [2, pad]]
    # the bounds are inclusive: 4 is kept from max 4 on, 1 from min 1
    assert "#ab" in trigram_table(lex, 2, 4)[1]
    table, kept = trigram_table(lex, 1, 3)
    assert "abc" in kept and (table[:2] == len(kept)).all()  # <pad>, <unk> hash to nothing even so
    assert trigram_table(lex, 5, 9)[0].tolist() == [[0]] * len(tokens)  # nothing kept: all padding


def _dense_bag(lexicon: Lexicon, kept: list[str], ids: torch.Tensor) -> torch.Tensor:
    """The explicit bag-of-trigrams count vectors [..., n_trigrams] of id rows, from the words' strings."""
    index = {g: i for i, g in enumerate(kept)}
    bag = torch.zeros(*ids.shape[:-1], len(kept))
    for pos in np.ndindex(*ids.shape[:-1]):
        for wid in ids[pos].tolist():
            if wid > 1:  # <pad>, <unk> hash to nothing
                for g in letter_trigrams(lexicon.tokens[wid]):
                    if g in index:
                        bag[pos + (index[g],)] += 1
    return bag


def test_word_hashing_is_a_dense_layer_over_the_bag_of_trigrams():
    lex = _lexicon(n_words=25, seed=3)
    _, kept = trigram_table(lex, 2, 10_000)
    ids = padded_ids([[2, 5, 5, 9], [1, 7], [26, 3, 4, 1, 8, 12]], 8)
    assert 0 < len(kept) < len({g for w in lex.tokens[2:] for g in letter_trigrams(w)})  # the filter bites

    dssm = _build("dssm", lexicon=lex, hidden_sizes=[7])
    hashing = dssm.encoder[0]
    with torch.no_grad():
        hashing.bias.normal_()
    weight, bias = hashing.bag.weight[: len(kept)], hashing.bias
    assert len(dssm.encoder) == 1  # one hidden size: the single linear Dense, nothing after it
    expected = _dense_bag(lex, kept, ids) @ weight + bias
    assert torch.allclose(dssm.encode_question(ids), expected, atol=1e-5)

    cdssm = _build("cdssm", lexicon=lex)
    per_word = cdssm.hashing(ids.unsqueeze(-1))  # [B, L, E]: each word its own bag, no bias
    expected = _dense_bag(lex, kept, ids.unsqueeze(-1)) @ cdssm.hashing.bag.weight[: len(kept)]
    assert per_word.shape == (3, 8, 8) and torch.allclose(per_word, expected, atol=1e-5)


@pytest.mark.parametrize("arch,classes", CASES)
def test_shapes(arch, classes):
    m = _build(arch, classes).eval()
    q, a = torch.randint(0, 62, (4, 5)), torch.randint(0, 62, (4, 13))
    width = SMALL[arch]["hidden_sizes"][-1]
    assert m.encode_question(q).shape == m.encode_answer(a).shape == (4, width)
    s = m(q, a)
    assert s.shape == (4,)
    cosine = F.cosine_similarity(m.encode_question(q), m.encode_answer(a), dim=-1)
    if classes == 1:
        assert torch.allclose(s, cosine, atol=1e-6)
    else:  # MatchZoo's Dense(2, softmax) on the cosine: the score is its log-odds
        assert isinstance(m.head, OutputHead) and torch.allclose(s, m.head(cosine.unsqueeze(-1)), atol=1e-6)


def test_mlp_follows_matchzoo_structure():
    lex = _lexicon()
    dssm = _build("dssm", lexicon=lex, hidden_sizes=[9, 8, 7, 6], dropout=0.3)
    types = [type(layer) for layer in dssm.encoder]
    assert types[1:] == [nn.Tanh, nn.Linear, nn.Tanh, nn.Dropout, nn.Linear, nn.Tanh, nn.Dropout, nn.Linear, nn.Dropout]
    cdssm = _build("cdssm", lexicon=lex, hidden_sizes=[9, 8])
    assert [type(layer) for layer in cdssm.mlp] == [nn.Linear, nn.ReLU, nn.Linear, nn.Dropout]
    assert [type(layer) for layer in _build("cdssm", lexicon=lex).mlp] == [nn.Linear]


def test_cdssm_defaults_follow_the_wikiqa_config():
    cfg = parse_hparams("cdssm", {})
    assert (cfg.text1_maxlen, cfg.text2_maxlen, cfg.embedding_dim, cfg.filters, cfg.kernel) == (20, 40, 50, 50, 3)
    assert (tuple(cfg.hidden_sizes), cfg.dropout, cfg.trigram_min_freq, cfg.trigram_max_freq) == ((10,), 0.9, 5, 10_000)
    assert tuple(parse_hparams("dssm", {}).hidden_sizes) == (300,)


@pytest.mark.parametrize(
    "bad",
    [{"hidden_sizes": []}, {"hidden_sizes": [3, 0]}, {"trigram_min_freq": 6, "trigram_max_freq": 5}, {"classes": 3}],
)
def test_bad_hparams_are_refused(bad):
    for arch in SMALL:
        with pytest.raises(ModelConfigError):
            parse_hparams(arch, bad)


@pytest.mark.parametrize("arch,classes", CASES)
def test_padding_does_not_change_scores(arch, classes):
    m = _build(arch, classes).eval()
    q_rows, a_rows = [[3, 4, 5], [6, 7, 1, 9, 10]], [[11, 12], [13, 14, 15, 16, 17, 2, 20, 21]]
    tight = m(padded_ids(q_rows, 5), padded_ids(a_rows, 8))
    within = m(padded_ids(q_rows, 6), padded_ids(a_rows, 9))  # SMALL cdssm: maxlen 6 / 10
    beyond = m(padded_ids(q_rows, 15), padded_ids(a_rows, 25))
    assert torch.allclose(tight, within, atol=1e-6) and torch.allclose(tight, beyond, atol=1e-6)
    # a row's score does not depend on its batch-mates
    alone = m(padded_ids(q_rows[:1], 3), padded_ids(a_rows[:1], 2))
    assert torch.allclose(alone[0], tight[0], atol=1e-6)


def test_cdssm_reads_only_the_first_maxlen_words():
    m = _build("cdssm").eval()
    q, a = padded_ids([[3, 4, 5, 6, 7, 8]], 6), padded_ids([list(range(2, 12))], 10)  # exactly 6 / 10 words
    longer_q, longer_a = torch.cat([q, torch.full((1, 3), 20)], 1), torch.cat([a, torch.full((1, 3), 20)], 1)
    assert torch.equal(m(q, a), m(longer_q, longer_a))
    assert not torch.equal(m(q, a), m(q, padded_ids([list(range(2, 11)) + [20]], 10)))


def test_cdssm_pools_padding_positions_as_matchzoo():
    m = _build("cdssm").eval()  # maxlen 6, kernel 3
    with torch.no_grad():  # real windows: conv < its bias 0.5; windows of padding only: exactly 0.5
        m.hashing.bag.weight.abs_().neg_()
        m.conv.weight.abs_()
        m.conv.bias.fill_(0.5)
    q = padded_ids([[3, 4]], 2)  # positions 3..5 see only padding
    assert torch.allclose(m.encode_question(q), m.mlp(torch.full((1, 10), 0.5)))


@pytest.mark.parametrize("arch,classes", CASES)
def test_cached_scoring_equals_pairwise(arch, classes):
    m = _build(arch, classes).eval()
    q_ids = padded_ids([[1, 2], [3, 4, 5, 6], [7]], 6).numpy()
    a_ids = padded_ids([[8, 9, 10], [11], [12, 13, 14, 15, 16], [2, 3]], 8).numpy()
    qi, ai = np.array([0, 0, 1, 2, 2, 1]), np.array([0, 1, 2, 3, 0, 0])
    assert np.allclose(
        score_cached(m, q_ids, a_ids, qi, ai, batch_size=2),
        score_pairs(m, q_ids, a_ids, qi, ai, batch_size=4),
        atol=1e-6,
    )


@pytest.mark.parametrize("arch", SMALL)
def test_gradient_reaches_every_parameter(arch):
    m = _build(arch, classes=2, hidden_sizes=[6, 5, 4], dropout=0.1)
    g = torch.Generator().manual_seed(0)
    q, a = padded_ids(_texts(6, 5, 62, g), 5), padded_ids(_texts(6, 9, 62, g), 9)
    m(q, a).sum().backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def _triples(vocab: int, n: int = 32):
    g = torch.Generator().manual_seed(1)
    return (
        padded_ids(_texts(n, 5, vocab, g), 5),
        padded_ids(_texts(n, 9, vocab, g), 9),
        padded_ids(_texts(n, 9, vocab, g), 9),
    )


@pytest.mark.parametrize("arch", SMALL)
def test_overfits_tiny_triples_with_hinge_loss(arch):
    assert_ranks_positives_first(_build(arch), *_triples(62), margin=0.5)


@pytest.mark.parametrize("arch", SMALL)
def test_two_classes_fit_labelled_pairs(arch):
    m = _build(arch, classes=2)
    q, pos, neg = _triples(62)
    q, a = torch.cat([q[:16], q[16:]]), torch.cat([pos[:16], neg[16:]])
    assert_classifies(m, q, a, torch.cat([torch.ones(16), torch.zeros(16)]), steps=250)


@pytest.mark.parametrize("arch,classes", CASES)
def test_state_dict_round_trips(arch, classes):
    lex = _lexicon()
    torch.manual_seed(0)
    m = _build(arch, classes, lexicon=lex).eval()
    buffer = io.BytesIO()
    torch.save(m.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    assert any(key.endswith("word_trigrams") for key in state)  # the hashing table travels with the weights
    torch.manual_seed(1)
    fresh = _build(arch, classes, lexicon=lex).eval()
    q, a = padded_ids([[2, 3, 4], [5, 1]], 4), padded_ids([[6, 7, 8, 9], [10]], 5)
    assert not torch.allclose(fresh(q, a), m(q, a))
    fresh.load_state_dict(state)
    assert torch.equal(fresh(q, a), m(q, a))
