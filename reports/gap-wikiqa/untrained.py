"""E6 of issue 51: each WikiQA model of a committed record scored at epoch 0 (its seeded initial
weights, the word vectors its runs started from), through `ansel train` with `train.epochs: 0` and
`ansel evaluate`, from the committed run's own config.json (nothing else changed).

    python reports/gap-wikiqa/untrained.py RECORD_RUNS_DIR SEED [SEED ...]

RECORD_RUNS_DIR: a record's runs/<dataset>/ folder; every model in it with a config.json for SEED
runs. Needs the pipeline's data/processed/<dataset> and data/embeddings/<dataset>/ (snakemake them
first); writes reports/gap-wikiqa/runs/untrained/<dataset>/<model>/seed<k>/ (config.json, log.csv,
metrics.json, run.trec.gz; the weights are not kept)."""

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

from ansel.config import embeddings_file

OUT = Path(__file__).parent / "runs" / "untrained"

record, seeds = Path(sys.argv[1]), [int(s) for s in sys.argv[2:]]
for model_dir in sorted(p for p in record.iterdir() if p.is_dir()):
    for seed in seeds:
        given = model_dir / f"seed{seed}" / "config.json"
        if not given.exists():
            continue
        cfg = json.loads(given.read_text())
        if cfg["model"].startswith("lexical_"):  # nothing to train: the record's run is its epoch 0
            continue
        cfg["train"]["epochs"] = 0
        run = OUT / cfg["dataset"] / cfg["model"] / f"seed{seed}"
        if (run / "metrics.json").exists():
            continue
        vectors = embeddings_file(cfg)
        processed = f"data/processed/{cfg['dataset']}"
        subprocess.run(
            [
                "ansel",
                "train",
                "--config",
                json.dumps(cfg),
                "--processed",
                processed,
                "--run-dir",
                str(run),
                "--no-progress",
                "--no-dvclive",
                *(["--embeddings", vectors] if vectors else []),
            ],
            check=True,
        )
        subprocess.run(["ansel", "evaluate", "--processed", processed, "--run-dir", str(run)], check=True)
        with open(run / "run.trec", "rb") as f, gzip.GzipFile(run / "run.trec.gz", "wb", mtime=0) as g:
            shutil.copyfileobj(f, g)
        for name in ("run.trec", "model.pt", "dev_scores.pt"):
            (run / name).unlink()
        print(run, json.loads((run / "metrics.json").read_text())["test"]["MAP"], flush=True)
