"""Scoring (question, candidate) pairs for evaluation.

Pairs are given as index arrays ``qi``, ``ai`` into padded token-id matrices ``q_ids`` [Nq, Lq]
and ``a_ids`` [Na, La] (numpy or torch; each distinct text stored once). The functions run on
the model's device, return one score per pair in pair order as a numpy array, and leave the
model's train/eval mode to the caller.

A siamese model encodes each side independently, so ``score_siamese_cached`` encodes each
distinct question and answer once and then only compares vectors; InsuranceQA scores 500
candidates per question drawn from ~24k answers, so per-pair scoring would encode every
answer dozens of times. An interaction model encodes each side alone too, into per-token states
that only a pairwise interaction scores: ``score_interaction_cached`` encodes the distinct texts
of a block of pairs once, in batches of similar length, and interacts the block's pairs; a
block bounds the memory of those states. Attentive pooling reads both sides' states at once, but
each side is encoded alone: ``score_pairs_cached`` encodes a batch of pairs' distinct texts once (a
question beside its 50 sampled-max candidates once, not 50 times). ``score_pairs`` is the general
path, for models whose answer encoding reads the question (iGGSA).
"""
from __future__ import annotations

import numpy as np
import torch

from ansel.data.batches import trim_padding
from ansel.models.base import PAD, InteractionRanker, Ranker, SiameseRanker
from ansel.models.rankers import PairRanker

# Vectors gathered per similarity call: bounds memory at chunk x hidden floats.
_GATHER_ELEMENTS = 1 << 24
# score_interaction_cached: pairs per block, in batches (a block's sides, per-token states of up
# to two texts a pair, are held at once), and how many times smaller its batches of texts to
# encode are: a batch runs as many steps as its longest text, and smaller length-sorted batches
# follow the lengths more closely (MV-LSTM on WikiQA: ~13% less CPU time with 64 than with 256).
_BLOCK_BATCHES = 4
_ENCODE_SPLIT = 4


def _as_index(idx) -> torch.Tensor:
    return torch.as_tensor(np.array(idx), dtype=torch.long)  # a copy: pandas may hand out read-only arrays


def _device(model: Ranker) -> torch.device:
    tensor = next(iter((*model.parameters(), *model.buffers())), None)
    return torch.device("cpu") if tensor is None else tensor.device


