"""BM25 negative mining as in the yahooQA protocol: top-1000 per question, 4 negatives sampled
excluding positives (seeded), for 10k questions.

The answer pool imitates yahooQA's (answers of 5–50 tokens, Zipf-distributed words) at
100k answers by default; ``--real`` uses the real answer sentences of the mirror instead
(TREC-QA TRAIN-ALL + WikiQA, ~76k) with their questions cycled to 10k.
Prints wall-clock and CPU seconds for index+retrieval+sampling with 1 thread (baseline) and
with ``--threads`` threads, and their ratio. Target: under a minute on 2 cores.

    PYTHONPATH=src python benchmarks/bench_bm25.py [--answers 100000] [--questions 10000] [--threads 2] [--real]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from ansel.data.mining import bm25_negatives


def synthetic(n_answers: int, n_questions: int, vocab: int = 50_000, seed: int = 0):
    rng = np.random.default_rng(seed)
    # Zipf(1.1) ranks over a fixed vocabulary: a realistic head of frequent words and long tail.
    ranks = np.arange(1, vocab + 1)
    p = 1.0 / ranks**1.1
    p /= p.sum()
    words = np.array([f"w{i}" for i in range(vocab)])

    def texts(n, lo, hi):
        lens = rng.integers(lo, hi + 1, n)
        flat = words[rng.choice(vocab, lens.sum(), p=p)]
        return [list(x) for x in np.split(flat, np.cumsum(lens)[:-1])]

    answers = texts(n_answers, 5, 50)
    # Each question shares a few words with its positive answer, as real questions do.
    pos = rng.integers(n_answers, size=n_questions)
    questions = [q[:-3] + list(rng.choice(answers[a], 3)) for q, a in zip(texts(n_questions, 5, 25), pos)]
    return questions, answers, [{int(a)} for a in pos]


def real(mirror: Path, n_questions: int):
    from ansel.data.registry import get_source

    with tempfile.TemporaryDirectory() as tmp:
        parts = []
        for name in ("trecqa", "wikiqa"):
            raw = Path(tmp) / name
            get_source(name).fetch(raw, mirror, {})
            parts.append(get_source(name).read(raw, {"tokenizer": "english"}))
    answers, questions, positives = [], [], []
    for ds in parts:
        offset = len(answers)
        pos_of = {a: offset + i for i, a in enumerate(ds.answers.aid)}
        answers += [list(t) for t in ds.answers.tokens]
        qtok = ds.questions.set_index("qid").tokens
        for split in ds.splits.values():
            for qid, g in split[split.label == 1].groupby("qid"):
                questions.append(list(qtok[qid]))
                positives.append({pos_of[a] for a in g.aid})
    reps = -(-n_questions // len(questions))
    return (questions * reps)[:n_questions], answers, (positives * reps)[:n_questions]


def run(questions, answers, positives, threads: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process): CPU time stays meaningful on a shared machine."""
    start, cpu = time.perf_counter(), time.process_time()
    picks = bm25_negatives(questions, answers, positives, k=1000, n=4, seed=13, n_threads=threads)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert all(len(p) == 4 and not set(p) & pos for p, pos in zip(picks, positives))
    return elapsed, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=100_000)
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--real", action="store_true")
    args = ap.parse_args()
    if args.real:
        mirror = Path(os.environ.get("ANSEL_DATA_MIRROR", "../shared/datasets"))
        questions, answers, positives = real(mirror, args.questions)
        pool = "real TREC-QA TRAIN-ALL + WikiQA answers"
    else:
        questions, answers, positives = synthetic(args.answers, args.questions)
        pool = "synthetic Zipf answers of 5-50 tokens"
    print(f"pool: {pool}: {len(answers):,} answers, {len(questions):,} questions, top-1000, 4 negatives")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    base, cpu = run(questions, answers, positives, 1)
    print(f"1 thread : {base:6.1f} s wall, {cpu:6.1f} s CPU  (index + retrieval + sampling)")
    if args.threads > 1:
        multi, cpu = run(questions, answers, positives, args.threads)
        print(f"{args.threads} threads: {multi:6.1f} s wall, {cpu:6.1f} s CPU  (speed-up x{base / multi:.2f})")


if __name__ == "__main__":
    main()
