"""Corpus vectors: all-but-the-top, alignment to a vocabulary (keeping the vectors' words or not),
the isotropy measures, the recipes' config checks and the CLI from corpus to a run's vocabulary."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from ansel.config import ConfigError, load, run_config, trained_recipe, validate
from ansel.data.canonical import Dataset
from ansel.data.vocab import Vocab, run_vocab_file
from ansel.embeddings import (
    VectorsFileError,
    align,
    all_but_the_top,
    isotropy,
    load_corpus_vectors,
    load_matrix,
    neighbours,
)
from ansel.settings import InputError


def test_all_but_the_top_centres_and_removes_the_top_directions():
    rng = np.random.default_rng(0)
    shared = rng.normal(size=8) * 10  # a common direction, as in the collapsed vectors
    v = (rng.normal(size=(200, 8)) + shared).astype(np.float32)
    centred = all_but_the_top(v, 0)
    assert np.allclose(centred.mean(0), 0, atol=1e-5) and np.allclose(centred, v - v.mean(0), atol=1e-5)
    out = all_but_the_top(v, 2)
    top = np.linalg.svd(v - v.mean(0), full_matrices=False)[2][:2]
    assert np.allclose(out @ top.T, 0, atol=1e-4) and np.allclose(out.mean(0), 0, atol=1e-5)
    # what stays is the rest of the centred vectors: projecting it again changes nothing
    assert np.allclose(all_but_the_top(out, 0), out, atol=1e-5)


def test_isotropy_is_one_for_identical_directions_and_near_zero_for_centred_noise():
    same = np.tile(np.arange(1.0, 5.0), (50, 1)) * np.linspace(1, 2, 50)[:, None]
    assert isotropy(same) == pytest.approx({"mean_norm_ratio": 1.0, "mean_pair_cosine": 1.0})
    noise = np.random.default_rng(1).normal(size=(2000, 50))
    measured = isotropy(noise)
    assert measured["mean_norm_ratio"] < 0.05 and abs(measured["mean_pair_cosine"]) < 0.02
    assert isotropy(noise) == measured  # the pairs are drawn from a seeded generator


def test_align_keeps_training_ids_and_appends_the_vectors_other_words():
    vocab = Vocab.build([["a", "b", "a", "zz"]])  # <pad>, <unk>, a, b, zz
    words, vectors = ["b", "c", "a", "d"], np.arange(8, dtype=np.float32).reshape(4, 2)
    m, coverage, same = align(words, vectors, vocab, seed=3)
    assert same.tokens == vocab.tokens and m.shape == (5, 2) and coverage == pytest.approx(2 / 3)
    assert np.allclose(m[vocab.index["a"]], vectors[2]) and np.allclose(m[vocab.index["b"]], vectors[0])
    assert not m[0].any() and np.abs(m[vocab.index["zz"]]).max() <= 0.25  # padding; an uncovered word
    m2, coverage2, grown = align(words, vectors, vocab, seed=3, keep_vector_words=True)
    assert grown.tokens == vocab.tokens + ["c", "d"] and coverage2 == coverage
    assert np.allclose(m2[:5], m) and np.allclose(m2[grown.index["d"]], vectors[3])


@pytest.mark.parametrize(
    "words, message",
    [
        (None, r"r-4.words.json: missing \(the words of .*r-4.npy's rows\); delete .*r-4.npy and rerun its target"),
        ('["a", ', r"r-4.words.json: not valid JSON"),
        ('{"a": 0, "b": 1, "c": 2}', r"r-4.words.json: expected a JSON list, got dict"),
        ('["a", "b", 3]', r"r-4.words.json: not a list of distinct words"),
        ('["a", "b", "a"]', r"r-4.words.json: not a list of distinct words"),
        ('["a", "b"]', r"r-4.words.json: 2 words for an array of shape \(3, 4\) in .*r-4.npy"),
    ],
    ids=["missing", "cut-short", "not-a-list", "not-words", "repeated-word", "other-length"],
)
def test_corpus_vectors_whose_words_file_does_not_fit_the_array_are_refused_naming_it(tmp_path, words, message):
    vectors = tmp_path / "r-4.npy"
    np.save(vectors, np.ones((3, 4), dtype=np.float32))
    if words is not None:
        vectors.with_suffix(".words.json").write_text(words)
    with pytest.raises(InputError, match=message):  # ansel embeddings: one line
        load_corpus_vectors(vectors)
    vectors.with_suffix(".words.json").write_text('["a", "b", "c"]')
    assert load_corpus_vectors(vectors)[0] == ["a", "b", "c"]


def test_vectors_not_of_finite_floats_are_refused_naming_the_file_and_the_first_bad_row(tmp_path):
    """Before a run starts from them (NaN vectors were reported as a diverged training, which removed the run)."""
    path = tmp_path / "word2vec-60.npy"
    m = np.zeros((5, 3), dtype=np.float32)
    m[3, 1], m[4, 0] = np.inf, np.nan
    np.save(path, m)
    with pytest.raises(VectorsFileError, match=rf"^{path}: row 3 holds inf, not a finite number; give a .npy file"):
        load_matrix(path)
    for values, dtype in [(np.zeros((5, 3), dtype=np.int64), "int64"), (np.array(["a", "b"]), "<U1")]:
        np.save(path, values)
        with pytest.raises(VectorsFileError, match=rf"^{path}: an array of {dtype} values, not of floats"):
            load_matrix(path)
    np.save(path, np.array([1, "a"], dtype=object), allow_pickle=True)
    with pytest.raises(VectorsFileError, match=rf"^{path}: an array of object values, not of floats"):
        load_matrix(path)


def test_a_file_that_is_no_vectors_is_named_so_and_only_the_pipelines_own_are_to_be_deleted(tmp_path):
    vocab = tmp_path / "vocab.json"
    vocab.write_text('["<pad>", "<unk>"]')
    with pytest.raises(
        VectorsFileError, match=rf"^{vocab}: not a .npy file \(no numpy header\); give a .npy file of vectors$"
    ):
        load_matrix(vocab)
    with pytest.raises(VectorsFileError, match=rf"^{tmp_path}: a folder, not a .npy file of vectors"):
        load_matrix(tmp_path)
    for made in (tmp_path / "data/embeddings/wikiqa/word2vec-300.npy", tmp_path / "data/vectors/w2v-300.npy"):
        made.parent.mkdir(parents=True)
        made.write_bytes(b"\x93NUMPY")  # cut short
        with pytest.raises(
            VectorsFileError, match=rf"^{made}: corrupt or cut short .*; delete it and rerun its target"
        ):
            load_matrix(made)


def test_neighbours_are_by_cosine_and_skip_padding_unknown_and_the_word_itself():
    vocab = Vocab(["<pad>", "<unk>", "x", "near", "far"])
    m = np.array([[0, 0], [1, 0], [1, 0], [0.9, 0.1], [-1, 0]], dtype=np.float32)
    assert neighbours(m, vocab, ["x", "missing"], k=2) == {"x": ["near", "far"]}


def _config(**recipes):
    c = load(preset="smoke")
    c["embeddings"] = {"pretrained": {"glove": "g.txt"}, "word2vec": recipes}
    c["embeddings_alias"] = {}  # the preset's stand-ins name vectors this config no longer has,
    # as do the models that start from those (validate refuses them): left out
    c["models"] = {m: v for m, v in c["models"].items() if v.get("embeddings") in (None, "word2vec")}
    return c


def test_recipes_that_train_alike_share_one_training_and_name_their_vocabulary():
    c = _config(
        a={"corpus": ["synthetic_en"], "epochs": 2},
        a_abtt={"corpus": ["synthetic_en"], "epochs": 2, "all_but_the_top": 1, "keep_vector_words": True},
        b={"corpus": ["synthetic_en"], "epochs": 3},
    )
    validate(c)
    assert [trained_recipe(c, r) for r in ("a", "a_abtt", "b")] == ["a", "a", "b"]
    model = next(m for m, v in c["models"].items() if v.get("embeddings") == "word2vec")
    c["models"][model]["embeddings"] = "a_abtt"
    run = run_config(c, "synthetic_en", model, 1)
    dim = run["hparams"]["embedding_dim"]
    assert run["vocab"] == f"data/embeddings/synthetic_en/a_abtt-{dim}.vocab.json"
    assert run_vocab_file(run, "data/processed/synthetic_en").as_posix() == run["vocab"]
    del run["vocab"]
    assert run_vocab_file(run, "p").as_posix() == "p/vocab.json"


@pytest.mark.parametrize(
    "recipes, key",
    [
        ({"word2vec": {"corpus": ["synthetic_en"]}}, "embeddings.word2vec.word2vec"),
        ({"glove": {"corpus": ["synthetic_en"]}}, "embeddings.word2vec.glove"),
        ({"x": {"corpus": ["nope"]}}, "embeddings.word2vec.x.corpus"),
    ],
)
def test_a_recipe_clashing_with_a_method_or_naming_an_unknown_dataset_is_refused(recipes, key):
    with pytest.raises(ConfigError, match=key):
        validate(_config(**recipes))


def _dataset(path, train_texts, dev_texts):
    """A tiny processed dataset: one question per text, its answer the same text."""
    rows = [(f"{s}{i}", t) for s, texts in (("t", train_texts), ("d", dev_texts)) for i, t in enumerate(texts)]
    questions = pd.DataFrame(
        {"qid": [q for q, _ in rows], "text": [t for _, t in rows], "tokens": [t.split() for _, t in rows]}
    )
    answers = questions.rename(columns={"qid": "aid"})
    questions["category"] = None
    splits = {
        s: pd.DataFrame(
            {"qid": [q for q, _ in rows if q[0] == s[0]], "aid": [q for q, _ in rows if q[0] == s[0]], "label": 1}
        )
        for s in ("train", "dev")
    }
    Dataset("x", questions, answers, splits).save(path)
    Vocab.build([t.split() for t in train_texts]).save(path / "vocab.json")


def test_the_cli_trains_on_training_splits_only_and_writes_the_runs_vocabulary(tmp_path):
    train = ["the cat sat on the mat", "a dog sat on a log"] * 20
    _dataset(tmp_path / "one", train, ["secretdevword appears only in dev"])
    _dataset(tmp_path / "two", ["the bird flew over the house"] * 20, ["anothersecret"])
    recipe = {"corpus": ["one", "two"], "epochs": 2, "all_but_the_top": 1, "keep_vector_words": True}
    vectors = tmp_path / "vectors" / "r-16.npy"
    ansel = [sys.executable, "-m", "ansel.cli"]
    subprocess.run(
        ansel
        + [
            "corpus-vectors",
            "--config",
            json.dumps(recipe),
            "--processed",
            str(tmp_path / "one"),
            str(tmp_path / "two"),
            "--dim",
            "16",
            "--out",
            str(vectors),
        ],
        check=True,
    )
    words = json.loads(vectors.with_suffix(".words.json").read_text())
    assert "bird" in words and "cat" in words
    assert not {"secretdevword", "dev", "anothersecret"} & set(words)  # dev text never trains the vectors
    assert json.loads(vectors.with_suffix(".json").read_text())["training_tokens"] == {
        "one": 480,
        "two": 240,
    }  # questions + answers
    out = tmp_path / "emb" / "r-16.npy"
    subprocess.run(
        ansel
        + [
            "embeddings",
            "--config",
            json.dumps({"recipes": {"r": recipe}}),
            "--processed",
            str(tmp_path / "one"),
            "--method",
            "r",
            "--vectors",
            str(vectors),
            "--dim",
            "16",
            "--out",
            str(out),
        ],
        check=True,
    )
    vocab, grown = Vocab.load(tmp_path / "one" / "vocab.json"), Vocab.load(out.with_suffix(".vocab.json"))
    assert grown.tokens[: len(vocab)] == vocab.tokens and {"bird", "flew", "house"} <= set(grown.tokens)
    matrix, info = np.load(out), json.loads(out.with_suffix(".json").read_text())
    assert matrix.shape == (len(grown), 16) and info["coverage"] == 1.0
    assert info["vocabulary"] == len(grown) and info["training_vocabulary"] == len(vocab)
    assert set(info["isotropy_top_2000"]) == {"mean_norm_ratio", "mean_pair_cosine"}
