"""Evaluation scoring: each distinct text encoded once, against an earlier commit's scoring and
against one forward pass per pair.

InsuranceQA-shaped synthetic pool: questions x 500 candidates drawn from a set of answers of up to
200 tokens, so an answer recurs among many questions' candidates (InsuranceQA's test: 1,800 x 500
from ~24k answers, each ~37 times). ``--arch``: QA-CNN (siamese), AP-CNN (attentive pooling),
MV-LSTM or MTAS (interaction), 100-d embeddings, InsuranceQA's 4,000 filters and 3-word windows.

By default the cached path scores the whole pool against the per-pair path; ``--quick`` times the
per-pair path on a random subsample of pairs and reports its rate (per-pair cost does not depend on
the pool). ``--old REV`` instead times the scoring code of git commit REV (``git show``) in the
same process on the same model and pool: time, encoder calls and texts encoded per side, the
largest score difference and whether every question ranks its candidates alike; then training
batches' sampled-max negatives (B questions x n candidates) scored as REV's sampler did and as
``NegativeSampler`` does (in one call, and in the CPU's length-sorted batches). Freed memory stays
in the process, as in ``ansel evaluate`` (``ansel.memory``).

    PYTHONPATH=src python benchmarks/bench_eval_cache.py --quick
    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/bench_eval_cache.py --old be9a607 --arch ap_cnn \\
        --questions 60 --answers 2000 --filters 400      # ~1 CPU minute (AP-CNN; the others ~0.5)
"""

from __future__ import annotations

import argparse
import subprocess
import time
import types
from pathlib import Path

import numpy as np
import torch

from ansel.evaluation import scoring
from ansel.memory import keep_freed_memory
from ansel.models.registry import build_model
from ansel.training.sampler import NegativeSampler

ENCODERS = ("encode_question", "encode_answer", "encode_question_side", "encode_answer_side", "encode_side")


