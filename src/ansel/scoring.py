"""Scoring (question, answer) pairs in batches.

Siamese models take the cached path: each distinct question and answer is encoded once and
a pair's score is the similarity of two cached vectors. Other models score pair by pair.
"""
from __future__ import annotations

import numpy as np
import torch

from ansel.models.base import Ranker


def model_device(model) -> torch.device:
    for t in (*model.parameters(), *model.buffers()):
        return t.device
    return torch.device("cpu")


def _trim(ids: torch.Tensor) -> torch.Tensor:
    """Drop columns that are padding in every row of the batch (right padding)."""
    width = int((ids != 0).sum(1).max().clamp_min(1))
    return ids[:, :width]


@torch.no_grad()
def _encode_all(encode, ids: np.ndarray, rows: np.ndarray, batch_size: int, device) -> torch.Tensor:
    # Sort by length so each batch carries little padding; restore order afterwards.
    lengths = (ids[rows] != 0).sum(1)
    order = np.argsort(-lengths, kind="stable")
    out = [encode(_trim(torch.from_numpy(ids[rows[order[i:i + batch_size]]]).to(device)))
           for i in range(0, len(order), batch_size)]
    vecs = torch.cat(out)
    inverse = torch.empty_like(torch.from_numpy(order))
    inverse[torch.from_numpy(order)] = torch.arange(len(order))
    return vecs[inverse.to(vecs.device)]


@torch.no_grad()
def score_siamese_cached(model, q_ids: np.ndarray, a_ids: np.ndarray, qi: np.ndarray, ai: np.ndarray,
                         batch_size: int = 256) -> np.ndarray:
    """Scores of pairs (q_ids[qi[k]], a_ids[ai[k]]), encoding each distinct row once."""
    device = model_device(model)
    uq, q_inv = np.unique(qi, return_inverse=True)
    ua, a_inv = np.unique(ai, return_inverse=True)
    qv = _encode_all(model.encode_question, q_ids, uq, batch_size, device)
    av = _encode_all(model.encode_answer, a_ids, ua, batch_size, device)
    scores = [model.similarity(qv[q_inv[i:i + 4096]], av[a_inv[i:i + 4096]])
              for i in range(0, len(qi), 4096)]
    return torch.cat(scores).float().cpu().numpy() if scores else np.zeros(0, np.float32)


@torch.no_grad()
def score_pairs(model: Ranker, q_ids: np.ndarray, a_ids: np.ndarray, qi: np.ndarray, ai: np.ndarray,
                batch_size: int = 256) -> np.ndarray:
    """Scores of pairs by a forward pass per batch of pairs (any Ranker)."""
    device = model_device(model)
    out = []
    for i in range(0, len(qi), batch_size):
        q = _trim(torch.from_numpy(q_ids[qi[i:i + batch_size]]).to(device))
        a = _trim(torch.from_numpy(a_ids[ai[i:i + batch_size]]).to(device))
        out.append(model(q, a).float().cpu())
    return torch.cat(out).numpy() if out else np.zeros(0, np.float32)


def score(model: Ranker, q_ids: np.ndarray, a_ids: np.ndarray, qi: np.ndarray, ai: np.ndarray,
          batch_size: int = 256) -> np.ndarray:
    """Eval-mode scores, through the cached path whenever the model is siamese."""
    was_training = model.training
    model.eval()
    try:
        fn = score_siamese_cached if model.siamese else score_pairs
        return fn(model, q_ids, a_ids, qi, ai, batch_size)
    finally:
        model.train(was_training)
