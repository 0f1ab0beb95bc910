"""The lexical context rows on a hand-made three-question corpus: every expected score below is
worked out by hand (the formulas are written beside the numbers), never by the code under test."""

import math
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from ansel.config import load, run_config
from ansel.data.batches import RunData
from ansel.data.canonical import Dataset
from ansel.data.vocab import Vocab, training_texts
from ansel.evaluation import lexical
from ansel.evaluation.config import EvalConfig
from ansel.evaluation.evaluate import DEV_SCORES, dev_evaluator, evaluate_run, save_dev_scores, score_split
from ansel.models.registry import build_model
from ansel.training.trainer import train_run

QUESTIONS = {
    "q1": "What is the capital of France ?",  # terms: capital, france
    "q2": "Who wrote Hamlet ?",  # terms: wrote, hamlet
    "q3": "When did Hamlet premiere ?",  # terms: hamlet, premiere
}
ANSWERS = {
    "a1": "Paris is the capital of France .",  # paris, capital, france
    "a2": "France is in Europe .",  # france, europe
    "a3": "Lyon is a city .",  # lyon, city
    "a4": "Shakespeare wrote Hamlet .",  # shakespeare, wrote, hamlet
    "a5": "Hamlet is a play .",  # hamlet, play
    "a6": "Hamlet premiered in 1609 .",  # hamlet, premiered (no stemming), 1609
}
TRAIN = [("q1", "a1", 1), ("q1", "a2", 0), ("q1", "a3", 0)]
TEST = [("q2", "a4", 1), ("q2", "a5", 0), ("q3", "a6", 1), ("q3", "a5", 0), ("q3", "a4", 0)]


@pytest.fixture
def corpus() -> Dataset:
    def table(rows):
        return pd.DataFrame(rows, columns=["qid", "aid", "label"])

    return Dataset(
        name="hand",
        questions=pd.DataFrame(
            {
                "qid": list(QUESTIONS),
                "text": list(QUESTIONS.values()),
                "tokens": [t.split() for t in QUESTIONS.values()],
                "category": None,
            }
        ),
        answers=pd.DataFrame(
            {"aid": list(ANSWERS), "text": list(ANSWERS.values()), "tokens": [t.split() for t in ANSWERS.values()]}
        ),
        splits={"train": table(TRAIN), "test": table(TEST)},
    ).validate()


def scores(corpus: Dataset, arch: str, split: str, hparams=None) -> np.ndarray:
    model = build_model(arch, hparams or {}, vocab_size=2)
    return lexical.score_candidates(model.method, model.hparams, corpus, corpus.splits[split])


def test_terms_are_lower_cased_without_stop_words_or_punctuation():
    assert lexical.terms("What is the capital of France ?".split()) == ["capital", "france"]
    assert lexical.terms(["Hamlet", "premiered", "in", "1609", "."]) == ["hamlet", "premiered", "1609"]


def test_word_count_counts_the_questions_distinct_words_in_the_answer(corpus):
    np.testing.assert_array_equal(scores(corpus, "word_count", "train"), [2, 1, 0])
    np.testing.assert_array_equal(scores(corpus, "word_count", "test"), [2, 1, 1, 1, 1])
    assert lexical.word_count(["paris", "paris"], ["paris", "paris", "paris"]) == 1  # distinct words


def test_weighted_word_count_weights_by_idf_over_every_splits_sentences(corpus):
    # N = 6 sentences (a1-a6); df: capital 1, france 2, wrote 1, hamlet 3 -> idf = ln(6 / df)
    ln6, ln3, ln2 = 1.791759469, 1.098612289, 0.693147181
    np.testing.assert_allclose(scores(corpus, "weighted_word_count", "train"), [ln6 + ln3, ln3, 0.0], atol=1e-8)
    np.testing.assert_allclose(
        scores(corpus, "weighted_word_count", "test"), [ln6 + ln2, ln2, ln2, ln2, ln2], atol=1e-8
    )


