"""E5 of issue 51, the planted signal: the synthetic_mapping corpus (ansel.data.readers.synthetic_mapping)
fetched and preprocessed by `ansel download` / `ansel preprocess`, then each model below trained from
random vectors by `ansel train` and scored by `ansel evaluate`, as the pipeline's rules run them.

    python reports/gap-wikiqa/planted.py [NAME ...]   (default: every run below)

A run's config is the named model's as params.yaml and the preset resolve it for WikiQA (its training
recipe unchanged), with: the planted corpus as its dataset, random initial vectors (embeddings: null),
the embedding size EMBEDDING_DIM (the corpus has 240 words), the epochs below, and the `changes`
named in each run (the recipe's variants). Writes reports/gap-wikiqa/runs/planted/<name>/seed1/
(config.json, log.csv, metrics.json, run.trec.gz; the weights are not kept)."""

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

from ansel.config import deep_merge, load, run_config

CORPUS = {
    "seed": 13,
    "cues": 100,
    "fillers": 20,
    "question_fillers": 3,
    "answer_fillers": 5,
    "candidates": 10,
    "max_positives": 2,
    "questions": {"train": 2000, "dev": 100, "test": 100},
}
DATASET = {"source": "synthetic_mapping", "splits": ["train", "dev", "test"], "read": {}}
EMBEDDING_DIM = 64
SEED = 1
# name: (preset, the model's WikiQA dataset, model, changes to its run config)
RUNS = {
    "ap_cnn_paper": ("full", "wikiqa", "apnet_ap_cnn_wikiqa", {"train": {"epochs": 8}}),
    "ap_cnn_paper_own_negatives": (
        "full",
        "wikiqa",
        "apnet_ap_cnn_wikiqa",
        {"train": {"epochs": 8, "negatives": {"source": "candidates"}}},
    ),
    # controls: one random negative of the question's own candidates instead of the best of 50 answers,
    # at the paper's SGD recipe, and with Adam (the fast test's optimiser)
    "ap_cnn_paper_pool": (
        "full",
        "wikiqa",
        "apnet_ap_cnn_wikiqa",
        {"train": {"epochs": 8, "negatives": {"strategy": "pool", "n": 1}}},
    ),
    "ap_cnn_adam_pool": (
        "full",
        "wikiqa",
        "apnet_ap_cnn_wikiqa",
        {
            "train": {
                "epochs": 8,
                "optimizer": "adam",
                "lr": 0.001,
                "lr_schedule": "constant",
                "negatives": {"strategy": "pool", "n": 1},
            }
        },
    ),
    "ap_cnn_cpu": ("cpu", "wikiqa", "apnet_ap_cnn_wikiqa", {}),
    "ap_cnn_untrained": ("full", "wikiqa", "apnet_ap_cnn_wikiqa", {"train": {"epochs": 0}}),
    "mv_lstm_paper": ("paper", "wikiqa_mz", "amv_mv_lstm_wikiqa", {"train": {"epochs": 60}}),
    "mv_lstm_paper_400": ("paper", "wikiqa_mz", "amv_mv_lstm_wikiqa", {}),  # the paper's 400 iterations
    "mv_lstm_paper_no_dropout": (
        "paper",
        "wikiqa_mz",
        "amv_mv_lstm_wikiqa",
        {"train": {"epochs": 60}, "hparams": {"dropout": 0.0, "lstm_dropout": 0.0}},
    ),
    "mv_lstm_cpu": ("cpu", "wikiqa_mz", "amv_mv_lstm_wikiqa", {}),
    "mv_lstm_untrained": ("paper", "wikiqa_mz", "amv_mv_lstm_wikiqa", {"train": {"epochs": 0}}),
    "bm25": ("full", "wikiqa", "lexical_bm25", {}),
}
ROOT = Path("data/planted")
OUT = Path(__file__).parent / "runs" / "planted"


def ansel(*args: str) -> None:
    subprocess.run(["ansel", *args], check=True)


raw, processed = ROOT / "raw", ROOT / "processed"
if not (processed / "vocab.json").exists():
    ansel(
        "download", "--source", "synthetic_mapping", "--out", str(raw / "manifest.json"), "--config", json.dumps(CORPUS)
    )
    ansel(
        "preprocess",
        "--dataset",
        "synthetic_mapping",
        "--raw",
        str(raw),
        "--out",
        str(processed),
        "--config",
        json.dumps(DATASET),
    )
for name in sys.argv[1:] or RUNS:
    preset, dataset, model, changes = RUNS[name]
    cfg = run_config(load(preset=preset), dataset, model, SEED)
    cfg = deep_merge(
        cfg,
        {
            "dataset": "synthetic_mapping",
            "embeddings": None,
            "model": name,
            "eval": {"splits": ["dev", "test"], "no_positive": "drop"},
        },
    )
    if "embedding_dim" in cfg["hparams"]:
        cfg["hparams"]["embedding_dim"] = EMBEDDING_DIM
    cfg = deep_merge(cfg, changes)
    cfg["train"].pop("monitor_splits", None)  # dev selects; test is scored once, from the selected weights
    run = OUT / name / f"seed{SEED}"
    ansel(
        "train",
        "--config",
        json.dumps(cfg),
        "--processed",
        str(processed),
        "--run-dir",
        str(run),
        "--no-progress",
        "--no-dvclive",
    )
    ansel("evaluate", "--processed", str(processed), "--run-dir", str(run))
    with open(run / "run.trec", "rb") as f, gzip.GzipFile(run / "run.trec.gz", "wb", mtime=0) as g:
        shutil.copyfileobj(f, g)
    for leftover in ("run.trec", "model.pt", "dev_scores.pt"):
        (run / leftover).unlink(missing_ok=True)
    metrics = json.loads((run / "metrics.json").read_text())
    print(name, "dev MAP", metrics["dev"]["MAP"], "test MAP", metrics["test"]["MAP"], flush=True)
