"""What ``ansel train`` runs for one run: its config resolved and checked, its data and vectors
loaded, the training, the selected epoch's dev scores saved for the evaluate stage.

This module is the entry of the training code's digest (``ansel.code_digest``): every module it
imports, at any depth, is code the train rule's runs depend on. ``cli.py`` only parses the
command line into the arguments below.
"""
from __future__ import annotations

from pathlib import Path

from ansel.config import ConfigError, check_finite, embeddings_file, resolve_run
from ansel.data.batches import RunData
from ansel.data.vocab import Vocab, run_vocab_file
from ansel.device import start_torch
from ansel.embeddings import load_matrix
from ansel.evaluation.config import EvalConfig
from ansel.evaluation.evaluate import DEV_SCORES, dev_evaluator, eval_data, save_dev_scores
from ansel.settings import parse
from ansel.training.config import TrainConfig
from ansel.training.trainer import DivergedError, train_run


def train_command(spec: dict, processed: Path, run_dir: Path, embeddings: str | None, threads: int = 1,
                  progress: bool = True, timings: Path | None = None, dvclive: bool = True) -> None:
    """Train the run ``spec`` names (a whole run config, or dataset/model/seed resolved through params.yaml)."""
    cfg = resolve_run(spec, "--config")
    check_finite(cfg, "--config")
    t, ev = parse(TrainConfig, cfg["train"], "--config train"), parse(EvalConfig, cfg["eval"], "--config eval")
    if cfg["embeddings"] and not embeddings:  # never a silently random start
        raise ConfigError(f"--embeddings: the run starts from {cfg['embeddings']!r} vectors; give their file "
                          f"({embeddings_file(cfg)})")
    start_torch(threads)
    data = eval_data(RunData.load(processed, Vocab.load(run_vocab_file(cfg, processed)), cfg["max_len_q"],
                                  cfg["max_len_a"]), ev)
    try:
        trained = train_run(cfg, data, load_matrix(embeddings) if embeddings else None, run_dir,
                            dev_evaluator(data, t.dev_split, ev), progress=progress, timings=timings,
                            monitors={split: dev_evaluator(data, split, ev) for split in t.monitor_splits},
                            dvclive=dvclive)
    except DivergedError as e:  # the config's fault, not the code's: its message, not a traceback
        raise SystemExit(f"ansel train: {e}") from None
    save_dev_scores(trained.dev_scores, t.dev_split, run_dir / DEV_SCORES)
