"""Lexical context rows (``ansel.models.lexical``): ``bm25``, ``word_count`` and
``weighted_word_count``, scored from the canonical tokens by ``ansel.evaluation.lexical``.

No trainable parameters: the trainer trains nothing, and a run of one seed is the row (the
scores are deterministic)."""

from __future__ import annotations

from dataclasses import dataclass

from ansel.models.hparams import HParams, hparam, positive
from ansel.models.registry import register


def _unit_interval(value, hparams) -> str | None:
    return None if 0 <= value <= 1 else "is not in [0, 1]"


@dataclass
class BM25Config(HParams):
    k1: float = hparam(1.5, positive)  # bm25s's (Lucene's) defaults
    b: float = hparam(0.75, _unit_interval)


@dataclass
class WordCountConfig(HParams):
    """Nothing to set: the definitions are in ``ansel.evaluation.lexical``."""


def _build(method: str, cfg):
    from ansel.models.lexical import LexicalRanker

    return LexicalRanker(method, cfg)


@register("bm25", BM25Config, trained=False)
def build_bm25(cfg: BM25Config, vocab_size: int, embeddings):
    return _build("bm25", cfg)


@register("word_count", WordCountConfig, trained=False)
def build_word_count(cfg: WordCountConfig, vocab_size: int, embeddings):
    return _build("word_count", cfg)


@register("weighted_word_count", WordCountConfig, trained=False)
def build_weighted_word_count(cfg: WordCountConfig, vocab_size: int, embeddings):
    return _build("weighted_word_count", cfg)
