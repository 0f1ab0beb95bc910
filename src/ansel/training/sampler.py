"""Training negatives: the negative answer of each pairwise training example, drawn per batch
from a seeded generator. ``pool`` draws from the label-0 candidates of the processed training
table: the corpus's own negatives, or those mined offline at preprocessing (``ansel.data.mining``).

Strategies (``train.negatives.strategy``):
  pool         a labelled negative of the question's own candidate pool (random answer if none);
  random       a uniformly random answer of the training answer set that is not a positive;
  sampled_max  ``n`` random answers as above, scored by the current model (eval mode); the
               highest-scoring one is used (dos Santos et al. 2016, following Feng et al. 2015).

Where ``sampled_max`` draws its ``n`` from (``train.negatives.source``): ``answers``, the whole
training answer set (the paper's); ``candidates``, the question's own labelled negatives, with
replacement (the answers a ranking task's test puts beside the positive; random answers where a
question has none).
"""

from __future__ import annotations

import numpy as np
import torch

from ansel.evaluation import scoring


def _by_question(qi: np.ndarray, ai: np.ndarray):
    """(question, its answers in input order) per distinct question: a stable sort keeps each
    question's rows in input order, so draws match the pool as given (numpy rather than a pandas
    groupby: pandas costs a process that loads no dataset ~60 MB resident)."""
    order = np.argsort(qi, kind="stable")
    questions, starts = np.unique(qi[order], return_index=True)
    return zip(questions.tolist(), np.split(ai[order], starts[1:]))


class NegativeSampler:
    def __init__(
        self,
        qi: np.ndarray,
        ai: np.ndarray,
        labels: np.ndarray,
        strategy: str,
        n: int = 1,
        source: str = "answers",
        one_call: bool = True,
    ):
        """``one_call``: sampled_max scores a batch's B x n candidates as one scoring batch, each side's
        distinct texts in one encoder call (small calls leave an accelerator idle); False (the
        trainer's on the CPU, where one call pads every candidate to the longest: a QA-CNN batch of
        50-200-token answers took ~1.4x as long) in scoring's length-sorted batches."""
        if strategy not in ("pool", "random", "sampled_max"):
            raise ValueError(f"train.negatives.strategy: unknown {strategy!r} (pool, random, sampled_max)")
        if source not in ("answers", "candidates"):
            raise ValueError(f"train.negatives.source: unknown {source!r} (answers, candidates)")
        self.strategy, self.n, self.source, self.one_call = strategy, n, source, one_call
        qi, ai = np.asarray(qi), np.asarray(ai)
        self.answer_space = np.unique(ai)
        positive = np.asarray(labels) > 0
        self.positives: dict[int, set[int]] = {q: set(a.tolist()) for q, a in _by_question(qi[positive], ai[positive])}
        self.pool: dict[int, np.ndarray] = dict(_by_question(qi[~positive], ai[~positive]))

    def _random(self, q: int, k: int, rng: np.random.Generator) -> np.ndarray:
        pos = self.positives.get(q, set())
        out = rng.choice(self.answer_space, k)
        for j in range(k):  # rejection sampling: positives are a tiny fraction of the space
            while int(out[j]) in pos:
                out[j] = rng.choice(self.answer_space)
        return out

    def _draw(self, q: int, k: int, rng: np.random.Generator) -> np.ndarray:
        if self.source == "candidates" and q in self.pool:
            return rng.choice(self.pool[q], k)
        return self._random(q, k, rng)

    def sample(self, q_batch: np.ndarray, rng: np.random.Generator, model=None, q_ids=None, a_ids=None) -> np.ndarray:
        if self.strategy == "pool":
            return np.array(
                [rng.choice(self.pool[q]) if q in self.pool else self._random(q, 1, rng)[0] for q in map(int, q_batch)]
            )
        if self.strategy == "random":
            return np.array([self._random(q, 1, rng)[0] for q in map(int, q_batch)])
        cand = np.stack([self._draw(q, self.n, rng) for q in map(int, q_batch)])  # [B, n]
        batch = {"batch_size": cand.size} if self.one_call else {}
        with torch.no_grad():
            s = scoring.score(model, q_ids, a_ids, np.repeat(q_batch, self.n), cand.reshape(-1), **batch)
        return cand[np.arange(len(q_batch)), s.reshape(len(q_batch), self.n).argmax(1)]
