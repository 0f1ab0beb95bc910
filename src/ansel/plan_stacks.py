"""A row's seeds priced as one stacked model (``ansel train --seeds``, ``training.seed_stack``) where
that was measured: the speed entry (``training.speed``) times each shape's seeds stacked beside one
seed alone, in one process, into ``bench/speed.json`` (a later lease's beside it as
``bench/speed-<stamp>.json``, ``records.kit_unpack``), and a run trained in a stack keeps its stack's
epoch times (``stacked_seeds`` in its timings); ``plan.costs_by_device`` attaches those stacks (``Stack``)
to the shape's cost measured on the same device.

A stack is priced from its own step (seconds per step of all its seeds together) and, not timed for a
stack yet, the rest of its alone run's parts as the stacked training spends them: each seed's dev scoring
and state after every epoch (scored and saved one seed after another), one start-up (one process).
A row of ``n`` seeds is priced stacked only from a stack of ``n`` measured on the device of its alone
cost; a shape whose model would stack (``layers_stack``: the static part of ``seed_stack.check_stackable``)
but has no such stack is named, with its runs: what the speed entry must measure.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

SPEED_FILE = "bench/speed.json"


@dataclass
class Stack:
    seeds: int
    seconds_per_batch: float  # one step of every seed together
    device: str
    source: str
    peak_mb: float | None = None


def read_stacks(src: Path, costs: dict, shape_key) -> tuple[dict[str, dict[int, Stack]], dict[str, str]]:
    """({shape: {seeds: Stack}}, {shape: why its stack failed}) of ``src``'s speed entry, each stacked
    variant keyed by the shape at its precision (``shape_key``: the planner's key of a shape's fields);
    its device is that of the alone cost the same process measured (``costs``: {shape: Cost} read from
    ``src``), a variant without one left out. Every lease's speed file is read, the first's
    (``speed.json``) then the later ones' by their stamps, a later figure replacing an earlier one."""
    first = src / SPEED_FILE
    paths = [first] if first.exists() else []
    paths += sorted(first.parent.glob(f"{first.stem}-*{first.suffix}"))
    stacks: dict[str, dict[int, Stack]] = {}
    failed: dict[str, str] = {}

    def at(key: str, variant: str) -> str:  # "bf16 stacked x5" of a shape: that shape at bf16
        return shape_key({**json.loads(key), "precision": variant.partition(" stacked x")[0]})

    for path in paths:
        for key, entry in json.loads(path.read_text()).items():
            failed |= {at(key, name): why for name, why in entry.get("failed", {}).items() if " stacked x" in name}
            for name, v in entry["variants"].items():
                if v["seeds"] > 1 and (shape := at(key, name)) in costs:
                    stack = Stack(v["seeds"], v["seconds_per_batch"], costs[shape].device, str(path), v.get("peak_mb"))
                    stacks.setdefault(shape, {})[v["seeds"]] = stack
                    failed.pop(shape, None)
    return stacks, failed


def layers_stack(cfg: dict) -> bool:
    """Whether ``cfg``'s layers and training let its seeds train as one stacked model (whether its forward
    runs under vmap only a stacked step shows: the speed entry's)."""
    from ansel.settings import parse
    from ansel.training.config import TrainConfig
    from ansel.training.seed_stack import StackError, check_stackable

    model = _meta_model(cfg["arch"], json.dumps(cfg["hparams"], sort_keys=True))
    try:
        check_stackable(cfg, parse(TrainConfig, cfg["train"], f"models.{cfg['model']}.train"), model)
    except StackError:
        return False
    return True


@functools.cache
def _meta_model(arch: str, hparams: str):
    """The architecture's layers on the meta device (no memory), on a stand-in vocabulary: the layers'
    kinds do not depend on it."""
    import numpy as np
    import torch

    from ansel.data.vocab import Lexicon
    from ansel.models.registry import build_model, needs_lexicon

    words = ["<pad>", "<unk>", "a"]
    lexicon = Lexicon(words, np.ones(3, np.int64), np.ones(3, np.int64), 3) if needs_lexicon(arch) else None
    with torch.device("meta"):
        return build_model(arch, json.loads(hparams), len(words), None, "model", lexicon, 2)


def row_key(cfg: dict) -> str:
    """What a row's seeds share: their config but the seed (``trainer.train_seeds`` stacks only these)."""
    return json.dumps({**cfg, "seed": None}, sort_keys=True)


def stack_parts(alone: dict[str, float], cfg: dict, batches: int, stack: Stack) -> dict[str, float]:
    """The device-minutes by part of ``cfg``'s row of ``stack.seeds`` seeds as one stacked model, from one
    seed's parts alone (``plan.run_parts``) and the stack's step."""
    n = stack.seeds
    return {
        "training": cfg["train"]["epochs"] * batches * stack.seconds_per_batch / 60,
        "dev scoring": n * alone["dev scoring"],
        **({"checkpoints": n * alone["checkpoints"], "start-up": alone["start-up"]} if "start-up" in alone else {}),
    }
