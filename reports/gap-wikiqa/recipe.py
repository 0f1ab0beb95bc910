"""E2 and E3 of issue 51 on WikiQA: AP-CNN at the paper's recipe (the `apnet_ap_cnn_wikiqa` model as
params.yaml and preset=paper resolve it: best of 50 sampled negatives, SGD lr 1.1/t, margin 0.5, mean
hinge loss over mini-batches of 20, 400 filters of width 4), trained by `ansel train` and scored by
`ansel evaluate` as the pipeline's rules run them, with every training batch logged (train.batch_log)
and test scored after every epoch beside dev (train.monitor_splits; never used to select).

    python reports/gap-wikiqa/recipe.py SEED NAME [NAME ...]

E2 (the vectors, the recipe fixed): GloVe 6B 50-d against word2vec-50 trained on WikiQA's training
split; 4 epochs, so that 200 batches are logged (52 batches an epoch). E3 (the recipe, the vectors
fixed: word2vec-300 trained on WikiQA's training split, the vectors of today's WikiQA AP-CNN rows):
2 epochs (mini-batch 1: 1 epoch), one change at a time against the paper recipe. A run with a
metrics.json is skipped; one trained with the same config but not yet scored is scored. Needs data/processed/wikiqa and
data/embeddings/wikiqa/<vectors>-<dim>.npy (snakemake them first); writes
reports/gap-wikiqa/runs/recipe/<name>/seed<k>/ (config.json, log.csv, batches.csv, metrics.json,
timings.json, run.trec.gz; the weights are not kept)."""

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

from ansel.config import deep_merge, embeddings_file, load, run_config

PAPER = {"train": {"epochs": 2}}
# name: changes to the paper recipe's run config
RUNS = {
    # E2: the vectors
    "glove6b_50": {"embeddings": "glove6b_50", "hparams": {"embedding_dim": 50}, "train": {"epochs": 4}},
    "word2vec_50": {"embeddings": "word2vec", "hparams": {"embedding_dim": 50}, "train": {"epochs": 4}},
    # E3: the recipe, on word2vec-300
    "paper": PAPER,
    "sum_loss": deep_merge(PAPER, {"train": {"rank_reduction": "sum"}}),
    # a partial: 1 epoch (1,040 steps), set against the paper recipe's epoch 1 (decided before it was timed)
    "batch_1": deep_merge(PAPER, {"train": {"batch_size": 1, "epochs": 1}}),
    "lr_0.11": deep_merge(PAPER, {"train": {"lr": 0.11}}),
    "conv_no_bias": deep_merge(PAPER, {"hparams": {"conv_bias": False}}),
    "conv_narrow": deep_merge(PAPER, {"hparams": {"conv_padding": "narrow"}}),
    "conv_same": deep_merge(PAPER, {"hparams": {"conv_padding": "same"}}),
    "own_negatives": deep_merge(PAPER, {"train": {"negatives": {"source": "candidates"}}}),
}
MODEL = "apnet_ap_cnn_wikiqa"
# E2b: E2's two vector sets for the other three rows of AP's WikiQA table, 2 epochs (QA-CNN's 4,000
# filters cost ~20 s a batch of 300-d; at 50-d, under a tenth of that)
MODELS = {}
for row in ("qa_cnn", "qa_bilstm", "ap_bilstm"):
    for vectors in ("glove6b_50", "word2vec_50"):
        RUNS[f"{row}_{vectors}"] = deep_merge(RUNS[vectors], {"train": {"epochs": 2}})
        MODELS[f"{row}_{vectors}"] = f"apnet_{row}_wikiqa"
# E2c: GloVe 6B 50-d at the paper's 25 epochs, dev-selected as the tables select
for row in ("ap_cnn", "ap_bilstm", "qa_bilstm", "qa_cnn"):
    RUNS[f"e25_{row}_glove6b_50"] = {"embeddings": "glove6b_50", "hparams": {"embedding_dim": 50}}
    MODELS[f"e25_{row}_glove6b_50"] = f"apnet_{row}_wikiqa"
PROCESSED = "data/processed/wikiqa"
OUT = Path(__file__).parent / "runs" / "recipe"


def ansel(*args: str) -> None:
    subprocess.run(["ansel", *args], check=True)


seed, names = int(sys.argv[1]), sys.argv[2:]
if unknown := [n for n in names if n not in RUNS]:
    sys.exit(f"unknown run(s) {', '.join(unknown)}; known: {', '.join(RUNS)}")
for name in names:
    cfg = deep_merge(run_config(load(preset="paper"), "wikiqa", MODELS.get(name, MODEL), seed), RUNS[name])
    cfg = deep_merge(cfg, {"train": {"batch_log": True, "monitor_splits": ["test"]}})
    run = OUT / name / f"seed{seed}"
    if (run / "metrics.json").exists():
        continue
    trained = (run / "model.pt").exists() and json.loads((run / "config.json").read_text()) == cfg
    if not trained:
        ansel(
            "train",
            "--config",
            json.dumps(cfg),
            "--processed",
            PROCESSED,
            "--run-dir",
            str(run),
            "--embeddings",
            embeddings_file(cfg),
            "--timings",
            str(run / "timings.json"),
            "--no-progress",
            "--no-dvclive",
        )
    ansel("evaluate", "--processed", PROCESSED, "--run-dir", str(run))
    with open(run / "run.trec", "rb") as f, gzip.GzipFile(run / "run.trec.gz", "wb", mtime=0) as g:
        shutil.copyfileobj(f, g)
    for leftover in ("run.trec", "model.pt", "dev_scores.pt"):
        (run / leftover).unlink(missing_ok=True)
    metrics = json.loads((run / "metrics.json").read_text())
    print(name, seed, "dev MAP", metrics["dev"]["MAP"], "test MAP", metrics["test"]["MAP"], flush=True)
