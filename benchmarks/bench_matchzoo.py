"""ansel's MatchZoo-family models: training triples/s, scoring candidates/s and peak resident memory,
per model; beside them the ratios against MatchZoo-py 1.1.1 of the last like-for-like measurement
(``benchmarks/peer/last.json``, written by ``make bench-peer``: both sides measured there, in one
invocation, with the same settings), or "no peer run".

What is counted. A training step takes a batch of 20 (question, positive, negative) triples:
model(q, pos) and model(q, neg), then the hinge loss, backward and the optimizer step (adam, lr 1e-3),
as ``ansel.training.trainer`` does; its rate is in triples/s, as the peer measurement counts both
sides. The negative is drawn from the question's own labelled candidates (``NegativeSampler``,
strategy ``pool``), inside the timed loop. Scoring rates every test candidate through
``ansel.evaluation.scoring.score`` (batch 256, eval mode; siamese models encode each distinct text
once, interaction models such as MV-LSTM and MatchPyramid once per block of pairs), after a warm-up
batch. Targets: >= 3x the peer's training and scoring rates, like for like; <= 350 MB peak resident.

Each model runs in its own process (this script re-invoked with ``--one``), so its peak RSS
(``ru_maxrss`` at that process's end) is its own: Python, torch, the data, the model, training and
scoring. A second table splits it by phase: how much each phase raised the process's peak
(imports; loading the data; building the model; the optimizer, whose construction imports
``torch._dynamo``; the warm-up steps; the timed steps; scoring). Floors are measured in processes
of their own: a bare ``import torch``; torch and pandas (the tables' reader, with pyarrow); and those
with one step of a ``torch.optim`` optimizer, what every training process holds before any data or
model.

Data: the pipeline's processed WikiQA (``data/processed/wikiqa_mz``, else ``data/processed/wikiqa``,
or ``--data DIR``); without it a synthetic stand-in of WikiQA's sizes (18,600 random lower-case
words drawn Zipf-like; 2,118 training questions, 20,360 training candidates, 1,040 positives;
2,351 test candidates over 243 questions; texts of 10/40 tokens). The output says which.
Hyperparameters: each architecture's defaults (its WikiQA config) with text lengths 10/40 and
``embedding_dim: 300``; random 300-d embeddings (a numpy array), frozen where the arch's default
freezes them. An architecture not registered yet is skipped with a note.

    PYTHONPATH=src python benchmarks/bench_matchzoo.py [--quick] [--models mv_lstm,dssm]
        [--steps 200] [--threads 2] [--data DIR | --synthetic]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import string
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

Q_LEN, A_LEN, BATCH, EMBED_DIM, SCORE_BATCH, WARMUP_STEPS, MARGIN = 10, 40, 20, 300, 256, 3, 1.0
MARKER = "BENCH_MATCHZOO_RESULT "
PHASES = ("imports", "data", "model", "optimizer", "warm-up", "training", "scoring")
RSS_TARGET_MB, SPEED_TARGET = 350, 3.0
OPTIMIZER_LR = {"adam": 1e-3, "adadelta": 1.0}  # the optimizer's lr unless --lr

# name -> (registered arch, hparams over its defaults)
MODELS: dict[str, tuple[str, dict]] = {
    "mv_lstm": ("mv_lstm", {}),
    "amv_lstm": ("mv_lstm", {"attend_question": True}),
    "arc_i": ("arc_i", {}),
    "match_pyramid": ("match_pyramid", {}),
    "dssm": ("dssm", {}),
    "cdssm": ("cdssm", {}),
    "arc_ii": ("arc_ii", {}),
    "anmm": ("anmm", {}),
}
PEER_RUN = ROOT / "benchmarks/peer/last.json"
DEFAULT_DATA = [ROOT / "data/processed/wikiqa_mz", ROOT / "data/processed/wikiqa"]


@dataclass
class BenchData:
    source: str
    q_ids: "object"  # [n_questions, Q_LEN] int64
    a_ids: "object"  # [n_answers, A_LEN] int64
    vocab_size: int
    train: tuple  # (qi, ai, labels) of the training candidates
    test: tuple  # (qi, ai) of the test candidates
    lexicon_fn: "object"  # () -> Lexicon, built only for the archs that read it


def real_data(directory: Path, q_len: int = Q_LEN, a_len: int = A_LEN) -> BenchData:
    from ansel.data.batches import RunData
    from ansel.data.vocab import Vocab

    data = RunData.load(directory, Vocab.load(directory / "vocab.json"), q_len, a_len)
    train_cands, tqi, tai = data.pairs("train")
    test_cands, sqi, sai = data.pairs("test")
    source = (
        f"real WikiQA from {directory.relative_to(ROOT) if directory.is_relative_to(ROOT) else directory}: "
        f"vocabulary {data.vocab_size:,}, {len(train_cands):,} training candidates "
        f"({int((train_cands.label == 1).sum()):,} positives), {len(test_cands):,} test candidates over "
        f"{test_cands.qid.nunique():,} questions"
    )
    return BenchData(
        source,
        data.q_ids,
        data.a_ids,
        data.vocab_size,
        (tqi, tai, train_cands.label.to_numpy()),
        (sqi, sai),
        lambda: data.lexicon,
    )


def synthetic_data(seed: int = 0) -> BenchData:
    """WikiQA's sizes: 18,600 words; 2,118 training questions with 20,360 candidates, 1,040 of
    them positive (one per question for 1,040 questions); 243 test questions with 2,351
    candidates; every candidate a distinct answer; texts of exactly 10 / 40 tokens."""
    import numpy as np

    from ansel.data.vocab import PAD_TOKEN, UNK_TOKEN, Lexicon, Vocab

    rng = np.random.default_rng(seed)
    words: set[str] = set()
    letters = np.array(list(string.ascii_lowercase))
    while len(words) < 18_600:
        words.add("".join(rng.choice(letters, rng.integers(2, 12))))
    vocab = Vocab([PAD_TOKEN, UNK_TOKEN, *sorted(words)])
    zipf = 1 / np.arange(1, len(words) + 1)
    zipf /= zipf.sum()
    rank_to_id = rng.permutation(len(words)) + 2

    def texts(n: int, length: int) -> np.ndarray:
        return rank_to_id[rng.choice(len(words), (n, length), p=zipf)]

    def candidates(n_questions: int, n_cands: int, q_offset: int, a_offset: int, positives: int):
        qi = q_offset + np.sort(
            np.concatenate([np.arange(n_questions), rng.integers(0, n_questions, n_cands - n_questions)])
        )
        ai = a_offset + np.arange(n_cands)
        labels = np.zeros(n_cands, dtype=np.int64)
        first = np.flatnonzero(np.r_[True, qi[1:] != qi[:-1]])  # each question's first candidate
        labels[rng.choice(first, positives, replace=False)] = 1
        return qi, ai, labels

    n_train_q, n_train_c, n_test_q, n_test_c = 2_118, 20_360, 243, 2_351
    q_ids = texts(n_train_q + n_test_q, Q_LEN)
    a_ids = texts(n_train_c + n_test_c, A_LEN)
    train = candidates(n_train_q, n_train_c, 0, 0, 1_040)
    test = candidates(n_test_q, n_test_c, n_train_q, n_train_c, n_test_q)[:2]

    def lexicon() -> Lexicon:  # over the training texts, as RunData.lexicon
        docs = [[vocab.tokens[i] for i in row] for row in (*q_ids[:n_train_q], *a_ids[:n_train_c])]
        return Lexicon.build(vocab, docs)

    source = (
        f"synthetic stand-in with WikiQA's sizes (no processed WikiQA found): vocabulary {len(vocab):,} "
        f"random lower-case words, {n_train_c:,} training candidates ({train[2].sum():,} positives), "
        f"{n_test_c:,} test candidates over {n_test_q} questions, texts of {Q_LEN}/{A_LEN} tokens"
    )
    return BenchData(source, q_ids, a_ids, len(vocab), train, test, lexicon)


def load_data(args) -> BenchData:
    if not args.synthetic:
        for directory in [Path(args.data)] if args.data else DEFAULT_DATA:
            if (directory / "vocab.json").exists():
                return real_data(directory, *json.loads(args.lengths))
        if args.data:
            raise SystemExit(f"--data {args.data}: no processed dataset there (vocab.json missing)")
    return synthetic_data()


def hparams_for(arch: str, extra: dict) -> dict:
    from ansel.models.registry import hparams_fields

    fields = hparams_fields(arch)
    hp = {
        k: v for k, v in (("text1_maxlen", Q_LEN), ("text2_maxlen", A_LEN), ("embedding_dim", EMBED_DIM)) if k in fields
    }
    return {**hp, **extra}


def peak_rss_mb() -> float:
    """This process's peak resident memory so far (Linux reports ru_maxrss in KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(name: str, args) -> dict:
    """Build, train ``args.steps`` timed steps and score the test split in this process; the peak
    resident memory after each of ``PHASES``."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    from ansel.data.batches import trim_padding
    from ansel.device import start_torch
    from ansel.evaluation.scoring import score
    from ansel.models.registry import build_model, needs_lexicon
    from ansel.training.config import TrainConfig
    from ansel.training.sampler import NegativeSampler
    from ansel.training.trainer import run_optimizer

    start_torch(args.threads)
    peaks = {"imports": peak_rss_mb()}
    arch, extra = MODELS[name]
    data = load_data(args)
    peaks["data"] = peak_rss_mb()
    hparams = {**hparams_for(arch, extra), **json.loads(args.hparams)}
    if args.train_embeddings:
        hparams["freeze_embeddings"] = False
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    embeddings = None
    vocab_size = max(data.vocab_size, args.vocab_size or 0)  # rows past the data's words: a peer's table size
    if "embedding_dim" in hparams:  # U(-0.2, 0.2) float32, drawn in place: no float64 copy to inflate the peak
        embeddings = rng.random((vocab_size, hparams["embedding_dim"]), dtype=np.float32)
        embeddings *= 0.4
        embeddings -= 0.2
    model = build_model(
        arch, hparams, vocab_size, embeddings, f"bench.{name}", data.lexicon_fn() if needs_lexicon(arch) else None
    )
    del embeddings  # the model holds its own copy, as ``ansel.training.trainer.train_run`` drops them
    peaks["model"] = peak_rss_mb()
    params = [p for p in model.parameters() if p.requires_grad]
    train = TrainConfig(
        epochs=1,
        batch_size=BATCH,
        optimizer=args.optimizer,
        lr=args.lr or OPTIMIZER_LR[args.optimizer],
        loss="hinge",
        margin=MARGIN,
        select_metric="MAP",
        embedding_updates=args.embedding_updates,
        optimizer_kernel=args.optimizer_kernel,
    )
    optimizer = run_optimizer(model, params, train)
    peaks["optimizer"] = peak_rss_mb()

    tqi, tai, labels = data.train
    pos_q, pos_a = tqi[labels == 1], tai[labels == 1]
    sampler = NegativeSampler(tqi, tai, labels, "pool")

    def ids(matrix, rows):
        return trim_padding(torch.from_numpy(matrix[rows]))

    def step() -> None:
        rows = rng.choice(len(pos_q), BATCH, replace=False)
        q = ids(data.q_ids, pos_q[rows])
        s_pos = model(q, ids(data.a_ids, pos_a[rows]))
        s_neg = model(q, ids(data.a_ids, sampler.sample(pos_q[rows], rng)))
        loss = F.relu(MARGIN - s_pos + s_neg).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    model.train()
    for _ in range(WARMUP_STEPS):
        step()
    peaks["warm-up"] = peak_rss_mb()
    started = time.perf_counter()
    for _ in range(args.steps):
        step()
    train_s = time.perf_counter() - started
    peaks["training"] = peak_rss_mb()

    sqi, sai = data.test
    score(model, data.q_ids, data.a_ids, sqi[:SCORE_BATCH], sai[:SCORE_BATCH], SCORE_BATCH)  # warm-up
    times = []
    for _ in range(args.score_repeats):
        started = time.perf_counter()
        scores = score(model, data.q_ids, data.a_ids, sqi, sai, SCORE_BATCH)
        times.append(time.perf_counter() - started)
    if not np.isfinite(scores).all():
        raise RuntimeError(f"{name}: non-finite scores")
    score_s = sorted(times)[len(times) // 2]
    peaks["scoring"] = peak_rss_mb()
    return {
        "name": name,
        "arch": arch,
        "hparams": hparams,
        "source": data.source,
        "vocab_size": vocab_size,
        "threads": torch.get_num_threads(),
        "siamese": bool(model.siamese),
        "params": sum(p.numel() for p in model.parameters()),
        "trainable": sum(p.numel() for p in params),
        "steps": args.steps,
        "train_s": train_s,
        "triples_per_s": args.steps * BATCH / train_s,
        "candidates": len(sqi),
        "score_s": score_s,
        "candidates_per_s": len(sqi) / score_s,
        "peak_rss_mb": peak_rss_mb(),
        "phase_peaks_mb": peaks,
    }


def child(argv: list[str]) -> tuple[dict | None, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *argv], cwd=ROOT, env=env, capture_output=True, text=True
    )
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER) :]), ""
    return None, f"exit {done.returncode}: {(done.stdout + done.stderr).strip()[-1500:]}"


# Floors, each a process of its own: torch; with pandas, the tables' reader; and with one optimizer
# step: what every training process holds before its data and model.
FLOORS = {
    "import torch": "import torch",
    "+ pandas (and pyarrow)": "import torch, pandas",
    "+ one torch.optim.Adam step (it imports torch._dynamo)": "import torch, pandas; p = torch.nn.Parameter(torch.zeros(1)); o = torch.optim.Adam([p]); "
    "p.sum().backward(); o.step()",
}


def floor_rss_mb(code: str) -> float:
    code += "; import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return int(out.split()[-1]) / 1024


def vectors_label(row: dict) -> str:
    """A peer-run row's vectors: frozen, or trained by the optimizer's loop, its fused kernel or the
    sparse update (rows of runs before the fused side have no ``optimizer_kernel``: the loop)."""
    if not row["trained_embeddings"]:
        return "frozen"
    if row.get("embedding_updates") == "sparse":
        return "trained, sparse"
    return "trained, fused" if row.get("optimizer_kernel") == "fused" else "trained"


def markdown(rows: list[dict], left: int = 1) -> str:
    """``rows`` (formatted cells) as a Markdown table, the first ``left`` columns aligned left and the
    figures right (pandas' ``to_markdown``). pandas is imported here, not at the top: a ``--one``
    child's peak RSS counts its imports."""
    import pandas as pd

    n = len(rows[0])
    return pd.DataFrame(rows).to_markdown(
        index=False, disable_numparse=True, colalign=("left",) * left + ("right",) * (n - left)
    )


def print_peer_ratios(path: Path = PEER_RUN) -> None:
    """The last like-for-like measurement against MatchZoo-py (both sides measured in that run)."""
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if not path.exists():
        print(f"MatchZoo-py: no peer run ({shown} absent: `make bench-peer` measures both sides)")
        return
    run = json.loads(path.read_text())
    args = run["args"]
    print(
        f"MatchZoo-py, like for like (`make bench-peer`, {shown}, {run['when']}, {run['cores']} "
        f"cores, medians of {args['rounds']} rounds of {args['steps']} steps, torch threads {args['threads']}): "
        f"both sides measured there with the same settings; ratio = ansel / MatchZoo-py"
    )
    rows = []
    for s in run["summary"]:
        row = {"model": s["model"], "settings": s["settings"], "vectors": vectors_label(s)}
        for key, label in (("triples_per_s", "triples/s"), ("candidates_per_s", "cand/s")):
            ratio = s[f"ansel_{key}"] / s[f"peer_{key}"]
            row |= {
                f"{label} MZ-py": f"{s[f'peer_{key}']:,.0f}",
                f"{label} ansel": f"{s[f'ansel_{key}']:,.0f}",
                f"{label} ratio": f"{ratio:.1f}x {'ok' if ratio >= SPEED_TARGET else 'LOW'}",
            }
        row |= {
            "RSS MB MZ-py": f"{s['peer_peak_rss_mb']:,.0f}",
            "RSS MB ansel": f"{s['ansel_peak_rss_mb']:,.0f}",
            "RSS below MZ-py": "ok" if s["ansel_peak_rss_mb"] < s["peer_peak_rss_mb"] else "HIGH",
        }
        rows.append(row)
    print(markdown(rows, left=3))


def print_phases(results: list[dict]) -> None:
    """Per model: the peak after its imports, then how much each later phase raised it."""
    print(
        "peak resident memory by phase, MB: after the imports (Python, numpy, torch, ansel), then each "
        "phase's rise of the peak (data: tables and id matrices, pandas/pyarrow; optimizer: its "
        "construction imports torch._dynamo)"
    )
    rows = []
    for r in results:
        peaks = [r["phase_peaks_mb"][p] for p in PHASES]
        rises = [f"{peaks[0]:,.0f}"] + [f"+{b - a:,.0f}" for a, b in zip(peaks, peaks[1:])]
        # "name": a phase is called "model"
        rows.append({"name": r["name"], **dict(zip(PHASES, rises)), "peak": f"{r['peak_rss_mb']:,.0f}"})
    print(markdown(rows))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of: {', '.join(MODELS)}")
    p.add_argument("--steps", type=int, default=None, help="timed training steps per model (default 200; --quick 10)")
    p.add_argument(
        "--score-repeats", type=int, default=None, help="timed scoring passes, median (default 3; --quick 1)"
    )
    p.add_argument("--threads", type=int, default=2, help="torch threads (MatchZoo-py's figures: 2)")
    p.add_argument("--quick", action="store_true", help="10 steps and one scoring pass per model (smoke)")
    p.add_argument("--data", help="a processed dataset directory (default: data/processed/wikiqa_mz or wikiqa)")
    p.add_argument("--synthetic", action="store_true", help="the synthetic stand-in even where WikiQA is processed")
    p.add_argument("--one", metavar="MODEL", help=argparse.SUPPRESS)  # internal: one model, in this process
    # with --one, as benchmarks/peer/run.py sets a side: settings over the arch's, trained vectors, a table size
    p.add_argument("--hparams", default="{}", help=argparse.SUPPRESS)
    p.add_argument("--train-embeddings", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--optimizer", choices=list(OPTIMIZER_LR), default="adam", help=argparse.SUPPRESS)
    p.add_argument("--embedding-updates", choices=["dense", "sparse"], default="dense", help=argparse.SUPPRESS)
    p.add_argument("--optimizer-kernel", choices=["loop", "fused"], default="loop", help=argparse.SUPPRESS)
    p.add_argument("--lr", type=float, help=argparse.SUPPRESS)
    p.add_argument("--vocab-size", type=int, help=argparse.SUPPRESS)
    p.add_argument("--lengths", default=json.dumps([Q_LEN, A_LEN]), help=argparse.SUPPRESS)  # [question, answer]
    args = p.parse_args()
    args.steps = args.steps or (10 if args.quick else 200)
    args.score_repeats = args.score_repeats or (1 if args.quick else 3)

    if args.one:
        print(MARKER + json.dumps(run_one(args.one, args)), flush=True)
        return

    from ansel.models.registry import registered

    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        p.error(f"--models: unknown {', '.join(unknown)}; known: {', '.join(MODELS)}")
    known = set(registered())
    passed = [
        "--steps",
        str(args.steps),
        "--score-repeats",
        str(args.score_repeats),
        "--threads",
        str(args.threads),
        *(["--data", str(Path(args.data).resolve())] if args.data else []),
        *(["--synthetic"] if args.synthetic else []),
    ]

    floors = {label: floor_rss_mb(code) for label, code in FLOORS.items()}
    floor = floors[list(FLOORS)[-1]]
    print(
        f"MatchZoo-family models on WikiQA; {os.cpu_count()} cores here, torch threads {args.threads}; "
        f"{args.steps} timed training steps of {BATCH} (question, positive, negative) triples after "
        f"{WARMUP_STEPS} warm-up, scoring median of {args.score_repeats} pass(es); target peak RSS <= {RSS_TARGET_MB} MB"
    )
    print(
        f"floors, peak RSS of a process that only does this: {'; '.join(f'{k} {v:.0f} MB' for k, v in floors.items())}"
        f" = every training process before its data and model, {floor - RSS_TARGET_MB:+.0f} MB against the target"
    )

    results, notes = [], []
    for name in names:
        arch = MODELS[name][0]
        if arch not in known:
            notes.append(f"{name}: skipped, arch {arch!r} is not registered yet")
            continue
        result, error = child(["--one", name, *passed])
        if result is None:
            notes.append(f"{name}: failed ({error})")
            continue
        results.append(result)
        print(f"  {name}: done ({result['train_s']:.1f} s training, {result['score_s']:.1f} s scoring)", flush=True)
    if results:
        print(f"data: {results[0]['source']}")
        print(
            f"hparams: each arch's defaults with {', '.join(f'{k}={v}' for k, v in results[0]['hparams'].items())}"
            " where it has them; aMV-LSTM = mv_lstm with attend_question"
        )
        rows = [
            {
                "model": r["name"],
                "params": f"{r['params'] / 1e6:.2f}M",
                "trainable": f"{r['trainable'] / 1e6:.2f}M",
                "triples/s": f"{r['triples_per_s']:,.0f}",
                "cand/s": f"{r['candidates_per_s']:,.0f}",
                "RSS MB": f"{r['peak_rss_mb']:,.0f}",
                f"<= {RSS_TARGET_MB}": "ok" if r["peak_rss_mb"] <= RSS_TARGET_MB else "HIGH",
            }
            for r in results
        ]
        print(markdown(rows))
        print_phases(results)
    print_peer_ratios()
    for note in notes:
        print(f"note: {note}")
    if args.quick:
        print(f"--quick: {args.steps} steps and {args.score_repeats} scoring pass per model; figures are rough")


if __name__ == "__main__":
    main()
