"""Score every candidate of a split, rank, and compute the metrics (dev selection and final report)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ansel import scoring
from ansel.metrics import ranking_metrics, write_trec_run
from ansel.rundata import RunData


def score_split(model, data: RunData, split: str, batch_size: int = 256) -> pd.DataFrame:
    cands, qi, ai = data.pairs(split)
    out = cands[["qid", "aid", "label"]].copy()
    out["score"] = scoring.score(model, data.q_ids, data.a_ids, qi, ai, batch_size)
    return out


def evaluate_split(model, data: RunData, split: str, no_positive: str = "drop",
                   batch_size: int = 256) -> tuple[pd.DataFrame, dict[str, float]]:
    scored = score_split(model, data, split, batch_size)
    return scored, ranking_metrics(scored, no_positive)


def evaluate_run(run_dir: Path, processed_dir: Path, data: RunData | None = None,
                 scored: dict[str, pd.DataFrame] | None = None) -> dict:
    """metrics.json (every eval split, from the dev-selected model.pt) and run.trec for a trained run.

    ``data`` and ``scored`` (split -> that model's scores) come from ``train_run`` when it ran in
    this process; a split found in ``scored`` is not scored again.
    """
    from ansel.data.vocab import Vocab
    from ansel.train import load_model, resolve_device

    cfg = json.loads((run_dir / "config.json").read_text())
    vocab = Vocab.load(processed_dir / "vocab.json")
    if data is None:
        data = RunData.load(processed_dir, vocab, cfg["max_len_q"], cfg["max_len_a"])
    scored = dict(scored or {})
    missing = [split for split in cfg["eval"]["splits"] if split not in scored]
    if missing:
        # on the training's device, where the reused dev scores were computed
        model = load_model(cfg, len(vocab), run_dir / "model.pt", resolve_device(cfg["train"].get("device", "auto")))
        scored |= {split: score_split(model, data, split) for split in missing}
    no_positive = cfg["eval"].get("no_positive", "drop")
    metrics, scored_all = {}, []
    for split in cfg["eval"]["splits"]:
        metrics[split] = ranking_metrics(scored[split], no_positive)
        scored_all.append(scored[split].assign(qid=split + ":" + scored[split].qid.astype(str)))
    log = pd.read_csv(run_dir / "log.csv")
    if "seconds_per_batch" in log:  # training cost (GGSA Table 3), mean over epochs
        metrics["train"] = {"seconds_per_batch": float(log.seconds_per_batch.mean()), "epochs": int(len(log))}
    write_trec_run(pd.concat(scored_all), run_dir / "run.trec", f"{cfg['model']}-seed{cfg['seed']}")
    tmp = run_dir / "metrics.json.tmp"
    tmp.write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    tmp.replace(run_dir / "metrics.json")
    return metrics
