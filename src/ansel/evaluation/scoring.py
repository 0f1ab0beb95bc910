"""Scoring (question, candidate) pairs for evaluation.

Pairs are given as index arrays ``qi``, ``ai`` into padded token-id matrices ``q_ids`` [Nq, Lq]
and ``a_ids`` [Na, La] (numpy or torch; each distinct text stored once). The functions run on
the model's device, return one score per pair in pair order as a numpy array, and leave the
model's train/eval mode to the caller.

Most models encode each side alone and only then bring the two together: a siamese model
compares two vectors (``similarity``), an interaction model interacts per-token states
(``interact``: MV-LSTM, MatchPyramid), attentive pooling composes both sides' encoder states
(``compare``: AP-CNN, GGSA's attention compositions). ``score_cached`` encodes each distinct
text of a pass once: every distinct question first, kept (questions are few and short), then
the distinct answers longest first, one batch of ``batch_size`` at a time; a batch's answers are
scored against every pair that holds one of them and freed before the next batch is encoded, so
the per-token states of ~24k InsuranceQA answers (AP-CNN: 4,000 filters x 200 tokens) are never
held at once, yet an answer among 500 candidates of dozens of questions is encoded once, not once
per batch of pairs; where each answer of a batch is one pair's (candidates that are each question's
own), its pairs read the batch's states themselves rather than a copy gathered per pair.
``score_pairs`` is the general path, one forward pass per pair, for models whose answer encoding
reads the question (iGGSA).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from ansel.data.batches import trim_padding
from ansel.data.device_ids import to_device
from ansel.models.base import PAD, InteractionRanker, Ranker
from ansel.models.rankers import PairRanker

# Elements of both sides' states gathered for one pairwise call beyond ``batch_size`` pairs: small
# states (a siamese model's vectors) are compared thousands of pairs a call.
_GATHER_ELEMENTS = 1 << 24


def _as_index(idx) -> torch.Tensor:
    return torch.as_tensor(np.array(idx), dtype=torch.long)  # a copy: pandas may hand out read-only arrays


def _device(model: Ranker) -> torch.device:
    tensor = next(iter((*model.parameters(), *model.buffers())), None)
    return torch.device("cpu") if tensor is None else tensor.device


def _longest_first(ids: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """Positions of ``rows`` by decreasing text length: batches of texts of similar length cut padding."""
    return torch.argsort((ids[rows] != PAD).sum(1), descending=True, stable=True)


def _parts(encoded) -> tuple[torch.Tensor, ...]:
    return (encoded,) if isinstance(encoded, torch.Tensor) else tuple(encoded)


def _encode_all(encode, ids: torch.Tensor, rows: torch.Tensor, batch_size: int, device: torch.device):
    """(``encode`` of ids[rows] as a tuple of tensors, in batches of texts of similar length; the row
    of that result that holds each of ``rows``). It stays in batch order, as reordering would copy
    it. Each batch is written into place: concatenating the batches would hold everything twice."""
    order = _longest_first(ids, rows)
    out = None
    for i in range(0, len(rows), batch_size):
        parts = _parts(encode(to_device(trim_padding(ids[rows[order[i : i + batch_size]]]), device)))
        if out is None:  # the longest texts come first: later batches' per-token states are no wider
            out = tuple(part.new_zeros(len(rows), *part.shape[1:]) for part in parts)
        for whole, part in zip(out, parts):
            whole[(slice(i, i + len(part)), *map(slice, part.shape[1:]))] = part  # zeros (masked) beyond
    return out, to_device(torch.argsort(order), device)


def _cut(h: torch.Tensor, m: torch.Tensor):
    """Encoder states and mask cut to their widest real position (rows gathered from wider batches)."""
    width = int(m.any(0).nonzero().max()) + 1 if m.any() else 1
    return h[:, :width], m[:, :width]


def _sides(model: Ranker):
    """(encode questions, encode answers, score row-aligned sides: tuples of tensors) of a model
    that encodes each side alone; None for one whose answer encoding reads the question."""
    if model.siamese:
        return model.encode_question, model.encode_answer, lambda q, a: model.similarity(*q, *a)
    if isinstance(model, InteractionRanker):
        return model.encode_question_side, model.encode_answer_side, model.interact
    if isinstance(model, PairRanker) and not model.question_context:
        return (
            model.encode_side,
            functools.partial(model.encode_side, answer=True),
            lambda q, a: model.compare(*_cut(*q), *_cut(*a)),
        )
    return None


def score_pairs(model: Ranker, q_ids, a_ids, qi, ai, batch_size: int = 256) -> np.ndarray:
    """One forward pass per pair, in batches of ``batch_size`` pairs."""
    q_ids, a_ids, qi, ai = _inputs(q_ids, a_ids, qi, ai)
    device = _device(model)
    scores = []
    with torch.inference_mode():  # the scores stay on the device until the last batch: no wait per batch
        for i in range(0, len(qi), batch_size):
            q = to_device(trim_padding(q_ids[qi[i : i + batch_size]]), device)
            a = to_device(trim_padding(a_ids[ai[i : i + batch_size]]), device)
            scores.append(model(q, a).float())
    return torch.cat(scores).cpu().numpy() if scores else np.zeros(0, dtype=np.float32)


def score_cached(model: Ranker, q_ids, a_ids, qi, ai, batch_size: int = 256) -> np.ndarray:
    """Each distinct question and answer encoded once, in length-sorted batches of ``batch_size``
    texts; pairs scored at least ``batch_size`` at a time, per batch of answers."""
    sides = _sides(model)
    if sides is None:
        raise TypeError(f"{type(model).__name__} does not encode its sides alone; use score_pairs")
    encode_question, encode_answer, pair_scores = sides
    q_ids, a_ids, qi, ai = _inputs(q_ids, a_ids, qi, ai)
    if len(qi) == 0:
        return np.zeros(0, dtype=np.float32)
    device = _device(model)
    q_rows, q_pos = torch.unique(qi, return_inverse=True)
    a_rows, a_pos = torch.unique(ai, return_inverse=True)
    # each distinct answer's batch (longest answers first) and row in it; pairs grouped by batch
    order = _longest_first(a_ids, a_rows)
    place = torch.empty_like(order)
    place[order] = torch.arange(len(order))
    pair_batch, pair_row = (place // batch_size)[a_pos], (place % batch_size)[a_pos]
    by_batch = torch.argsort(pair_batch, stable=True)
    counts = torch.bincount(pair_batch).tolist()  # every batch's answers are some pair's
    scores = torch.empty(len(qi), device=device)
    with torch.inference_mode():
        q_side, q_where = _encode_all(encode_question, q_ids, q_rows, batch_size, device)
        q_pos, pair_row, by_batch = (
            q_where[to_device(q_pos, device)],
            to_device(pair_row, device),
            to_device(by_batch, device),
        )
        start = 0
        for b, count in enumerate(counts):
            a_batch = trim_padding(a_ids[a_rows[order[b * batch_size : (b + 1) * batch_size]]])
            a_side = _parts(encode_answer(to_device(a_batch, device)))
            batch_pairs = by_batch[start : start + count]
            # each answer of the batch in one pair (no two questions share it): its pairs in row order
            # read the batch's states in place, where gathering them per pair would copy them all.
            # Strided states (a convolution's) keep the pairs' order: a product over them rounds by row order.
            in_place = count == len(a_batch) and all(t.is_contiguous() for t in (*q_side, *a_side))
            if in_place:
                batch_pairs = batch_pairs[torch.argsort(pair_row[batch_pairs])]
            per_pair = max(1, sum(t[:1].numel() for t in (*q_side, *a_side)))
            chunk = max(batch_size, _GATHER_ELEMENTS // per_pair)
            for i in range(0, count, chunk):
                pairs = batch_pairs[i : i + chunk]
                a = tuple(t[i : i + chunk] if in_place else t[pair_row[pairs]] for t in a_side)
                scores[pairs] = pair_scores(tuple(t[q_pos[pairs]] for t in q_side), a).float()
            start += count
    return scores.cpu().numpy()


def _inputs(q_ids, a_ids, qi, ai):
    qi, ai = _as_index(qi), _as_index(ai)
    if len(qi) != len(ai):
        raise ValueError(f"qi has {len(qi)} pairs but ai has {len(ai)}")
    return torch.as_tensor(q_ids, dtype=torch.long), torch.as_tensor(a_ids, dtype=torch.long), qi, ai


def score(model: Ranker, q_ids, a_ids, qi, ai, batch_size: int = 256) -> np.ndarray:
    """Eval-mode scores (dropout off), through ``score_cached`` whenever the model encodes its sides
    alone, else ``score_pairs``."""
    was_training = model.training
    model.eval()
    try:
        fn = score_pairs if _sides(model) is None else score_cached
        return fn(model, q_ids, a_ids, qi, ai, batch_size)
    finally:
        model.train(was_training)
