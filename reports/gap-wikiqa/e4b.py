"""E4b (issue 51): MatchPyramid's pooling, the difference E4 located. ansel's MatchPyramid at the
row of ``reports/paper-amvlstm`` (``amv_match_pyramid_wikiqa``, preset=paper, ``wikiqa_mz``,
word2vec-300, 400 iterations), one hyperparameter changed: ``pooling: adaptive_avg``, MatchZoo-py
1.1.1's pooling (the mean of each adaptive window of the whole padded grid) in place of the
fork's dynamic max pooling; set beside the row's own runs and MatchZoo-py's (E4).

    python reports/gap-wikiqa/e4b.py run SEED...   # train (ansel train) and score (ansel evaluate)
    python reports/gap-wikiqa/e4b.py table         # e4b.md from the committed runs

``run`` needs ``data/processed/wikiqa_mz`` and ``data/embeddings/wikiqa_mz/word2vec-300.npy``
(snakemake them first). A run's config is today's ``run_config`` of the row plus the change, and
is checked to differ from the committed run of that seed in nothing else (today's preset adds
``train.keep_last``, which saves the last iteration's weights and changes no arithmetic). Writes
``runs/matchpyramid-pooling/<change>/seed<k>/``: ``config.json``, ``log.csv`` (dev and test MAP
after every iteration), ``timings.json``, ``metrics.json`` / ``run.trec.gz`` (the dev-selected
iteration), ``metrics_last.json`` / ``run_last.trec.gz`` (the 400th); the weights are not kept.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd

from ansel.config import deep_merge, embeddings_file, load, run_config

HERE = Path(__file__).resolve().parent
ROW = HERE.parents[1] / "reports/paper-amvlstm/runs/wikiqa_mz/amv_match_pyramid_wikiqa"
PEER = HERE / "runs/matchzoo-py/match_pyramid"
OUT = HERE / "runs/matchpyramid-pooling"
# none: the row as committed, rerun by today's code (its arithmetic since the record's commit)
CHANGES = {"adaptive_avg": {"hparams": {"pooling": "adaptive_avg"}}, "none": {}}
LABELS = {"adaptive_avg": "ansel, pooling: adaptive_avg", "none": "ansel, dynamic max pooling, rerun today"}
PROCESSED = "data/processed/wikiqa_mz"
AT = (50, 100, 200, 400)  # the iterations of E4's trajectory table


def ansel(*args: str) -> None:
    subprocess.run(["ansel", *args], check=True)


def config(change: str, seed: int) -> dict:
    cfg = run_config(load(preset="paper"), "wikiqa_mz", "amv_match_pyramid_wikiqa", seed)
    committed = json.loads((ROW / f"seed{seed}" / "config.json").read_text())
    if {**cfg, "train": {k: v for k, v in cfg["train"].items() if k != "keep_last"}} != committed:
        raise ValueError(f"today's run config of amv_match_pyramid_wikiqa seed {seed} differs from {ROW}/seed{seed}")
    return deep_merge(cfg, CHANGES[change])


def run(change: str, seed: int) -> None:
    cfg, out = config(change, seed), OUT / change / f"seed{seed}"
    if (out / "metrics_last.json").exists():
        return
    ansel(
        "train",
        "--config",
        json.dumps(cfg),
        "--processed",
        PROCESSED,
        "--run-dir",
        str(out),
        "--embeddings",
        embeddings_file(cfg),
        "--timings",
        str(out / "timings.json"),
        "--no-progress",
        "--no-dvclive",
    )
    for last in ([], ["--last"]):
        ansel("evaluate", "--processed", PROCESSED, "--run-dir", str(out), *last)
    for name in ("run", "run_last"):
        with open(out / f"{name}.trec", "rb") as f, gzip.GzipFile(out / f"{name}.trec.gz", "wb", mtime=0) as g:
            shutil.copyfileobj(f, g)
        (out / f"{name}.trec").unlink()
    for leftover in out.glob("*.pt"):
        leftover.unlink()
    sel, last = (json.loads((out / f"{m}.json").read_text())["test"]["MAP"] for m in ("metrics", "metrics_last"))
    print(f"{change} seed {seed}: test MAP dev-selected {sel:.4f}, at iteration 400 {last:.4f}", flush=True)


def _cell(values) -> str:
    s = pd.Series(list(values))
    return f"{s.mean():.4f}" + (f" ± {s.std():.4f}" if len(s) > 1 else "") + f" (n={len(s)})"


def _runs(root: Path, seeds=None) -> list[Path]:
    runs = sorted(p.parent for p in root.glob("seed*/metrics.json"))
    return [r for r in runs if seeds is None or int(r.name.removeprefix("seed")) in seeds]


def _row(label: str, runs: list[Path], index: str, selected: str) -> dict:
    """Test MAP of ``runs``: dev-selected (``selected``'s json), at the iterations of AT (log.csv,
    indexed by ``index``), and the mean training loss at 400."""
    logs = [pd.read_csv(r / "log.csv").set_index(index) for r in runs]
    return {
        "runs": label,
        "seeds": ", ".join(r.name.removeprefix("seed") for r in runs),
        "test MAP, dev-selected": _cell(json.loads((r / selected).read_text())["test"]["MAP"] for r in runs),
        **{f"test MAP at {i}": _cell(log.test_MAP[i] for log in logs) for i in AT},
        "train loss at 400": _cell(log.loss[400] for log in logs),
    }


def table() -> str:
    ours = {change: _runs(OUT / change) for change in CHANGES}
    seeds = {int(r.name.removeprefix("seed")) for runs in ours.values() for r in runs}
    rows = [
        _row("ansel, dynamic max pooling (paper-amvlstm)", _runs(ROW), "epoch", "metrics.json"),
        _row("ansel, dynamic max pooling, the same seeds", _runs(ROW, seeds), "epoch", "metrics.json"),
        *(_row(LABELS[c], runs, "epoch", "metrics.json") for c, runs in ours.items() if runs),
        _row("MatchZoo-py 1.1.1 (E4; dev-selected of every 10th)", _runs(PEER), "iteration", "metrics_selected.json"),
    ]
    return pd.DataFrame(rows).to_markdown(index=False)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("seeds", type=int, nargs="+")
    r.add_argument("--change", choices=sorted(CHANGES), default="adaptive_avg")
    sub.add_parser("table")
    a = p.parse_args()
    if a.command == "run":
        for seed in a.seeds:
            run(a.change, seed)
    else:
        text = table()
        (HERE / "e4b.md").write_text(text + "\n")
        print(text)


if __name__ == "__main__":
    main()
