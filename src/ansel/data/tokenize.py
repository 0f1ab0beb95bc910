"""Tokenizers named in params (English lower-cased word tokens, NLTK's Treebank-style tokens,
Chinese via jieba) and the stop-word lists of the read option ``stopwords``."""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import Callable

from ansel.settings import ConfigError

_WORD = re.compile(r"\w+(?:[-']\w+)*|[^\w\s]", re.UNICODE)


def english(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def whitespace(text: str) -> list[str]:
    """For corpora distributed already tokenized (TREC-QA, InsuranceQA idx files)."""
    return text.lower().split()


def chinese(text: str) -> list[str]:
    import jieba

    jieba.setLogLevel(60)  # silence its start-up banner in every job log
    return [t for t in jieba.lcut(text) if t.strip()]


@functools.cache
def _nltk_word_tokenizer():
    from nltk.tokenize import NLTKWordTokenizer  # needs no downloaded NLTK data

    return NLTKWordTokenizer()


def nltk_words(text: str) -> list[str]:
    """NLTK's Treebank-style word tokens, lower-cased after tokenizing (MatchZoo 1.x order:
    ``word_tokenize`` then ``word_lower``), e.g. "didn't" -> did, n't; quotes -> `` and ''.

    MatchZoo called ``nltk.word_tokenize``, which first splits the text into sentences with the
    Punkt model (downloaded data) and then runs this tokenizer on each sentence. The only
    difference is a sentence-final period inside a text of several sentences: the Treebank rules
    split off the period at the end of the whole text only, so "in the U.S. It is" keeps "u.s."
    either way, but "it ended. Then" gives "ended." here and "ended", "." after a sentence split.
    WikiQA questions and answer sentences are single sentences, so this rarely matters. (NLTK
    >= 3.5 names the improved Treebank tokenizer ``NLTKWordTokenizer``; the 2018 releases ran
    the same rules as ``TreebankWordTokenizer`` with minor differences in rare punctuation.)
    """
    return [t.lower() for t in _nltk_word_tokenizer().tokenize(text)]


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "english": english,
    "whitespace": whitespace,
    "chinese": chinese,
    "nltk": nltk_words,
}


def get_tokenizer(name: str, error: type[ConfigError] = ConfigError) -> Callable[[str], list[str]]:
    """The tokenizer read option ``tokenizer`` names; ``error`` naming that option where it names none."""
    if not (isinstance(name, str) and name in TOKENIZERS):
        raise error(f"tokenizer: unknown tokenizer {name!r}; known: {', '.join(TOKENIZERS)}")
    return TOKENIZERS[name]


# Stop-word lists shipped as package data: ansel/data/stopwords/<name>.txt, one word per line
# (provenance and licence in that folder's README.md).
STOPWORDS = ("nltk_english",)


@functools.cache
def get_stopwords(name: str) -> frozenset[str]:
    if name not in STOPWORDS:
        raise KeyError(f"read option stopwords: unknown stop-word list {name!r}; known: {', '.join(STOPWORDS)}")
    text = resources.files("ansel.data").joinpath("stopwords", f"{name}.txt").read_text(encoding="utf-8")
    return frozenset(w for w in text.splitlines() if w.strip())
