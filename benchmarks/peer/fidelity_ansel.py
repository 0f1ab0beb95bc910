"""ansel's side of the fidelity harness (issue 51, E4), run by ansel's own Python: what MatchZoo-py
trains on, exported from the run's processed dataset exactly as ``ansel train`` loads it, and the
MatchZoo-py run files scored by ansel's evaluator.

``export``: a row of ``reports/paper-amvlstm`` names the run (its committed ``config.json``); the
data are ``RunData.load`` with the run's vocabulary and lengths (the token ids ansel's model reads,
0 = padding), each split's candidate rows in ansel's order, and the run's word-vector file as
``ansel train`` loads it (``load_matrix``). One ``.npz``; the peer's Python needs neither ansel nor
pandas' parquet reader to use it.

``score``: each TREC run file the peer wrote (``run-<iteration>.trec``: dev and test, qids
``<split>:<qid>`` as ansel's run.trec) is read with ``read_trec_run``, checked to hold exactly the
split's candidates, given their labels and scored with ``split_metrics`` (ansel's evaluate rule's
metrics, ``no_positive`` from the run's eval config). Writes ``log.csv`` (loss, dev and test MAP/MRR
per scored iteration), ``metrics.json`` and ``run.trec.gz`` of the last iteration (the paper's
protocol), ``metrics_selected.json`` and ``run_selected.trec.gz`` of the dev-best scored iteration.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

SPLITS = ("train", "dev", "test")


def export(run_config: Path, processed: Path, embeddings: Path, out: Path) -> None:
    from ansel.data.batches import RunData
    from ansel.data.vocab import Vocab, run_vocab_file
    from ansel.embeddings import load_matrix
    from ansel.evaluation.config import EvalConfig
    from ansel.evaluation.evaluate import eval_data
    from ansel.settings import parse

    cfg = json.loads(run_config.read_text())
    ev = parse(EvalConfig, cfg["eval"], f"{run_config}: eval")
    vocab = Vocab.load(run_vocab_file(cfg, processed))
    data = eval_data(RunData.load(processed, vocab, cfg["max_len_q"], cfg["max_len_a"]), ev)
    vectors = load_matrix(embeddings)
    if vectors.shape != (len(vocab), cfg["hparams"]["embedding_dim"]):
        raise ValueError(
            f"{embeddings}: shape {vectors.shape}, but {run_config} reads "
            f"({len(vocab)}, {cfg['hparams']['embedding_dim']}) (its vocabulary, its embedding_dim)"
        )
    arrays = {"q_ids": data.q_ids, "a_ids": data.a_ids, "vectors": vectors}
    for split in SPLITS:
        cands, qi, ai = data.pairs(split)
        arrays |= {
            f"{split}_qid": cands.qid.to_numpy(str),
            f"{split}_aid": cands.aid.to_numpy(str),
            f"{split}_label": cands.label.to_numpy(np.int64),
            f"{split}_qi": qi,
            f"{split}_ai": ai,
        }
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **arrays)
    print(
        f"{out}: {len(vocab)} words, "
        + ", ".join(
            f"{s} {len(arrays[s + '_qid'])} candidates of {len(set(arrays[s + '_qid']))} questions" for s in SPLITS
        )
    )


def _labelled(run: pd.DataFrame, data: np.lib.npyio.NpzFile, split: str, path: Path) -> pd.DataFrame:
    """The split's rows of a run file with their labels; the run must rank exactly the split's candidates."""
    rows = run[run.qid.str.startswith(split + ":")].assign(qid=lambda d: d.qid.str.slice(len(split) + 1))
    cands = pd.DataFrame({"qid": data[f"{split}_qid"], "aid": data[f"{split}_aid"], "label": data[f"{split}_label"]})
    merged = cands.merge(rows[["qid", "aid", "score"]], on=["qid", "aid"], how="outer", indicator=True)
    if (merged._merge != "both").any() or len(rows) != len(cands):
        raise ValueError(
            f"{path}: its {split} rows are not the split's {len(cands)} candidates "
            f"({len(rows)} rows, {(merged._merge != 'both').sum()} unmatched)"
        )
    return merged.drop(columns="_merge")


def score(peer_dir: Path, data_file: Path, run_config: Path, out: Path) -> None:
    from ansel.evaluation.config import EvalConfig
    from ansel.evaluation.metrics import read_trec_run, split_metrics
    from ansel.settings import parse

    ev = parse(EvalConfig, json.loads(run_config.read_text())["eval"], f"{run_config}: eval")
    data = np.load(data_file)
    losses = {int(r["iteration"]): r["loss"] for r in csv.DictReader(open(peer_dir / "train_log.csv"))}
    rows, metrics = [], {}
    for path in sorted(peer_dir.glob("run-*.trec"), key=lambda p: int(p.stem.split("-")[1])):
        it = int(path.stem.split("-")[1])
        run = read_trec_run(path)
        metrics[it] = {
            s: split_metrics(_labelled(run, data, s, path), ev.task, ev.no_positive) for s in ("dev", "test")
        }
        rows.append(
            {
                "iteration": it,
                "loss": losses.get(it, ""),
                **{f"{s}_{m}": metrics[it][s][m] for s in ("dev", "test") for m in ("MAP", "MRR")},
            }
        )
    if not rows:
        raise FileNotFoundError(f"{peer_dir}: no run-<iteration>.trec files (the peer's training did not score)")
    last = rows[-1]["iteration"]
    best = max(rows, key=lambda r: (r["dev_MAP"], -r["iteration"]))["iteration"]  # the earliest of ties
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(out / "log.csv", index=False)
    for it, name in ((last, ""), (best, "_selected")):
        (out / f"metrics{name}.json").write_text(
            json.dumps(metrics[it] | {"iteration": it}, indent=2, sort_keys=True) + "\n"
        )
        with (
            open(peer_dir / f"run-{it}.trec", "rb") as src,
            gzip.GzipFile(out / f"run{name}.trec.gz", "wb", mtime=0) as dst,
        ):
            shutil.copyfileobj(src, dst)
    print(
        f"{out}: last iteration {last} test MAP {metrics[last]['test']['MAP']:.4f}; "
        f"dev-selected iteration {best} test MAP {metrics[best]['test']['MAP']:.4f}"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export")
    e.add_argument("--run-config", type=Path, required=True)
    e.add_argument("--processed", type=Path, required=True)
    e.add_argument("--embeddings", type=Path, required=True)
    e.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("score")
    s.add_argument("--peer-dir", type=Path, required=True)
    s.add_argument("--data", type=Path, required=True)
    s.add_argument("--run-config", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True)
    a = p.parse_args()
    if a.command == "export":
        export(a.run_config, a.processed, a.embeddings, a.out)
    else:
        score(a.peer_dir, a.data, a.run_config, a.out)


if __name__ == "__main__":
    main()
