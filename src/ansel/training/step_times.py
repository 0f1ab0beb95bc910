"""A table's training seconds per batch as a benchmark measures them (a column's ``protocol:
benchmark``, GGSA Table 3's cost claim): each row's run config with every text filled to the run's
maximum lengths (so no batch is trimmed to its longest text, and every model reads the stated
length), the run's batch size, a warm-up step excluded, ``rounds`` rounds of ``batches`` steps with
the models taking turns round by round, in one process that the workflow runs alone."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import torch

from ansel.data.batches import RunData
from ansel.data.vocab import PAD, Vocab, run_vocab_file
from ansel.training.trainer import step_seconds


def filled(data: RunData, max_len_q: int, max_len_a: int, seed: int = 0) -> RunData:
    """``data`` with every question ``max_len_q`` and every answer ``max_len_a`` random real words long
    (no padding; the id matrices are otherwise only as wide as the longest text)."""
    rng = np.random.default_rng(seed)
    low = PAD + 2  # neither padding nor <unk>
    return dataclasses.replace(
        data,
        q_ids=rng.integers(low, data.vocab_size, (len(data.q_ids), max_len_q)),
        a_ids=rng.integers(low, data.vocab_size, (len(data.a_ids), max_len_a)),
    )


def measure(configs: dict[str, dict], processed: Path, batches: int = 3, rounds: int = 3) -> dict:
    """{"device", "threads", "batches", "rounds", "models": {model: {batch_size, max_len_q, max_len_a,
    seconds_per_batch: [one value per round]}}} of the run configs ``configs`` ({model: config})."""
    loaded: dict[tuple, RunData] = {}
    models: dict[str, dict] = {}
    device = None
    for _ in range(rounds):
        for model, cfg in configs.items():
            key = (str(run_vocab_file(cfg, processed)), cfg["max_len_q"], cfg["max_len_a"])
            if key not in loaded:
                loaded[key] = filled(RunData.load(processed, Vocab.load(key[0]), *key[1:]), *key[1:])
            device, seconds = step_seconds(cfg, loaded[key], batches, 1)
            entry = models.setdefault(
                model,
                {
                    "batch_size": cfg["train"]["batch_size"],
                    "max_len_q": key[1],
                    "max_len_a": key[2],
                    "seconds_per_batch": [],
                },
            )
            entry["seconds_per_batch"] += seconds
    return {
        "device": device,
        "threads": torch.get_num_threads(),
        "batches": batches,
        "rounds": rounds,
        "models": models,
    }
