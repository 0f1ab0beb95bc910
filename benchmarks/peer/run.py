"""`make bench-peer`: ansel's MatchZoo-family models against MatchZoo-py 1.1.1, like for like, both
measured in this invocation on this machine (never in CI; nothing here ships in the package).
With trained vectors ansel runs up to three times: the dense update (the peer's arithmetic), the
dense update with ``train.optimizer_kernel: fused`` (where the optimizer has one) and
``train.embedding_updates: sparse``.

Each configuration (model x settings x frozen or trained embeddings) runs both sides in processes of
their own, ``--rounds`` times, the order alternating (round 1 the peer first, round 2 ansel first,
...); medians are printed with the load average before and after each round, and every figure is
kept in ``benchmarks/peer/last.json`` (which ``bench_matchzoo.py`` reads for its ratios).

Like for like:
- training: (question, positive, negative) triples per second on both sides, a step being a batch
  of ``--batch`` triples (the peer's pair mode: that many groups of a positive and one negative),
  forward, rank-hinge loss, backward and the optimizer step, after warm-up steps;
- the same model settings on both sides (``fork``: the aMV-LSTM authors' WikiQA configs, as
  params.yaml's amv_* models hold them; ``peer``: MatchZoo-py's model defaults), the same optimizer,
  text lengths, embedding size and trainable flag, and the same embedding table size (ansel's table
  is padded to the peer's vocabulary, whose rule differs: its preprocessor's, ansel's WikiQA-as-
  MatchZoo-prepares-it);
- scoring: test candidates per second, each side's own evaluation path (the peer: its point-mode
  ``DataLoader`` and the model on every (question, candidate) row, batches of 256; ansel:
  ``ansel.evaluation.scoring.score``, batches of 256, each distinct text encoded once where the model
  is siamese).

    python benchmarks/peer/run.py [--rounds 3] [--steps 200] [--models mv_lstm,arc_i]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PEER_PYTHON = HERE / ".venv/bin/python"
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]
MARKER = "BENCH_MATCHZOO_RESULT "
# ansel's side of each setting: (params.yaml model whose hparams are the fork's | the peer's defaults
# as ansel hparams, optimizer, lr, text lengths)
ANSEL = {
    "mv_lstm": {
        "fork": ("amv_mv_lstm_wikiqa", "adadelta", 1.0, (10, 40)),
        "peer": (
            {
                "hidden": 32,
                "top_k": 10,
                "dropout": 0.0,
                "lstm_dropout": 0.0,
                "embedding_dim": 300,
                "text1_maxlen": 10,
                "text2_maxlen": 40,
            },
            "adam",
            1e-3,
            (10, 40),
        ),
    },
    "arc_i": {
        "fork": ("amv_arc_i_wikiqa", "adam", 1e-3, (20, 40)),
        "peer": (
            {
                "kernel_count": 32,
                "kernel_size": 3,
                "q_pool_size": 2,
                "d_pool_size": 2,
                "dropout": 0.0,
                "embedding_dim": 300,
                "text1_maxlen": 10,
                "text2_maxlen": 40,
            },
            "adam",
            1e-3,
            (10, 40),
        ),
    },
}


def ansel_hparams(spec) -> dict:
    if isinstance(spec, dict):
        return dict(spec)
    from ansel.config import load, model_config

    return model_config(load(preset="full"), spec)["hparams"]


def peer(model: str, settings: str, trained: bool, a) -> dict:
    cmd = [
        str(PEER_PYTHON),
        str(HERE / "matchzoo_side.py"),
        "--model",
        model,
        "--settings",
        settings,
        "--steps",
        str(a.steps),
        "--score-repeats",
        str(a.score_repeats),
        "--threads",
        str(a.threads),
        *(["--train-embeddings"] if trained else []),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HOME": str(HERE / ".home")})
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode or not lines:
        raise SystemExit(f"the peer failed ({' '.join(cmd)}):\n{(done.stdout + done.stderr)[-2000:]}")
    return json.loads(lines[-1])


# ansel's sides with trained vectors: side -> (embedding_updates, optimizer_kernel)
VARIANTS = {"ansel": ("dense", "loop"), "ansel_fused": ("dense", "fused"), "ansel_sparse": ("sparse", "loop")}


def ansel_sides(model: str, settings: str, trained: bool) -> list[str]:
    from ansel.training.config import FUSED

    if not trained:
        return ["ansel"]
    return [s for s in VARIANTS if s != "ansel_fused" or ANSEL[model][settings][1] in FUSED]


def ansel(model: str, settings: str, trained: bool, vocab_size: int, a, side: str = "ansel") -> dict:
    spec, optimizer, lr, lengths = ANSEL[model][settings]
    updates, kernel = VARIANTS[side]
    hparams = {**ansel_hparams(spec), "freeze_embeddings": not trained}
    cmd = [
        sys.executable,
        str(ROOT / "benchmarks/bench_matchzoo.py"),
        "--one",
        model,
        "--steps",
        str(a.steps),
        "--score-repeats",
        str(a.score_repeats),
        "--threads",
        str(a.threads),
        "--hparams",
        json.dumps(hparams),
        "--optimizer",
        optimizer,
        "--lr",
        str(lr),
        "--vocab-size",
        str(vocab_size),
        "--lengths",
        json.dumps(lengths),
        "--embedding-updates",
        updates,
        "--optimizer-kernel",
        kernel,
        *(["--train-embeddings"] if trained else []),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith(MARKER)]
    if done.returncode or not lines:
        raise SystemExit(f"ansel's side failed ({' '.join(cmd)}):\n{(done.stdout + done.stderr)[-2000:]}")
    return json.loads(lines[-1][len(MARKER) :])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--score-repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--models", default="mv_lstm,arc_i")
    p.add_argument("--settings", default="fork,peer")
    p.add_argument("--out", default=str(HERE / "last.json"))
    a = p.parse_args()
    if not PEER_PYTHON.exists():
        raise SystemExit("no peer environment: run benchmarks/peer/setup.sh (make bench-peer does)")
    configs = [(m, s, t) for m in a.models.split(",") for s in a.settings.split(",") for t in (False, True)]
    runs, vocab = [], {}
    for r in range(a.rounds):
        load_before = os.getloadavg()[0]
        for model, settings, trained in configs:
            ours = ansel_sides(model, settings, trained)
            sides = ["peer", *ours] if r % 2 == 0 or (model, settings) not in vocab else [*ours, "peer"]
            got = {}
            for side in sides:
                if side == "peer":
                    got["peer"] = peer(model, settings, trained, a)
                    vocab[model, settings] = got["peer"]["vocab_size"]
                else:
                    got[side] = ansel(model, settings, trained, vocab[model, settings], a, side)
            runs.append(
                {
                    "round": r + 1,
                    "model": model,
                    "settings": settings,
                    "trained_embeddings": trained,
                    "first": sides[0],
                    **got,
                }
            )
            print(
                f"round {r + 1}: {model} {settings} {'trained' if trained else 'frozen'}: "
                + ", ".join(f"{side} {got[side]['triples_per_s']:,.0f}" for side in sides)
                + " triples/s",
                flush=True,
            )
        print(f"round {r + 1}: load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after", flush=True)
    from bench_matchzoo import vectors_label

    summary = []
    for model, settings, trained in configs:
        mine = [x for x in runs if (x["model"], x["settings"], x["trained_embeddings"]) == (model, settings, trained)]
        for side in ansel_sides(model, settings, trained):

            def med(who: str, key: str, mine: list = mine) -> float:
                return statistics.median(x[who][key] for x in mine)

            summary.append(
                {
                    "model": model,
                    "settings": settings,
                    "trained_embeddings": trained,
                    "embedding_updates": VARIANTS[side][0],
                    "optimizer_kernel": VARIANTS[side][1],
                    **{
                        f"{who}_{key}": med(src, key)
                        for who, src in (("peer", "peer"), ("ansel", side))
                        for key in ("triples_per_s", "candidates_per_s", "peak_rss_mb")
                    },
                    "peer_trainable": mine[0]["peer"]["trainable"],
                    "ansel_trainable": mine[0][side]["trainable"],
                }
            )
    print(
        f"\nMatchZoo-py {runs[0]['peer']['version']} vs ansel, medians of {a.rounds} rounds, {a.steps} training "
        f"steps of {runs[0]['peer']['rows_per_step'] // 2} triples, torch threads {a.threads}, {os.cpu_count()} cores ({platform.processor() or platform.machine()})"
    )
    print(
        "vectors: frozen, or trained with the optimizer's dense update on both sides; 'trained, fused': ansel's "
        "optimizer_kernel: fused (torch's one-pass kernel, adam/sgd/adagrad), 'trained, sparse': ansel's "
        "embedding_updates: sparse (exact for adadelta, lazy moments for adam), each against the same peer runs"
    )
    head = (
        f"{'model':<9}{'settings':<9}{'vectors':<16}{'trainable':>22} | {'triples/s peer':>15}{'ansel':>8}{'ratio':>7} | "
        f"{'cand/s peer':>12}{'ansel':>8}{'ratio':>7} | {'RSS MB peer':>12}{'ansel':>7}"
    )
    print(head)
    print("-" * len(head))
    for s in summary:
        print(
            f"{s['model']:<9}{s['settings']:<9}{vectors_label(s):<16}"
            f"{s['peer_trainable']:>11,}/{s['ansel_trainable']:>10,} | {s['peer_triples_per_s']:>15,.0f}"
            f"{s['ansel_triples_per_s']:>8,.0f}{s['ansel_triples_per_s'] / s['peer_triples_per_s']:>6.1f}x | "
            f"{s['peer_candidates_per_s']:>12,.0f}{s['ansel_candidates_per_s']:>8,.0f}"
            f"{s['ansel_candidates_per_s'] / s['peer_candidates_per_s']:>6.1f}x | "
            f"{s['peer_peak_rss_mb']:>12,.0f}{s['ansel_peak_rss_mb']:>7,.0f}"
        )
    Path(a.out).write_text(
        json.dumps(
            {
                "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "cores": os.cpu_count(),
                "args": vars(a),
                "summary": summary,
                "runs": runs,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"kept in {a.out}")


if __name__ == "__main__":
    main()