def test_bm25_scores_each_question_against_its_own_candidates(corpus):
    # Lucene BM25, k1 1.5, b 0.75: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), tf 1: 1 / (1 + k1 (1 - b + b dl / avgdl))
    # q1 over {a1, a2, a3} (dl 3, 2, 2; avgdl 7/3): capital ln(8/3), france ln(1.6)
    q1 = [
        (math.log(8 / 3) + math.log(1.6)) / (1 + 1.5 * (0.25 + 0.75 * 3 / (7 / 3))),
        math.log(1.6) / (1 + 1.5 * (0.25 + 0.75 * 2 / (7 / 3))),
        0.0,
    ]
    np.testing.assert_allclose(q1, [0.5142192, 0.2009176, 0.0], atol=1e-7)  # the hand computation
    np.testing.assert_allclose(scores(corpus, "bm25", "train"), q1, atol=1e-6)
    # q2 over {a4, a5} (dl 3, 2; avgdl 2.5): wrote ln 2, hamlet ln 1.2. q3 over {a6, a5, a4} (dl 3, 2, 3; avgdl 8/3):
    # hamlet ln(8/7); premiere is in no candidate ("premiered" is another word)
    np.testing.assert_allclose(
        scores(corpus, "bm25", "test"), [0.3212729, 0.0801413, 0.0505681, 0.0601832, 0.0505681], atol=1e-6
    )


def test_bm25_takes_its_parameters_from_the_config(corpus):
    # b = 0: no length normalisation; q1/a2: ln(1.6) / (1 + 1.5) with k1 1.5
    assert scores(corpus, "bm25", "train", {"b": 0.0})[1] == pytest.approx(math.log(1.6) / 2.5, abs=1e-6)


def test_lexical_runs_match_words_outside_the_training_vocabulary(corpus, tmp_path):
    corpus.save(tmp_path)
    vocab = Vocab.build(training_texts(corpus))  # q1 and a1-a3 only: no "hamlet", no "wrote"
    assert "hamlet" not in vocab.index
    data = RunData.load(tmp_path, vocab, max_len_q=10, max_len_a=10)
    scored = score_split(build_model("word_count", {}, vocab_size=len(vocab)), data, "test")
    assert list(scored.score) == [2, 1, 1, 1, 1] and list(scored.columns) == ["qid", "aid", "label", "score"]


def test_a_lexical_model_has_nothing_to_train_and_refuses_token_ids():
    model = build_model("bm25", {}, vocab_size=5)
    assert not list(model.parameters())
    with pytest.raises(TypeError, match="reads tokens, not ids"):
        model(None, None)


def test_train_then_evaluate_write_a_lexical_run_directory(corpus, tmp_path):
    """The train and evaluate rules' path: nothing trained, then every eval split scored from tokens."""
    processed, run = tmp_path / "processed", tmp_path / "run"
    corpus.save(processed)
    Vocab.build(training_texts(corpus)).save(processed / "vocab.json")
    cfg = run_config(load(), "synthetic_en", "lexical_bm25", 1)
    cfg["eval"]["splits"] = ["test"]
    data = RunData.load(processed, Vocab.load(processed / "vocab.json"), cfg["max_len_q"], cfg["max_len_a"])
    trained = train_run(cfg, data, None, run, dev_evaluator(data, "test", EvalConfig(["test"])), progress=False)
    save_dev_scores(trained.dev_scores, "dev", run / DEV_SCORES)
    assert trained.epochs == 0 and pd.read_csv(run / "log.csv").empty
    metrics = evaluate_run(run, processed)
    # q2: a4 first (AP 1); q3: a5 0.0602 before a6 = a4 0.0506, ties by aid descending: a6 second (AP 1/2)
    assert metrics["test"]["MAP"] == pytest.approx(0.75) and metrics["test"]["MRR"] == pytest.approx(0.75)
    assert (run / "run.trec").read_text().splitlines()[2] == "test:q3 Q0 a5 1 0.06018316373229027 lexical_bm25-seed1"


def test_weighted_word_count_is_the_same_float_in_every_process():
    """A set's order follows string hashing, which changes per process: the sum must not."""
    code = (
        "from ansel.evaluation.lexical import weighted_word_count as w; "
        "words = [f'w{i}' for i in range(40)]; "
        "print(repr(w(words, words, {x: 0.1 * (i + 1) ** 0.5 for i, x in enumerate(words)})))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in range(6)
    }
    assert len(outs) == 1, outs
