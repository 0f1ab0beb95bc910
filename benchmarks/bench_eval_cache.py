"""Candidates scored per second: cached siamese scoring vs one forward pass per pair.

InsuranceQA-size synthetic pool: 1,800 questions x 500 candidates drawn from ~24k answers of
200 tokens, scored by QA-CNN with the paper's InsuranceQA size (4,000 filters, 100-d embeddings,
3-word windows). The cached path always scores the whole pool, since its advantage comes from
how often answers repeat across questions. ``--quick`` times the per-pair path on a random
subsample of pairs and reports its rate (per-pair cost does not depend on the pool), so the
two rates can be compared without an hour-long per-pair run. Freed memory stays in the
process, as in ``ansel evaluate`` (``ansel.memory``).

    PYTHONPATH=src python benchmarks/bench_eval_cache.py --quick
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from ansel.memory import keep_freed_memory
from ansel.models.registry import build_model
from ansel.evaluation.scoring import score_pairs, score_siamese_cached


def synthetic_pool(questions: int, candidates: int, answers: int, q_len: int, a_len: int, vocab: int, seed: int):
    rng = np.random.default_rng(seed)
    q_ids = torch.from_numpy(rng.integers(1, vocab, (questions, q_len)))
    a_ids = torch.from_numpy(rng.integers(1, vocab, (answers, a_len)))
    qi = np.repeat(np.arange(questions), candidates)
    ai = np.concatenate([rng.choice(answers, candidates, replace=False) for _ in range(questions)])
    return q_ids, a_ids, qi, ai


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1800)
    parser.add_argument("--candidates", type=int, default=500)
    parser.add_argument("--answers", type=int, default=24000)
    parser.add_argument("--answer-len", type=int, default=200)
    parser.add_argument("--question-len", type=int, default=7)
    parser.add_argument("--filters", type=int, default=4000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--quick", type=int, nargs="?", const=2000, default=None, metavar="PAIRS",
                        help="time the per-pair path on this many sampled pairs (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    keep_freed_memory()
    torch.manual_seed(args.seed)
    vocab = 20000
    model = build_model("qa_cnn", {"embedding_dim": 100, "filters": args.filters, "kernel": 3}, vocab).eval()
    q_ids, a_ids, qi, ai = synthetic_pool(args.questions, args.candidates, args.answers,
                                          args.question_len, args.answer_len, vocab, args.seed)
    distinct = len(np.unique(ai))
    print(f"pool: {len(qi):,} candidates, {args.questions:,} questions, {distinct:,} distinct answers "
          f"of {args.answer_len} tokens; QA-CNN {args.filters} filters; torch threads {torch.get_num_threads()}")

    start = time.perf_counter()
    cached = score_siamese_cached(model, q_ids, a_ids, qi, ai, args.batch_size)
    cached_s = time.perf_counter() - start
    cached_rate = len(qi) / cached_s
    print(f"cached:   {len(qi):>9,} candidates in {cached_s:8.1f} s = {cached_rate:10,.0f} candidates/s")

    sample = np.arange(len(qi))
    if args.quick:
        sample = np.sort(np.random.default_rng(args.seed).choice(len(qi), args.quick, replace=False))
    start = time.perf_counter()
    per_pair = score_pairs(model, q_ids, a_ids, qi[sample], ai[sample], args.batch_size)
    pair_s = time.perf_counter() - start
    pair_rate = len(sample) / pair_s
    note = f" (sample; full pool would take ~{len(qi) / pair_rate / 60:.0f} min)" if args.quick else ""
    print(f"per-pair: {len(sample):>9,} candidates in {pair_s:8.1f} s = {pair_rate:10,.0f} candidates/s{note}")

    gap = float(np.abs(per_pair - cached[sample]).max())
    print(f"max |cached - per-pair| score difference on timed pairs: {gap:.2e}")
    print(f"speed-up cached / per-pair: {cached_rate / pair_rate:.1f}x (target >= 20x)")


if __name__ == "__main__":
    main()
