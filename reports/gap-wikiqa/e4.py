"""E4 (issue 51): MatchZoo-py 1.1.1 at the inputs of ansel's Table 3 rows, scored by ansel's evaluator,
and the table that sets its cells beside ansel's.

    python reports/gap-wikiqa/e4.py run MODEL SEED...   # export, train (the peer's venv), score
    python reports/gap-wikiqa/e4.py run --score-only MODEL SEED   # a training stopped early: its run files
    python reports/gap-wikiqa/e4.py table               # e4.md from the committed runs

``run`` needs ``data/processed/wikiqa_mz`` and the row's vectors
(``snakemake --cores 1 --config preset=paper -- data/embeddings/wikiqa_mz/word2vec-300.npy`` ...) and
``benchmarks/peer/.venv`` (``benchmarks/peer/setup.sh``). Each MODEL below is MatchZoo-py's model at an
ansel row of ``reports/paper-amvlstm``; its runs go to ``runs/matchzoo-py/<MODEL>/seed<k>/``:
``run.trec.gz`` / ``metrics.json`` (the last iteration scored: the 400th, the paper's protocol,
unless the run was cut, when the table compares ansel's runs at the same iteration), ``run_selected.trec.gz`` /
``metrics_selected.json`` (the dev-best of the iterations scored, every 10th), ``harness.json`` (the
harness's settings: not an ansel run's ``config.json``, which ``ansel plan`` reads from every record's runs),
``log.csv`` (ansel-scored dev/test MAP and MRR), ``train_log.csv`` and ``train.log`` (the peer's).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from ansel.embeddings import load_matrix
from ansel.training.trainer import vectors_sha256

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PEER = ROOT / "benchmarks" / "peer"
AMV = ROOT / "reports" / "paper-amvlstm"
WORK = ROOT / "results" / "peer-fidelity"
# E4 model -> (MatchZoo-py model of matchzoo_side.SETTINGS, ansel's runs of the row, vectors file)
MODELS = {
    "mv_lstm": ("mv_lstm", AMV / "runs/wikiqa_mz/amv_mv_lstm_wikiqa", "word2vec-300"),
    "match_pyramid": ("match_pyramid", AMV / "runs/wikiqa_mz/amv_match_pyramid_wikiqa", "word2vec-300"),
    "anmm": ("anmm", AMV / "runs/wikiqa_mz/amv_anmm_wikiqa", "word2vec-300"),
    "arc_i": ("arc_i", AMV / "word2vec-standin/runs/wikiqa_mz/amv_arc_i_wikiqa", "word2vec-50"),
    "arc_i_glove": ("arc_i", AMV / "runs/wikiqa_mz/amv_arc_i_wikiqa", "glove6b_50-50"),
}
LABELS = {
    "mv_lstm": "MV-LSTM",
    "match_pyramid": "MatchPyramid",
    "anmm": "aNMM",
    "arc_i": "ARC-I (word2vec-50 stand-in)",
    "arc_i_glove": "ARC-I (GloVe 6B 50-d)",
}


def sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def run(model: str, seed: int, score_only: bool = False) -> None:
    peer_model, rows, vectors = MODELS[model]
    row = rows / f"seed{seed}" / "config.json"
    if not row.exists():
        row = rows / "seed1" / "config.json"  # the row's settings; only the seed differs between its runs
    data = WORK / f"{vectors}.npz"
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    if not data.exists():
        subprocess.run(
            [
                sys.executable,
                PEER / "fidelity_ansel.py",
                "export",
                "--run-config",
                row,
                "--processed",
                ROOT / "data/processed/wikiqa_mz",
                "--embeddings",
                ROOT / f"data/embeddings/wikiqa_mz/{vectors}.npy",
                "--out",
                data,
            ],
            check=True,
            env=env,
        )
    peer_out, out = WORK / model / f"seed{seed}", HERE / "runs" / "matchzoo-py" / model / f"seed{seed}"
    out.mkdir(parents=True, exist_ok=True)
    done = peer_out / f"run-{json.loads(row.read_text())['train']['epochs']}.trec"
    if done.exists() or score_only:  # trained already, or cut (its train.log is kept): scored only
        print(f"{peer_out}: scoring its run files (the last: {'done' if done.exists() else 'cut short'})")
    else:
        with open(out / "train.log", "w") as log:
            subprocess.run(
                [
                    PEER / ".venv/bin/python",
                    "-W",
                    "ignore",
                    PEER / "fidelity.py",
                    "--model",
                    peer_model,
                    "--data",
                    data,
                    "--run-config",
                    row,
                    "--seed",
                    str(seed),
                    "--out",
                    peer_out,
                ],
                check=True,
                env=env,
                cwd=PEER,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
    subprocess.run(
        [
            sys.executable,
            PEER / "fidelity_ansel.py",
            "score",
            "--peer-dir",
            peer_out,
            "--data",
            data,
            "--run-config",
            row,
            "--out",
            out,
        ],
        check=True,
        env=env,
    )
    shutil.copy(peer_out / "train_log.csv", out / "train_log.csv")
    config = json.loads((peer_out / "config.json").read_text())
    vectors_file = ROOT / f"data/embeddings/wikiqa_mz/{vectors}.npy"  # the file the export read
    config |= {
        "vectors_file": str(vectors_file.relative_to(ROOT)),
        "vectors_file_sha256": sha256(vectors_file),
        "vectors_sha256": vectors_sha256(load_matrix(vectors_file)),
    }  # as an ansel run's timings.json has it
    (out / "harness.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


def _cell(values: list[float]) -> str:
    s = pd.Series(values)
    return f"{s.mean():.4f}" + (f" ± {s.std():.4f}" if len(s) > 1 else "") + f" (n={len(s)})"


def _ansel(rows: Path, iteration: int) -> tuple[list[float], list[float]]:
    """Test MAP of ansel's runs of a row: dev-selected (metrics.json), and at ``iteration`` (its log.csv
    scores test after every iteration; at 400, the paper's last-iteration cell)."""
    runs = sorted(p.parent for p in rows.glob("seed*/metrics.json"))
    at = [pd.read_csv(r / "log.csv").set_index("epoch").test_MAP for r in runs]
    return [json.loads((r / "metrics.json").read_text())["test"]["MAP"] for r in runs], [log[iteration] for log in at]