def synthetic_pool(questions: int, candidates: int, answers: int, q_len: int, a_len: int, vocab: int, seed: int):
    """Token ids of ragged texts (answers of a_len/4 to a_len tokens, questions q_len/2 to q_len),
    each question's candidates distinct."""
    rng = np.random.default_rng(seed)

    def texts(n, longest, shortest):
        ids = rng.integers(1, vocab, (n, longest))
        ids[np.arange(longest) >= rng.integers(shortest, longest + 1, (n, 1))] = 0
        return torch.from_numpy(ids)

    qi = np.repeat(np.arange(questions), candidates)
    ai = np.concatenate([rng.choice(answers, candidates, replace=False) for _ in range(questions)])
    return texts(questions, q_len, max(1, q_len // 2)), texts(answers, a_len, max(1, a_len // 4)), qi, ai


def model_for(args, vocab: int):
    hparams = {
        "qa_cnn": {"embedding_dim": 100, "filters": args.filters, "kernel": 3},
        "ap_cnn": {"embedding_dim": 100, "filters": args.filters, "kernel": 3},
        "mv_lstm": {
            "embedding_dim": 100,
            "hidden": args.hidden,
            "text1_maxlen": args.question_len,
            "text2_maxlen": args.answer_len,
        },
        # the authors' code's sizes (presets: mtas_lawqa): 4 heads, 300 units a direction, texts read at 100 tokens
        "mtas": {"embedding_dim": 150, "hidden": args.hidden, "attention": 100, "heads": 4, "max_len": 100},
    }[args.arch]
    return build_model(args.arch, hparams, vocab, n_categories=2).eval()


def count_encoding(model) -> dict[str, list[int]]:
    """{side: [calls, texts]} the model's side encoders receive from now on."""
    counts = {"q": [0, 0], "a": [0, 0]}
    for name in ENCODERS:
        if hasattr(model, name):

            def counted(ids, *args, name=name, encode=getattr(model, name), **kwargs):
                side = counts["a" if "answer" in name or kwargs.get("answer") else "q"]
                side[0], side[1] = side[0] + 1, side[1] + len(ids)
                return encode(ids, *args, **kwargs)

            setattr(model, name, counted)
    return counts


def timed(counts, fn, *args, **kwargs):
    """(result, seconds, {side: [calls, texts]} of this call)."""
    before = {side: list(c) for side, c in counts.items()}
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    seconds = time.perf_counter() - start
    return out, seconds, {side: [c[0] - before[side][0], c[1] - before[side][1]] for side, c in counts.items()}


def calls_text(c) -> str:
    return f"questions {c['q'][1]:,} texts in {c['q'][0]:,} calls, answers {c['a'][1]:,} texts in {c['a'][0]:,} calls"


def scoring_at(rev: str):
    """The module src/ansel/evaluation/scoring.py as it was at git commit ``rev``."""
    path = "src/ansel/evaluation/scoring.py"
    shown = subprocess.run(
        ["git", "show", f"{rev}:{path}"], capture_output=True, text=True, cwd=Path(__file__).resolve().parent
    )
    if shown.returncode:
        raise SystemExit(f"--old {rev}: git show {rev}:{path} failed: {shown.stderr.strip()}")
    module = types.ModuleType(f"scoring_{rev}")
    exec(compile(shown.stdout, f"{rev}:{path}", "exec"), module.__dict__)
    return module


def versus_old(args, model, counts, q_ids, a_ids, qi, ai, cached, cached_s, cached_calls) -> None:
    old = scoring_at(args.old)
    previous, old_s, old_calls = timed(counts, old.score, model, q_ids, a_ids, qi, ai, args.batch_size)
    print(f"{args.old}:  {len(qi):>9,} candidates in {old_s:8.1f} s; {calls_text(old_calls)}")
    ranks = [np.argsort(-s.reshape(args.questions, args.candidates), 1, kind="stable") for s in (cached, previous)]
    print(
        f"max |new - {args.old}| score difference: {np.abs(cached - previous).max():.2e}; "
        f"rankings identical: {np.array_equal(*ranks)}"
    )
    print(
        f"speed-up new / {args.old}: {old_s / cached_s:.2f}x; answer texts encoded "
        f"{old_calls['a'][1] / cached_calls['a'][1]:.1f}x fewer"
    )

    # sampled-max: a batch's B x n candidates as REV's sampler scored them (batches of 256 pairs) and
    # as NegativeSampler does, in one call (an accelerator's) or in length-sorted batches (the CPU's)
    B, n = args.sample_batch, args.sample_n
    labels = (np.arange(len(qi)) % args.candidates == 0).astype(int)
    samplers = {
        mode: NegativeSampler(qi, ai, labels, "sampled_max", n, one_call=mode == "one call")
        for mode in ("one call", "sorted")
    }
    totals = {mode: [0.0, 0, 0] for mode in (*samplers, args.old)}  # seconds, answer calls, question calls
    for k, q_batch in enumerate(np.random.default_rng(args.seed).choice(args.questions, (args.sample_batches, B))):
        chosen = {}
        for mode, sampler in samplers.items():  # the same draws (seed k): the same negatives
            chosen[mode], seconds, c = timed(
                counts, sampler.sample, q_batch, np.random.default_rng(k), model, q_ids, a_ids
            )
            totals[mode] = [totals[mode][0] + seconds, totals[mode][1] + c["a"][0], totals[mode][2] + c["q"][0]]
        rng = np.random.default_rng(k)
        cand = np.stack([samplers["sorted"]._draw(int(q), n, rng) for q in q_batch])
        s, seconds, c = timed(counts, old.score, model, q_ids, a_ids, np.repeat(q_batch, n), cand.reshape(-1))
        totals[args.old] = [
            totals[args.old][0] + seconds,
            totals[args.old][1] + c["a"][0],
            totals[args.old][2] + c["q"][0],
        ]
        chosen[args.old] = cand[np.arange(B), s.reshape(B, n).argmax(1)]
        assert all(np.array_equal(c, chosen[args.old]) for c in chosen.values()), "negatives differ"
    per = args.sample_batches
    print(f"sampled-max, {per} batches of {B} x {n} candidates (the same negatives every way):")
    for mode, (seconds, a_calls, q_calls) in totals.items():
        print(
            f"  {mode:>9}: {seconds / per * 1e3:7.1f} ms a batch ({totals[args.old][0] / seconds:.2f}x "
            f"{args.old}'s); answers in {a_calls / per:.1f} calls a batch, questions in {q_calls / per:.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=("qa_cnn", "ap_cnn", "mv_lstm", "mtas"), default="qa_cnn")
    parser.add_argument("--questions", type=int, default=1800)
    parser.add_argument("--candidates", type=int, default=500)
    parser.add_argument("--answers", type=int, default=24000)
    parser.add_argument("--answer-len", type=int, default=200)
    parser.add_argument("--question-len", type=int, default=7)
    parser.add_argument("--filters", type=int, default=4000)
    parser.add_argument("--hidden", type=int, default=50, help="MV-LSTM's (MTAS's) hidden size per direction")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument(
        "--quick",
        type=int,
        nargs="?",
        const=2000,
        default=None,
        metavar="PAIRS",
        help="time the per-pair path on this many sampled pairs (default 2000)",
    )
    parser.add_argument("--old", metavar="REV", help="time git commit REV's scoring instead of the per-pair path")
    parser.add_argument("--sample-batch", type=int, default=20, help="sampled-max questions a batch (--old)")
    parser.add_argument("--sample-n", type=int, default=50, help="sampled-max candidates a question (--old)")
    parser.add_argument("--sample-batches", type=int, default=10, help="sampled-max batches timed (--old)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    keep_freed_memory()
    torch.manual_seed(args.seed)
    vocab = 20000
    model = model_for(args, vocab)
    q_ids, a_ids, qi, ai = synthetic_pool(
        args.questions, args.candidates, args.answers, args.question_len, args.answer_len, vocab, args.seed
    )
    distinct = len(np.unique(ai))
    print(
        f"pool: {len(qi):,} candidates, {args.questions:,} questions, {distinct:,} distinct answers "
        f"of up to {args.answer_len} tokens; {args.arch}; torch threads {torch.get_num_threads()}"
    )

    counts = count_encoding(model)
    cached, cached_s, cached_calls = timed(counts, scoring.score, model, q_ids, a_ids, qi, ai, args.batch_size)
    cached_rate = len(qi) / cached_s
    print(
        f"cached:   {len(qi):>9,} candidates in {cached_s:8.1f} s = {cached_rate:10,.0f} candidates/s; "
        f"{calls_text(cached_calls)}"
    )
    if args.old:
        versus_old(args, model, counts, q_ids, a_ids, qi, ai, cached, cached_s, cached_calls)
        if not args.quick:
            return

    sample = np.arange(len(qi))
    if args.quick:
        sample = np.sort(np.random.default_rng(args.seed).choice(len(qi), args.quick, replace=False))
    start = time.perf_counter()
    per_pair = scoring.score_pairs(model, q_ids, a_ids, qi[sample], ai[sample], args.batch_size)
    pair_s = time.perf_counter() - start
    pair_rate = len(sample) / pair_s
    note = f" (sample; full pool would take ~{len(qi) / pair_rate / 60:.0f} min)" if args.quick else ""
    print(f"per-pair: {len(sample):>9,} candidates in {pair_s:8.1f} s = {pair_rate:10,.0f} candidates/s{note}")

    gap = float(np.abs(per_pair - cached[sample]).max())
    print(f"max |cached - per-pair| score difference on timed pairs: {gap:.2e}")
    print(f"speed-up cached / per-pair: {cached_rate / pair_rate:.1f}x (target >= 20x)")


if __name__ == "__main__":
    main()
