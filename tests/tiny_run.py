"""A tiny training run for the tests: qa_cnn's run config on the synthetic corpus, and `ansel train`'s
arguments for a run config."""

from __future__ import annotations

import json
from pathlib import Path

from ansel.config import load, run_config


def tiny_qa_cnn(**train) -> dict:
    """qa_cnn's run config on synthetic_en without vectors, scoring dev and test (a fixture corpus has no
    test1/test2), trained 2 epochs of 2 batches of 16 unless ``train`` says otherwise."""
    c = run_config(load(), "synthetic_en", "qa_cnn", 1)
    c["embeddings"] = None
    c["eval"]["splits"] = ["dev", "test"]
    c["train"].update({"epochs": 2, "batch_size": 16, "max_batches": 2, **train})
    return c


def train_args(config: dict, processed: Path, run_dir: Path, *extra: str) -> list[str]:
    """`ansel train`'s arguments, the verb first, for ``config`` (``extra`` options added), no progress bar."""
    args = ["train", "--config", json.dumps(config), "--processed", str(processed), "--run-dir", str(run_dir)]
    return [*args, *extra, "--no-progress"]
