"""Scoring (question, candidate) pairs for evaluation.

Pairs are given as index arrays ``qi``, ``ai`` into padded token-id matrices ``q_ids`` [Nq, Lq]
and ``a_ids`` [Na, La] (each distinct text stored once). Both functions return one score per
pair, in pair order, and leave the model's train/eval mode to the caller.

A siamese model encodes each side independently, so ``score_siamese_cached`` encodes each
distinct question and answer once and then only compares vectors; InsuranceQA scores 500
candidates per question drawn from ~24k answers, so per-pair scoring would encode every
answer dozens of times. ``score_pairs`` is the general path for models whose answer
representation depends on the question (attentive pooling).
"""
from __future__ import annotations

import numpy as np
import torch

from ansel.models.base import PAD, Ranker, SiameseRanker

# Vectors gathered per similarity call: bounds memory at chunk x hidden floats.
_GATHER_ELEMENTS = 1 << 24


def _as_index(idx) -> torch.Tensor:
    return torch.as_tensor(np.asarray(idx), dtype=torch.long)


def _trim(ids: torch.Tensor) -> torch.Tensor:
    """Drop trailing columns that are padding in every row of the batch."""
    lengths = (ids != PAD).sum(1)
    return ids[:, : max(int(lengths.max()), 1)]


def _encode(encode, ids: torch.Tensor, rows: torch.Tensor, batch_size: int) -> torch.Tensor:
    return torch.cat([encode(_trim(ids[rows[i:i + batch_size]])) for i in range(0, len(rows), batch_size)])


def score_pairs(model: Ranker, q_ids: torch.Tensor, a_ids: torch.Tensor, qi, ai, batch_size: int) -> np.ndarray:
    """One forward pass per pair, in batches of ``batch_size`` pairs."""
    qi, ai = _as_index(qi), _as_index(ai)
    if len(qi) != len(ai):
        raise ValueError(f"qi has {len(qi)} pairs but ai has {len(ai)}")
    scores = []
    with torch.inference_mode():
        for i in range(0, len(qi), batch_size):
            q = _trim(q_ids[qi[i:i + batch_size]])
            a = _trim(a_ids[ai[i:i + batch_size]])
            scores.append(model(q, a).float())
    return torch.cat(scores).numpy() if scores else np.zeros(0, dtype=np.float32)


def score_siamese_cached(model: SiameseRanker, q_ids: torch.Tensor, a_ids: torch.Tensor, qi, ai,
                         batch_size: int) -> np.ndarray:
    """Encode each distinct question and answer once, then score pairs from the cached vectors."""
    if not getattr(model, "siamese", False):
        raise TypeError(f"{type(model).__name__} is not siamese; use score_pairs")
    qi, ai = _as_index(qi), _as_index(ai)
    if len(qi) != len(ai):
        raise ValueError(f"qi has {len(qi)} pairs but ai has {len(ai)}")
    if len(qi) == 0:
        return np.zeros(0, dtype=np.float32)
    q_rows, q_pos = torch.unique(qi, return_inverse=True)
    a_rows, a_pos = torch.unique(ai, return_inverse=True)
    with torch.inference_mode():
        qv = _encode(model.encode_question, q_ids, q_rows, batch_size)
        av = _encode(model.encode_answer, a_ids, a_rows, batch_size)
        chunk = max(1, _GATHER_ELEMENTS // qv.size(1))
        scores = [model.similarity(qv[q_pos[i:i + chunk]], av[a_pos[i:i + chunk]]).float()
                  for i in range(0, len(qi), chunk)]
    return torch.cat(scores).numpy()
