"""Scoring (question, candidate) pairs for evaluation.

Pairs are given as index arrays ``qi``, ``ai`` into padded token-id matrices ``q_ids`` [Nq, Lq]
and ``a_ids`` [Na, La] (numpy or torch; each distinct text stored once). Both functions run on
the model's device, return one score per pair in pair order as a numpy array, and leave the
model's train/eval mode to the caller.

A siamese model encodes each side independently, so ``score_siamese_cached`` encodes each
distinct question and answer once and then only compares vectors; InsuranceQA scores 500
candidates per question drawn from ~24k answers, so per-pair scoring would encode every
answer dozens of times. ``score_pairs`` is the general path for models whose answer
representation depends on the question (attentive pooling).
"""
from __future__ import annotations

import numpy as np
import torch

from ansel.data.batches import trim_padding
from ansel.models.base import PAD, Ranker, SiameseRanker

# Vectors gathered per similarity call: bounds memory at chunk x hidden floats.
_GATHER_ELEMENTS = 1 << 24


def _as_index(idx) -> torch.Tensor:
    return torch.as_tensor(np.array(idx), dtype=torch.long)  # a copy: pandas may hand out read-only arrays


def _device(model: Ranker) -> torch.device:
    tensor = next(iter((*model.parameters(), *model.buffers())), None)
    return torch.device("cpu") if tensor is None else tensor.device


def _encode(encode, ids: torch.Tensor, rows: torch.Tensor, batch_size: int, device: torch.device) -> torch.Tensor:
    """Vectors of ids[rows], in rows order; batches hold texts of similar length to cut padding."""
    order = torch.argsort((ids[rows] != PAD).sum(1), descending=True, stable=True)
    vectors = torch.cat([encode(trim_padding(ids[rows[order[i:i + batch_size]]]).to(device))
                         for i in range(0, len(rows), batch_size)])
    return vectors[torch.argsort(order).to(device)]


def score_pairs(model: Ranker, q_ids, a_ids, qi, ai, batch_size: int = 256) -> np.ndarray:
    """One forward pass per pair, in batches of ``batch_size`` pairs."""
    q_ids, a_ids, qi, ai = _inputs(q_ids, a_ids, qi, ai)
    device = _device(model)
    scores = []
    with torch.inference_mode():
        for i in range(0, len(qi), batch_size):
            q = trim_padding(q_ids[qi[i:i + batch_size]]).to(device)
            a = trim_padding(a_ids[ai[i:i + batch_size]]).to(device)
            scores.append(model(q, a).float().cpu())
    return torch.cat(scores).numpy() if scores else np.zeros(0, dtype=np.float32)


def score_siamese_cached(model: SiameseRanker, q_ids, a_ids, qi, ai, batch_size: int = 256) -> np.ndarray:
    """Encode each distinct question and answer once, then score pairs from the cached vectors."""
    if not getattr(model, "siamese", False):
        raise TypeError(f"{type(model).__name__} is not siamese; use score_pairs")
    q_ids, a_ids, qi, ai = _inputs(q_ids, a_ids, qi, ai)
    if len(qi) == 0:
        return np.zeros(0, dtype=np.float32)
    device = _device(model)
    q_rows, q_pos = torch.unique(qi, return_inverse=True)
    a_rows, a_pos = torch.unique(ai, return_inverse=True)
    q_pos, a_pos = q_pos.to(device), a_pos.to(device)
    with torch.inference_mode():
        qv = _encode(model.encode_question, q_ids, q_rows, batch_size, device)
        av = _encode(model.encode_answer, a_ids, a_rows, batch_size, device)
        chunk = max(1, _GATHER_ELEMENTS // qv.size(1))
        scores = [model.similarity(qv[q_pos[i:i + chunk]], av[a_pos[i:i + chunk]]).float().cpu()
                  for i in range(0, len(qi), chunk)]
    return torch.cat(scores).numpy()


def _inputs(q_ids, a_ids, qi, ai):
    qi, ai = _as_index(qi), _as_index(ai)
    if len(qi) != len(ai):
        raise ValueError(f"qi has {len(qi)} pairs but ai has {len(ai)}")
    return torch.as_tensor(q_ids, dtype=torch.long), torch.as_tensor(a_ids, dtype=torch.long), qi, ai


def score(model: Ranker, q_ids, a_ids, qi, ai, batch_size: int = 256) -> np.ndarray:
    """Eval-mode scores (dropout off), through the cached path whenever the model is siamese."""
    was_training = model.training
    model.eval()
    try:
        fn = score_siamese_cached if model.siamese else score_pairs
        return fn(model, q_ids, a_ids, qi, ai, batch_size)
    finally:
        model.train(was_training)