def table() -> str:
    out = []
    for model, (_, rows, vectors) in MODELS.items():
        runs = sorted(p.parent for p in (HERE / "runs/matchzoo-py" / model).glob("seed*/metrics.json"))
        if not runs:
            continue
        last = {r.name: json.loads((r / "metrics.json").read_text()) for r in runs}
        iteration = min(m["iteration"] for m in last.values())
        if any(m["iteration"] != iteration for m in last.values()):
            raise ValueError(
                f"{model}: its runs end at different iterations ({[m['iteration'] for m in last.values()]})"
            )
        sel = [json.loads((r / "metrics_selected.json").read_text())["test"]["MAP"] for r in runs]
        at = [m["test"]["MAP"] for m in last.values()]
        a_sel, a_at = _ansel(rows, iteration)
        spread, diff = pd.Series(a_at).std(), pd.Series(at).mean() - pd.Series(a_at).mean()
        out.append(
            {
                "row": LABELS[model],
                "vectors": vectors,
                "iteration": iteration,
                "ansel, dev-selected": _cell(a_sel),
                "MatchZoo-py, dev-selected (every 10th it.)": _cell(sel),
                "ansel, at the iteration": _cell(a_at),
                "MatchZoo-py, at the iteration": _cell(at),
                "MatchZoo-py − ansel": f"{diff:+.4f}",
                "within 2 std of ansel's seeds": "yes" if abs(diff) <= 2 * spread else "no",
                "seeds (MatchZoo-py)": ", ".join(r.name.removeprefix("seed") for r in runs),
            }
        )
    return pd.DataFrame(out).to_markdown(index=False)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("model", choices=sorted(MODELS))
    r.add_argument("seeds", type=int, nargs="+")
    r.add_argument("--score-only", action="store_true", help="score the run files a cut training left")
    sub.add_parser("table")
    a = p.parse_args()
    if a.command == "run":
        for seed in a.seeds:
            run(a.model, seed, a.score_only)
    else:
        text = table()
        (HERE / "e4.md").write_text(text + "\n")
        print(text)


if __name__ == "__main__":
    main()
