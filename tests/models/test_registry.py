import dataclasses
import pkgutil
import subprocess
import sys

import pytest

from ansel.models import archs
from ansel.models.registry import ModelConfigError, build_model, hparams_fields, parse_hparams, registered

ARCHS = [
    "ap_bilstm",
    "ap_cnn",
    "ctrn",
    "ggsa",
    "global_sa",
    "group_sa",
    "iggsa",
    "local_sa",
    "multihop_lstm",
    "qa_bilstm",
    "qa_cnn",
    "qa_lstm",
    "qa_lstm_attn",
    "random",
]
SIZES = ["embedding_dim", "hidden", "filters", "kernel", "heads", "ffn_dim", "group_size", "window", "hops", "max_len"]
WHERE = "models.x.hparams"


def test_every_module_of_archs_is_found():
    names = registered()
    modules = [f"{archs.__name__}.{m.name}" for m in pkgutil.iter_modules(archs.__path__)]
    assert len(modules) >= 5 and all(m in sys.modules for m in modules)
    assert set(ARCHS) <= set(names)


def test_registry_and_every_archs_hyperparameters_do_not_import_torch():
    # The Snakefile checks every model's config while it builds the DAG (twice per SLURM job).
    code = (
        "import sys; from ansel.models.registry import parse_hparams, registered; "
        "[parse_hparams(a, {}) for a in registered()]; print(len(registered()), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(len(registered())), "False"]


def test_resolving_every_model_config_does_not_import_torch():
    code = (
        "import sys; from ansel.config import load, model_config; c = load(preset='full'); "
        "[model_config(c, m) for m in c['models']]; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_hparams_fields_are_the_dataclass_fields():
    for arch in registered():
        assert hparams_fields(arch) == {f.name for f in dataclasses.fields(parse_hparams(arch, {}))}
    assert {"group_size", "offset", "gate", "heads"} <= hparams_fields("ggsa")
    with pytest.raises(ModelConfigError, match=r"^models\.x\.arch: unknown arch 'nope'; known: (\w+, )*ap_bilstm, "):
        hparams_fields("nope", "models.x.arch")


@pytest.mark.parametrize("arch", registered())
def test_every_size_must_be_positive_and_every_dropout_below_one(arch):
    fields = hparams_fields(arch)
    for key in fields & set(SIZES):
        for value in (0, -6):
            with pytest.raises(ModelConfigError, match=rf"^models\.x\.hparams\.{key}: {value} is not positive$"):
                parse_hparams(arch, {key: value}, WHERE)
    if "dropout" in fields:
        for value in (1.0, -0.1, 1):
            with pytest.raises(ModelConfigError, match=rf"^models\.x\.hparams\.dropout: {value} is not in \[0, 1\)$"):
                parse_hparams(arch, {"dropout": value}, WHERE)
        assert parse_hparams(arch, {"dropout": 0.5}).dropout == 0.5


@pytest.mark.parametrize(
    "heads,message",
    [
        (0, "heads: 0 is not positive"),
        (-6, "heads: -6 is not positive"),
        (7, "heads: 7 does not divide embedding_dim 60"),
    ],
)
def test_heads_must_be_positive_and_divide_the_model_dimension(heads, message):
    for arch in ("global_sa", "local_sa", "group_sa", "ggsa", "iggsa"):
        with pytest.raises(ModelConfigError) as error:
            parse_hparams(arch, {"embedding_dim": 60, "heads": heads}, "models.ggsa_x.hparams")
        assert str(error.value) == f"models.ggsa_x.hparams.{message}"
    assert parse_hparams("ggsa", {"embedding_dim": 60, "heads": 12}).heads == 12
    # the dimension is checked first: its own message, not the division's
    with pytest.raises(ModelConfigError, match=r"^m\.embedding_dim: 0 is not positive"):
        parse_hparams("ggsa", {"embedding_dim": 0, "heads": 7}, "m")


@pytest.mark.parametrize(
    "arch,key,value",
    [
        ("ggsa", "composition", "maxx"),
        ("global_sa", "composition", "interaction"),
        ("ggsa", "scorer", "softmax"),
        ("qa_lstm_attn", "scorer", "dot"),
        ("ctrn", "scorer", "Cosine"),
    ],
)
def test_unknown_composition_or_scorer_names_the_key_and_the_known_names(arch, key, value):
    known = "max, attention, multihop" if key == "composition" else "cosine, mlp"
    with pytest.raises(ModelConfigError) as error:
        parse_hparams(arch, {key: value}, WHERE)
    assert str(error.value) == f"{WHERE}.{key}: {value!r} is not one of {known}"


def test_derived_ffn_dim_is_not_checked_and_a_given_one_is():
    assert parse_hparams("ggsa", {"ffn_dim": None}).ffn_dim is None
    with pytest.raises(ModelConfigError, match=r"^models\.x\.hparams\.ffn_dim: 0 is not positive"):
        build_model("ggsa", {"ffn_dim": 0}, 10, where=WHERE)


def test_unknown_or_mistyped_hparam_names_the_key():
    with pytest.raises(ModelConfigError, match=r"models\.x\.hiden"):
        build_model("qa_lstm", {"hiden": 3}, 10, where="models.x")
    with pytest.raises(ModelConfigError, match=r"hidden: '3' is not of type"):
        build_model("qa_lstm", {"hidden": "3"}, 10)
    with pytest.raises(ModelConfigError, match="unknown arch 'nope'"):
        build_model("nope", {}, 10)


def test_an_arch_that_reads_the_vocabulary_needs_a_lexicon_of_its_size():
    import numpy as np

    from ansel.data.vocab import Lexicon, Vocab
    from ansel.models.registry import needs_lexicon

    assert needs_lexicon("dssm") and not needs_lexicon("qa_lstm") and not needs_lexicon("nope")
    vocab = Vocab.build([["where", "do", "crocodiles", "live"]])
    lexicon = Lexicon.build(vocab, [["where", "do", "crocodiles", "live"]])
    assert lexicon.df.tolist() == [0, 0, 1, 1, 1, 1] and lexicon.n_docs == 1
    assert np.all(lexicon.idf[2:] < lexicon.idf[0])  # seen words weigh less than unseen ones
    with pytest.raises(ValueError, match="models.x: arch 'dssm' reads the vocabulary's words"):
        build_model("dssm", {}, len(vocab), where="models.x")
    with pytest.raises(ValueError, match="the lexicon has 6 words, the vocabulary 7"):
        build_model("dssm", {}, 7, lexicon=lexicon)
    assert build_model("dssm", {"trigram_min_freq": 1}, len(vocab), lexicon=lexicon) is not None
