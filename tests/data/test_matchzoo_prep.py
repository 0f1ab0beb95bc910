"""MatchZoo 1.x preparation as options (aMV-LSTM's WikiQA and QuoraQP): the ``nltk`` tokenizer,
stop-word removal, the document-frequency vocabulary cut, and the QuoraQP ``resplit`` stand-in,
on small hand-written inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ansel import cli
from ansel.data.manifest import write_manifest
from ansel.data.preprocess import ReadOptionError, apply_options, from_pairs
from ansel.data.registry import get_source
from ansel.data.tokenize import STOPWORDS, get_stopwords, get_tokenizer
from ansel.data.vocab import PAD_TOKEN, UNK_TOKEN, Vocab

WIKI_HEADER = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel"


def test_nltk_tokenizer_treebank_rules_then_lowercase():
    tok = get_tokenizer("nltk")
    assert tok("How are glacier caves formed?") == ["how", "are", "glacier", "caves", "formed", "?"]
    # contractions split the Treebank way; double quotes become `` and ''; "U.S." stays one token
    assert tok('He didn\'t say "cannot" in the U.S. today.') == [
        "he",
        "did",
        "n't",
        "say",
        "``",
        "can",
        "not",
        "''",
        "in",
        "the",
        "u.s.",
        "today",
        ".",
    ]


def test_nltk_english_stopwords_are_the_2018_list():
    words = get_stopwords("nltk_english")
    assert len(words) == 179
    assert {"ourselves", "yourselves", "any", "mightn't", "wouldn", "should've", "that'll"} <= words
    # added to NLTK's list only in 2025 (nltk_data 47111d8): not in the 2018 list
    assert not {"i'm", "they're", "he's"} & words
    assert all(w == w.lower() and w.strip() == w for w in words)


def test_unknown_stopword_list_is_refused_naming_the_key(tmp_path):
    with pytest.raises(KeyError, match=r"stopwords: unknown stop-word list 'nltk_englsh'; known: nltk_english"):
        get_stopwords("nltk_englsh")
    assert STOPWORDS == ("nltk_english",)
    # by the reader, before any raw file is read (tmp_path holds none)
    with pytest.raises(KeyError, match=r"^\"wikiqa: read option stopwords: unknown stop-word list 'english'"):
        get_source("wikiqa").read(tmp_path, {"stopwords": "english"})
    with pytest.raises(KeyError, match=r"wikiqa: unknown read option\(s\) \['stopword'\]"):
        get_source("wikiqa").read(tmp_path, {"stopword": "nltk_english"})


def test_stopwords_removed_after_lowercasing_texts_kept():
    df = pd.DataFrame(
        {
            "split": ["train", "train"],
            "question": ["What is THE capital of France?"] * 2,
            "answer": ["Paris is its capital.", "It is not Lyon."],
            "label": [1, 0],
        }
    )
    ds = apply_options(from_pairs("t", df, "nltk"), {"stopwords": "nltk_english"})
    assert list(ds.questions.tokens.iloc[0]) == ["capital", "france", "?"]
    assert [list(t) for t in ds.answers.tokens] == [["paris", "capital", "."], ["lyon", "."]]
    assert ds.questions.text.iloc[0] == "What is THE capital of France?"
    # before the other options: a length filter sees the tokens without stop words
    short = apply_options(from_pairs("t", df, "nltk"), {"stopwords": "nltk_english", "length_filter": {"min_len": 3}})
    assert len(short.splits["train"]) == 1


def test_vocab_min_df_counts_texts_min_count_counts_occurrences():
    texts = [["a", "a", "a", "b"], ["b", "c"], ["c"], ["d", "d"]]
    assert Vocab.build(texts, min_df=2).tokens == [PAD_TOKEN, UNK_TOKEN, "b", "c"]  # a and d: one text each
    assert Vocab.build(texts, min_count=2).tokens == [PAD_TOKEN, UNK_TOKEN, "a", "b", "c", "d"]
    assert Vocab.build(texts, min_count=3, min_df=1).tokens == [PAD_TOKEN, UNK_TOKEN, "a"]
    assert Vocab.build(iter(texts), min_df=2).tokens == Vocab.build(texts, min_df=2).tokens  # one pass suffices


def _wikiqa_raw(raw: Path) -> None:
    raw.mkdir()
    rows = {
        "train": [
            ("Q1", "Where is the cat?", "D1-0", "The cat is on the mat.", 1),
            ("Q1", "Where is the cat?", "D1-1", "A dog is on the mat.", 0),
            ("Q2", "Who has the dog?", "D2-0", "The dog sleeps.", 1),
        ],  # no negative: dropped
        "dev": [
            ("Q3", "Where is the dog?", "D3-0", "The dog is on the mat.", 1),
            ("Q3", "Where is the dog?", "D3-1", "It rains.", 0),
        ],
        "test": [
            ("Q4", "Who is the cat?", "D4-0", "The cat is Tom.", 1),
            ("Q4", "Who is the cat?", "D4-1", "Mats are flat.", 0),
        ],
    }
    for split, rs in rows.items():
        lines = [WIKI_HEADER] + ["\t".join([q, qt, "D", "T", a, at, str(lab)]) for q, qt, a, at, lab in rs]
        (raw / f"WikiQA-{split}.tsv").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    write_manifest(raw / "manifest.json")


def test_preprocess_builds_the_vocabulary_with_min_df(tmp_path):
    raw, out = tmp_path / "raw", tmp_path / "processed" / "w"
    _wikiqa_raw(raw)
    config = {
        "source": "wikiqa",
        "splits": ["train", "dev", "test"],
        "vocab": {"min_df": 2},
        "read": {
            "tokenizer": "nltk",
            "stopwords": "nltk_english",
            "drop_questions": {"no_positive": True, "all_positive": True, "splits": ["train", "dev", "test"]},
        },
    }
    cli.main(["preprocess", "--dataset", "w", "--config", json.dumps(config), "--raw", str(raw), "--out", str(out)])
    # training texts (Q2 dropped), stop words gone: "cat ?", "cat mat .", "dog mat ."; in >= 2 texts:
    # ".", "cat", "mat" (2 each; ties alphabetical) — not "?" or "dog"
    assert json.loads((out / "vocab.json").read_text()) == [PAD_TOKEN, UNK_TOKEN, ".", "cat", "mat"]


def _bimpm_raw(raw: Path, n: int = 50) -> None:
    raw.mkdir()
    for split, offset in (("dev", 0), ("test", 1000)):
        lines = [f"{i % 2}\tHow do I learn {i} ?\tWhat is the way to learn {i} ?\t{offset + i}" for i in range(n)]
        (raw / f"{split}.tsv").write_text("\n".join(lines) + "\n")


def test_quoraqp_resplit_pools_files_and_splits_by_pair(tmp_path):
    raw = tmp_path / "raw"
    _bimpm_raw(raw)
    opts = {"splits": ["dev", "test"], "resplit": {"dev": 0.1, "test": 0.1}, "seed": 13}
    ds = get_source("quoraqp").read(raw, opts).validate()
    assert list(ds.splits) == ["train", "dev", "test"]
    assert {s: len(c) for s, c in ds.splits.items()} == {"train": 80, "dev": 10, "test": 10}
    pooled = pd.concat(ds.splits.values())
    assert pooled.qid.is_unique and len(pooled) == 100  # each pair in exactly one split
    assert pooled.qid.str.startswith("dev-").sum() == 50  # ids keep the file the pair came from
    assert (pooled.qid.str.replace("-q", "-a") == pooled.aid).all()  # pairs are never re-paired
    again = get_source("quoraqp").read(raw, opts)
    assert all(again.splits[s].equals(c) for s, c in ds.splits.items())
    other = get_source("quoraqp").read(raw, {**opts, "seed": 14})
    assert set(other.splits["dev"].qid) != set(ds.splits["dev"].qid)
    plain = get_source("quoraqp").read(raw, {"splits": ["dev", "test"]})
    assert {s: len(c) for s, c in plain.splits.items()} == {"dev": 50, "test": 50}


@pytest.mark.parametrize(
    "opts, error, match",
    [
        ({"resplit": {"train": 0.5}}, ReadOptionError, r"^resplit\.train: train is what the other splits leave"),
        ({"resplit": {"dev": 0.6, "test": 0.4}}, ReadOptionError, r"^resplit: the fractions sum to 1, leaving nothing"),
        ({"resplit": [0.1, 0.1]}, ReadOptionError, r"^resplit: \[0\.1, 0\.1\] does not map split names to fractions"),
        ({"seed": 3}, KeyError, r"quoraqp: read option seed is only used by resplit"),
        ({"re_split": {"dev": 0.1}}, KeyError, r"quoraqp: unknown read option\(s\) \['re_split'\]"),
    ],
)
def test_quoraqp_bad_resplit_options_name_the_key(tmp_path, opts, error, match):
    raw = tmp_path / "raw"
    _bimpm_raw(raw, 5)
    with pytest.raises(error, match=match):
        get_source("quoraqp").read(raw, {"splits": ["dev", "test"], **opts})


def test_params_datasets_validate_with_task_and_min_df(repo_root):
    import yaml

    from ansel.config import ConfigError
    from ansel.schema import check_schema

    schema = repo_root / "workflow/schemas/params.schema.yaml"
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    standin = params["datasets"]["quoraqp_standin"]
    assert standin["eval"]["task"] == "classification" and params["datasets"]["wikiqa_mz"]["vocab"] == {"min_df": 2}
    check_schema(params, schema, "params.yaml")
    standin["eval"]["task"] = "regression"
    with pytest.raises(ConfigError, match=r"datasets\.quoraqp_standin\.eval\.task: 'regression' is not one of"):
        check_schema(params, schema, "params.yaml")
    standin["eval"]["task"] = "ranking"
    standin["vocab"] = {"min_dF": 5}
    with pytest.raises(ConfigError, match=r"datasets\.quoraqp_standin\.vocab: unknown key 'min_dF'"):
        check_schema(params, schema, "params.yaml")