def _encode(encode, ids: torch.Tensor, rows: torch.Tensor, batch_size: int, device: torch.device):
    """(``encode`` of ids[rows] in batches of texts of similar length, to cut padding; the row of
    that result that holds each of ``rows``). The result is a tensor, or a tuple of tensors where
    ``encode`` returns one; it stays in batch order, as reordering would copy it. Each batch is
    written into place: concatenating the batches would hold everything twice."""
    order = torch.argsort((ids[rows] != PAD).sum(1), descending=True, stable=True)
    out = None
    for i in range(0, len(rows), batch_size):
        encoded = encode(trim_padding(ids[rows[order[i:i + batch_size]]]).to(device))
        parts = (encoded,) if isinstance(encoded, torch.Tensor) else encoded
        if out is None:  # the longest texts come first: later batches' per-token states are no wider
            out = tuple(part.new_zeros(len(rows), *part.shape[1:]) for part in parts)
        for whole, part in zip(out, parts):
            whole[(slice(i, i + len(part)), *map(slice, part.shape[1:]))] = part  # zeros (masked) beyond
    where = torch.argsort(order).to(device)
    return (out[0] if isinstance(encoded, torch.Tensor) else out), where


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
    with torch.inference_mode():
        qv, q_where = _encode(model.encode_question, q_ids, q_rows, batch_size, device)
        av, a_where = _encode(model.encode_answer, a_ids, a_rows, batch_size, device)
        q_pos, a_pos = q_where[q_pos.to(device)], a_where[a_pos.to(device)]
        chunk = max(1, _GATHER_ELEMENTS // qv.size(1))
        scores = [model.similarity(qv[q_pos[i:i + chunk]], av[a_pos[i:i + chunk]]).float().cpu()
                  for i in range(0, len(qi), chunk)]
    return torch.cat(scores).numpy()


def score_interaction_cached(model: InteractionRanker, q_ids, a_ids, qi, ai, batch_size: int = 256) -> np.ndarray:
    """Per block of pairs: encode each distinct question and answer once, in length-sorted batches,
    then interact the block's pairs in batches of ``batch_size``."""
    if not isinstance(model, InteractionRanker):
        raise TypeError(f"{type(model).__name__} is no InteractionRanker; use score_pairs")
    q_ids, a_ids, qi, ai = _inputs(q_ids, a_ids, qi, ai)
    device = _device(model)
    block = batch_size * _BLOCK_BATCHES
    with torch.inference_mode():
        scores = [_score_block(model, q_ids, a_ids, qi[i:i + block], ai[i:i + block], batch_size, device)
                  for i in range(0, len(qi), block)]
    return torch.cat(scores).numpy() if scores else np.zeros(0, dtype=np.float32)


def _score_block(model: InteractionRanker, q_ids, a_ids, qi, ai, batch_size: int, device) -> torch.Tensor:
    """Scores of one block of pairs; its sides are freed before the next block's are encoded."""
    q_rows, q_pos = torch.unique(qi, return_inverse=True)
    a_rows, a_pos = torch.unique(ai, return_inverse=True)
    texts = max(1, batch_size // _ENCODE_SPLIT)
    q_sides, q_where = _encode(model.encode_question_side, q_ids, q_rows, texts, device)
    a_sides, a_where = _encode(model.encode_answer_side, a_ids, a_rows, texts, device)
    q_pos, a_pos = q_where[q_pos.to(device)], a_where[a_pos.to(device)]
    return torch.cat([model.interact(tuple(t[q_pos[i:i + batch_size]] for t in q_sides),
                                     tuple(t[a_pos[i:i + batch_size]] for t in a_sides)).float().cpu()
                      for i in range(0, len(qi), batch_size)])


def score_pairs_cached(model: PairRanker, q_ids, a_ids, qi, ai, batch_size: int = 256) -> np.ndarray:
    """A pair model whose sides are encoded alone (attentive pooling): per batch of pairs, each
    distinct question and answer is encoded once (a question beside its candidates once, not once a
    pair), and the composition compares the batch's pairs on their states, cut to the batch's widest."""
    if not isinstance(model, PairRanker) or model.question_context:
        raise TypeError(f"{type(model).__name__} does not encode its sides alone; use score_pairs")
    q_ids, a_ids, qi, ai = _inputs(q_ids, a_ids, qi, ai)
    device = _device(model)
    texts = max(1, batch_size // _ENCODE_SPLIT)
    scores = []
    with torch.inference_mode():
        for i in range(0, len(qi), batch_size):
            (hq, mq), (ha, ma) = (_side(model, ids, idx[i:i + batch_size], answer, texts, device)
                                  for ids, idx, answer in ((q_ids, qi, False), (a_ids, ai, True)))
            scores.append(model.compare(hq, mq, ha, ma).float().cpu())
    return torch.cat(scores).numpy() if scores else np.zeros(0, dtype=np.float32)


def _side(model: PairRanker, ids, idx, answer: bool, texts: int, device):
    """One side's (states, mask) for the pairs ``idx``: its distinct texts encoded once, then
    gathered per pair and cut to the widest real position."""
    rows, pos = torch.unique(idx, return_inverse=True)
    (h, m), where = _encode(lambda t: model.encode_side(t, answer=answer), ids, rows, texts, device)
    per_pair = where[pos.to(device)]
    h, m = h[per_pair], m[per_pair]
    width = int(m.any(0).nonzero().max()) + 1 if m.any() else 1
    return h[:, :width], m[:, :width]


def _inputs(q_ids, a_ids, qi, ai):
    qi, ai = _as_index(qi), _as_index(ai)
    if len(qi) != len(ai):
        raise ValueError(f"qi has {len(qi)} pairs but ai has {len(ai)}")
    return torch.as_tensor(q_ids, dtype=torch.long), torch.as_tensor(a_ids, dtype=torch.long), qi, ai


def score(model: Ranker, q_ids, a_ids, qi, ai, batch_size: int = 256) -> np.ndarray:
    """Eval-mode scores (dropout off), through a cached path whenever the model encodes its sides
    alone (siamese or interaction models)."""
    was_training = model.training
    model.eval()
    try:
        fn = (score_siamese_cached if model.siamese else
              score_interaction_cached if isinstance(model, InteractionRanker) else
              score_pairs_cached if isinstance(model, PairRanker) and not model.question_context else score_pairs)
        return fn(model, q_ids, a_ids, qi, ai, batch_size)
    finally:
        model.train(was_training)
