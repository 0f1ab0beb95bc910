"""Tokenizers named in params: English lower-cased word tokens, Chinese via jieba."""
from __future__ import annotations

import re
from typing import Callable

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


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "english": english, "whitespace": whitespace, "chinese": chinese,
}


def get_tokenizer(name: str) -> Callable[[str], list[str]]:
    if name not in TOKENIZERS:
        raise KeyError(f"unknown tokenizer {name!r}; known: {', '.join(TOKENIZERS)}")
    return TOKENIZERS[name]
