"""How many operations a training step dispatches, against what a step costs on the GPU: whether the
paper preset's costliest shapes are bound by the host's per-operation work rather than by arithmetic.

Per model (the paper preset's config, on the synthetic corpus): the aten operations one training step
dispatches outside the optimizer (forward and backward; counted at the paper's lengths, a small batch:
with random or pool negatives the count does not depend on the batch), and the optimizer's parameter
tensors (on CUDA torch steps them with its multi-tensor kernels, a few launches in all). Then the
step timed on this CPU at tiny sizes (every dimension 8, lengths 8, batch 2: nearly all of it the
host's per-operation work), its operations counted there with the optimizer's loop, and the committed H200 cost of the
shape at the paper's sizes (`ansel plan`'s measured costs). ``H200 us/op`` is that step's time over
the operations. This CPU's tiny-step ``us/op`` is a floor of the host's work per operation (a CUDA
launch adds to it), so an H200 figure a few times it fits a step bound by the host's launches without
showing it: `reports/device` record ``gpu-compiled`` (fewer kernels a step) is the test.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/bench_dispatch.py         # ~1 CPU minute
    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/bench_dispatch.py --models ggsa_ggsa_max_insuranceqa
"""

from __future__ import annotations

import argparse
import collections
import copy
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks.bench_stack_seeds

from ansel.config import load, run_config
from ansel.data.batches import RunData
from ansel.data.vocab import Vocab
from ansel.paper_targets import paper_runs
from ansel.plan import default_sources, plan_costs, shape
from ansel.training.trainer import StepTimer
from benchmarks.bench_stack_seeds import synthetic

MODELS = (
    "ggsa_ggsa_max_insuranceqa",
    "ggsa_iggsa_max_insuranceqa",
    "ggsa_global_sa_max_insuranceqa",
    "ggsa_local_sa_insuranceqa",
    "ggsa_group_sa_insuranceqa",
)
TINY = {"embedding_dim": 8, "heads": 2, "hidden": 8, "filters": 8, "attention": 8}


class Count(TorchDispatchMode):
    """The aten operations dispatched inside it, by name."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: collections.Counter = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))


def step_ops(timer: StepTimer) -> tuple[int, int]:
    """Operations of one training step (after a warm-up step): (outside the optimizer, the optimizer's
    on this CPU, where torch steps each parameter tensor in a loop)."""
    timer.seconds(1)
    counted, optimizer = Count(), Count()
    step = timer.optimizer.step

    def apart(*args, **kwargs):
        counted.__exit__(None, None, None)
        try:
            with optimizer:
                return step(*args, **kwargs)
        finally:
            counted.__enter__()

    timer.optimizer.step = apart
    with counted:
        timer.seconds(1)  # its warm-up step and one timed step
    timer.optimizer.step = step
    return sum(counted.ops.values()) // 2, sum(optimizer.ops.values()) // 2


def tiny(cfg: dict) -> dict:
    c = copy.deepcopy(cfg)
    c["hparams"].update({k: v for k, v in TINY.items() if k in c["hparams"]})
    if "group_size" in c["hparams"]:
        c["hparams"]["group_size"] = 4
    if "window" in c["hparams"]:
        c["hparams"]["window"] = 4
    c.update(max_len_q=8, max_len_a=8)
    c["train"]["batch_size"] = 2
    return c


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="+", default=list(MODELS), help="models of the paper preset")
    p.add_argument("--steps", type=int, default=20, help="timed tiny steps per round")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    paper = load(preset="paper")
    h200 = plan_costs(paper, default_sources(), "cuda/NVIDIA H200")[1]
    runs = {}  # each model's first run of the preset: the shape the H200 measured
    for run in paper_runs(paper):
        if not run.variant.point:
            runs.setdefault(run.variant.model, run.config(paper))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        processed = synthetic(Path(tmp), 40)
        vocab = Vocab.load(processed / "vocab.json")
        for model in a.models:
            on_gpu = h200.get(shape(runs[model])) if model in runs else None
            cfg = run_config(paper, "synthetic_en", model, 1)
            cfg["train"].update(batch_size=4, device="cpu")
            data = RunData.load(processed, vocab, cfg["max_len_q"], cfg["max_len_a"])
            full = StepTimer([cfg], data)
            ops, _ = step_ops(full)
            params = len(list(full.models[0].parameters()))
            small = tiny(cfg)
            timer = StepTimer([small], RunData.load(processed, vocab, small["max_len_q"], small["max_len_a"]))
            tiny_ops = sum(step_ops(timer))  # the optimizer's loop is in the tiny step's time
            seconds = statistics.median(timer.seconds(a.steps) for _ in range(a.rounds))
            row = {
                "model": model,
                "ops a step": ops,
                "parameter tensors": params,
                "tiny ops (optimizer's too)": tiny_ops,
                "tiny ms/step (this CPU)": 1000 * seconds,
                "tiny us/op": 1e6 * seconds / tiny_ops,
                "H200 ms/step (paper sizes)": 1000 * on_gpu.seconds_per_batch if on_gpu else float("nan"),
            }
            row["H200 us/op"] = 1000 * row["H200 ms/step (paper sizes)"] / ops
            rows.append(row)
    print(f"{torch.get_num_threads()} thread(s), {time.strftime('%Y-%m-%d %H:%M')}")
    print(pd.DataFrame(rows).set_index("model").to_markdown(floatfmt=".1f"))


if __name__ == "__main__":
    main()
