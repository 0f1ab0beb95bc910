"""What ``ansel train`` runs for one run: its config resolved and checked, its data and vectors
loaded, the training, the selected epoch's dev scores saved for the evaluate stage.

This module is the entry of the training code's digest (``ansel.code_digest``): every module it
imports, at any depth, is code the train rule's runs depend on. ``commands.py`` only parses the
command line into the arguments below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ansel.config import (
    ConfigError,
    check_finite,
    embeddings_file,
    naming_the_preset,
    require_dataset_folder,
    resolve_run,
    split_settings,
)
from ansel.data.batches import RunData
from ansel.data.manifest import require_processed
from ansel.data.vocab import Vocab, run_vocab_file
from ansel.device import start_torch
from ansel.embeddings import VectorsFileError, load_matrix
from ansel.evaluation.config import EvalConfig
from ansel.evaluation.evaluate import DEV_SCORES, data_digest, dev_evaluator, eval_data, save_dev_scores
from ansel.models.registry import classifies_categories
from ansel.settings import parse
from ansel.training.config import TrainConfig
from ansel.training.seed_stack import StackError
from ansel.training.trainer import DivergedError, Trained, train_run, train_seeds


def train_command(
    spec: dict,
    processed: Path,
    run_dir: Path,
    embeddings: str | None,
    threads: int = 1,
    progress: bool = True,
    timings: Path | None = None,
    dvclive: bool = True,
    seeds: list[int] | None = None,
    checkpoint_minutes: float | None = None,
    where: str = "--config",
) -> None:
    """Train the run ``spec`` names (a whole run config, or dataset/model/seed resolved through params.yaml);
    with ``seeds``, that run at each of them, as one stacked model where the model stacks (else one
    after another), ``{seed}`` in ``run_dir`` and ``timings`` standing for each seed; ``checkpoint_minutes``:
    a training state saved at most this often (``trainer._Checkpoints``); ``where``: what a refusal of a
    value of ``spec`` names it by (``--config``, or ``--config <file>``)."""
    if checkpoint_minutes is not None and not checkpoint_minutes > 0:
        raise ConfigError(f"--checkpoint-minutes: {checkpoint_minutes} is not > 0")
    for name, path in {"--run-dir": run_dir, "--timings": timings}.items():
        if seeds and path is not None and "{seed}" not in str(path):
            raise ConfigError(f"{name} {path}: with --seeds it names each seed's path with {{seed}}")
    with naming_the_preset(spec):  # a run named without a preset: checked against params.yaml's default
        cfg = resolve_run(spec, where)
        check_finite(cfg, "", where)
        t, ev = parse(TrainConfig, cfg["train"], f"{where}: train"), parse(EvalConfig, cfg["eval"], f"{where}: eval")
        if cfg["embeddings"] and not embeddings:  # never a silently random start
            raise ConfigError(
                f"--embeddings: the run starts from {cfg['embeddings']!r} vectors; give their file ({embeddings_file(cfg)})"
            )
        if embeddings:
            _check_vectors_file(Path(embeddings), cfg)
        require_processed(processed)
        require_dataset_folder(processed, cfg["dataset"], where, "train")
        start_torch(threads)
        vocab_file = run_vocab_file(cfg, processed)
        loaded = RunData.load(processed, Vocab.load(vocab_file), cfg["max_len_q"], cfg["max_len_a"])
        for key, splits in (
            ("eval.splits", ev.splits),
            *[(f"train.{k}", s) for k, s in split_settings(cfg["arch"], t)],
        ):
            if unknown := [s for s in splits if s not in loaded.dataset.splits]:  # refused before training, not after
                raise ConfigError(
                    f"{where}: {key}: {', '.join(map(repr, unknown))} not a split of {processed} "
                    f"({', '.join(loaded.dataset.splits)})"
                )
        if classifies_categories(cfg["arch"]) and len(loaded.categories) < 2:  # a whole config skips run_config's check
            raise ConfigError(
                f"{where}: arch: {cfg['arch']!r} also classifies each question's category; the training split of "
                f"{processed} has {len(loaded.categories)} (it needs >= 2: a dataset whose questions carry one)"
            )
    data = eval_data(loaded, ev)
    trained_on = data_digest(processed, cfg)  # the data just loaded, recorded beside each run's dev scores
    vectors = _vectors(embeddings, cfg, data.vocab_size, vocab_file) if embeddings else None
    evaluate_dev = dev_evaluator(data, t.dev_split, ev)
    monitors = {split: dev_evaluator(data, split, ev) for split in t.monitor_splits}
    runs = (
        [({**cfg, "seed": s}, _at(run_dir, s), timings and _at(timings, s)) for s in seeds]
        if seeds
        else [(cfg, run_dir, timings)]
    )

    def keep(run: Path, done: Trained) -> None:  # each run's, before its state.pt goes (``trainer.Keep``)
        save_dev_scores(done.dev_scores, t.dev_split, run / DEV_SCORES, trained_on, done.monitor_scores)

    shared: dict[str, Any] = {
        "evaluate_dev": evaluate_dev,
        "progress": progress,
        "monitors": monitors,
        "dvclive": dvclive,
        "checkpoint_minutes": checkpoint_minutes,
        "trained_on": trained_on,
        "keep": keep,
    }
    try:
        if seeds:
            try:
                stacked_timings = [w for _, _, w in runs if w is not None] if timings else None
                train_seeds(
                    [c for c, _, _ in runs], data, vectors, [d for _, d, _ in runs], timings=stacked_timings, **shared
                )
                return
            except StackError as e:
                print(f"ansel train: the seeds do not stack ({e}); training them one after another", flush=True)
        for c, d, w in runs:
            train_run(c, data, vectors, d, timings=w, **shared)
    except DivergedError as e:  # the config's fault, not the code's: its message, not a traceback
        raise SystemExit(f"ansel train: {e}") from None


def _vectors(path: str, cfg: dict, rows: int, vocab_file: Path):
    """The run's starting vectors, refused unless they hold a row for each word of its vocabulary, as
    wide as ``hparams.embedding_dim``: vectors made for another dataset or width name the file."""
    vectors = load_matrix(path)
    dim = cfg["hparams"].get("embedding_dim")
    if vectors.ndim != 2 or vectors.shape[0] != rows or dim not in (None, vectors.shape[1]):
        made = embeddings_file(cfg)
        raise VectorsFileError(
            f"--embeddings {path}: vectors of shape {vectors.shape}, but the run needs {rows} rows (the words of "
            f"{vocab_file}) of {dim if dim is not None else 'any'} values (hparams.embedding_dim)"
            + (f"; its own are {made} (snakemake {made})" if made else "")
        )
    return vectors


def _check_vectors_file(path: Path, cfg: dict) -> None:
    """Refuse vectors the run's config.json would not record: a run with random initial weights
    (``embeddings`` null), or another pipeline vectors file (data/embeddings/<dataset>/) than its own."""
    own = embeddings_file(cfg)
    if own is None:
        raise ConfigError(
            f"--embeddings {path}: the run config names no vectors (embeddings: null: random initial weights); "
            "drop --embeddings, or set the config's embeddings to the vectors' method"
        )
    if path.parent.parent.parts[-2:] == ("data", "embeddings") and path.parts[-2:] != Path(own).parts[-2:]:
        raise ConfigError(
            f"--embeddings {path}: not the vectors the run config names ({cfg['embeddings']!r}: {own}); "
            "give that file, or set the config's embeddings to the vectors' method"
        )


def _at(path: Path, seed: int) -> Path:
    return Path(str(path).replace("{seed}", str(seed)))
