"""Checks every trained architecture of the registry gets, at the small sizes its own test module
uses: a finite score per pair, a finite nonzero gradient for every trainable parameter, and scores
that do not read the padding's vector unless the architecture reads padding on purpose. A new
architecture fails here until it has a small config. The untrained ones have no parameters:
random's tests are in archs/test_qa_baselines.py, the lexical rankers' (they read texts, not ids)
in tests/evaluation/test_lexical.py."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from ansel.data.vocab import PAD_TOKEN, UNK_TOKEN, Lexicon
from ansel.models.registry import build_model, classifies_categories, is_trained, needs_lexicon, registered
from tests.models.archs import (
    test_apnet,
    test_arc,
    test_ctrn,
    test_dssm,
    test_ggsa,
    test_matchpyramid,
    test_mtas,
    test_mvlstm,
    test_qa_baselines,
)

VOCAB, CATEGORIES = 40, 4
SMALL = {
    **test_qa_baselines.ARCHS,
    **test_apnet.SMALL,
    **test_arc.SMALL,
    **test_dssm.SMALL,
    **{a: test_ggsa.CONFIGS[a] for a in ("global_sa", "group_sa", "ggsa", "iggsa", "qa_lstm_attn", "multihop_lstm")},
    "local_sa": test_ggsa.CONFIGS["local_sa+gate"],
    **{arch: test_mtas.VARIANTS[arch][1] for arch in ("mtas", "iarnn_word", "multi_cnn")},
    "ctrn": test_ctrn.SMALL,
    "match_pyramid": test_matchpyramid.SMALL,
    "mv_lstm": {**test_mvlstm.SMALL, "dropout": 0.0, "lstm_dropout": 0.0},
    "anmm": {"embedding_dim": 8, "gate_dim": 8, "text1_maxlen": 4},
}
TRAINED = [arch for arch in registered() if is_trained(arch)]
# Read padding as their authors' code does, at the small configs' defaults (each module's tests
# show it): MatchZoo's fixed-width inputs and the MTAS authors' unmasked TF code. CDSSM pools its
# padding positions too, but their word hashes are empty bags: zeros whatever the padding row holds.
READS_PADDING = {"arc_i", "arc_ii", "iarnn_word", "match_pyramid", "mtas", "multi_cnn", "mv_lstm"}


def _build(arch: str):
    torch.manual_seed(0)
    words = [PAD_TOKEN, UNK_TOKEN, *(f"w{i}" for i in range(2, VOCAB))]
    lexicon = Lexicon(words, np.ones(VOCAB, np.int64), np.arange(VOCAB) % 7 + 1, n_docs=50)
    hparams = {**SMALL[arch], **({"trigram_min_freq": 1} if arch in test_dssm.SMALL else {})}
    return build_model(
        arch,
        hparams,
        VOCAB,
        lexicon=lexicon if needs_lexicon(arch) else None,
        n_categories=CATEGORIES if classifies_categories(arch) else None,
    )


def test_every_trained_arch_has_a_small_config():
    assert set(SMALL) == set(TRAINED)


@pytest.mark.parametrize("arch", TRAINED)
def test_finite_scores_and_every_parameter_gets_a_finite_nonzero_gradient(arch, padded_pairs):
    model = _build(arch).train()
    q, a = padded_pairs(VOCAB)
    scores = model(q, a)
    assert scores.shape == (4,) and torch.isfinite(scores).all()
    loss = scores.pow(2).sum()
    if classifies_categories(arch):  # the category head learns from its own loss only
        loss = loss + F.cross_entropy(model.classify(q), torch.arange(4) % CATEGORIES)
    loss.backward()
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    assert trainable
    silent = [n for n, p in trainable if p.grad is None or not p.grad.abs().sum() > 0]
    not_finite = [n for n, p in trainable if p.grad is not None and not torch.isfinite(p.grad).all()]
    assert not silent and not not_finite


@pytest.mark.parametrize("arch", TRAINED)
def test_only_the_archs_that_read_padding_on_purpose_see_the_padding_vector(arch, padded_pairs):
    """Padding's row of each embedding table is zero and never trained; made random, it changes
    the scores of exactly the architectures that read padding."""
    model = _build(arch).eval()
    q, a = padded_pairs(VOCAB)
    tables = [
        m for m in model.modules() if isinstance(m, (nn.Embedding, nn.EmbeddingBag)) and m.padding_idx is not None
    ]
    assert tables
    with torch.no_grad():
        before = model(q, a)
        for table in tables:
            table.weight[table.padding_idx].normal_()
        moved = not torch.allclose(model(q, a), before, rtol=1e-5, atol=1e-6)
    assert moved == (arch in READS_PADDING)
