"""Today's training path against the faster ones, side by side on one device (the GPU speed entry of
``reports/device/QUEUE.md``): per run shape, one seed alone in each ``train.precision`` (``torch`` is
what every run did before 2026-11-28), and the row's seeds as one stacked model where the shape stacks
(``seed_stack``), and with ``compiled`` each precision's step with the model's modules compiled (timed
only: no run trains so). The variants take turns round by round in one process, so the machine's drift
falls on all alike; each alone variant's peak device memory is read while it is the newest.

Each alone variant's cost (seconds per step, median over the rounds; one dev scoring) goes to
``<out>/costs/<device>.json`` under its shape, the precision part of it, where ``ansel plan`` reads
it; every variant's figures, the stacks' included, to ``<out>/bench/speed.json``. Dev scoring is timed on
the whole dev split, twice: a draw of ``dev_questions`` questions scaled to the split overstates it
wherever scoring encodes each distinct text once (``evaluation.scoring.score_cached``: 100 of InsuranceQA
V2's 2000 dev questions hold 10,421 of its 25,559 distinct answers, so 20x the questions is 2.45x the
texts), so that option is an upper bound, for a rehearsal. The first scoring of a shape in
a process pays once for what later epochs reuse (on the H100, 2026-11-28, MTAS's paper classifier scored
in 22.7 s the first time and 8.4 s the next), so the cost is the second."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import torch

from ansel.files import write_text_atomic
from ansel.plan import save_cost, shape, shape_inputs
from ansel.training.trainer import StepTimer


def with_precision(cfg: dict, precision: str, seed: int | None = None) -> dict:
    return {**cfg, "seed": cfg["seed"] if seed is None else seed, "train": {**cfg["train"], "precision": precision}}


def compare(
    configs: list[dict],
    out: Path,
    *,
    precisions: list[str],
    seeds: int,
    batches: int,
    rounds: int,
    dev_questions: int | None,
    compiled: bool = False,
    data_root: Path,
    deadline: float | None = None,
    report=print,
) -> dict:
    """Each config's shape timed as the module says, until ``deadline`` (``time.time()``): a shape
    started is finished, none started after it. Returns speed.json's content."""
    path = out / "bench" / "speed.json"
    results = json.loads(path.read_text()) if path.exists() else {}  # a second run goes on
    loaded: dict = {}
    examples: dict = {}
    for i, cfg in enumerate(configs, 1):
        key = shape(cfg)
        if key in results:
            continue
        if deadline is not None and time.time() > deadline:
            report(f"deadline: {sum(shape(c) not in results for c in configs)} of {len(configs)} shapes left untimed")
            break
        data, dev = shape_inputs(cfg, data_root, loaded, dev_questions)
        full = shape_inputs(cfg, data_root, loaded)[0] if dev_questions else data  # the split a draw is scaled to
        dev_split = cfg["train"].get("dev_split", "dev")
        scale = full.pairs(dev_split)[0].qid.nunique() / data.pairs(dev_split)[0].qid.nunique()
        entry = {"model": cfg["model"], "dataset": cfg["dataset"], "variants": {}, "failed": {}}
        timers: dict[str, StepTimer] = {}
        started = time.time()
        for r in range(rounds):
            for name, build in (
                _variants(cfg, data, precisions, seeds, compiled) if r == 0 else [(n, None) for n in timers]
            ):
                try:
                    if build is not None:
                        before = _allocated()
                        timers[name] = build()
                    seconds = timers[name].seconds(batches)
                except Exception as e:  # a variant that cannot run (a stack refused, memory) costs the others nothing
                    entry["failed"][name] = f"{type(e).__name__}: {e}"
                    timers.pop(name, None)
                    continue
                v = entry["variants"].setdefault(name, {"seeds": len(timers[name].cfgs), "step_seconds": []})
                v["step_seconds"].append(seconds)
                if build is not None and torch.cuda.is_available() and timers[name].device.type == "cuda":
                    v["peak_mb"] = (torch.cuda.max_memory_allocated(timers[name].device) - before) / 2**20
        for name, timer in timers.items():
            v = entry["variants"][name]
            v["seconds_per_batch"] = statistics.median(v["step_seconds"])
            if name in precisions:  # the first scoring of a shape pays for its kernels' first choice: timed apart
                v["dev_first_seconds"] = timer.dev_seconds(dev) * scale
                v["dev_seconds"] = timer.dev_seconds(dev) * scale
                cost = {k: v[k] for k in ("seconds_per_batch", "dev_seconds", "peak_mb") if k in v}
                save_cost(out / "costs", timer.cfgs[0], {"device": timer.label, **cost}, data_root, examples)
        if base := entry["variants"].get(precisions[0]):
            for v in entry["variants"].values():  # a seed's step against the first precision's: >1 is faster
                v["speedup"] = base["seconds_per_batch"] * v["seeds"] / v["seconds_per_batch"]
        entry["seconds"] = round(time.time() - started, 1)
        entry["dev_scale"] = scale
        results[key] = entry
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(results, indent=1, sort_keys=True) + "\n")
        report(f"[{i}/{len(configs)}] {cfg['dataset']} {cfg['model']}: " + summary(entry))
        del timers
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return results


def _variants(cfg: dict, data, precisions: list[str], seeds: int, compiled: bool = False):
    """(name, builder) of each variant: alone per precision, then compiled and stacked per precision."""
    for p in precisions:
        yield p, lambda p=p: StepTimer([with_precision(cfg, p)], data)
    if compiled:
        for p in precisions:
            yield f"{p} compiled", lambda p=p: _compiled(StepTimer([with_precision(cfg, p)], data))
    if seeds > 1:
        for p in precisions:
            stack = [with_precision(cfg, p, s) for s in range(1, seeds + 1)]
            yield f"{p} stacked x{seeds}", lambda stack=stack: StepTimer(stack, data, stacked=True)


def _compiled(timer: StepTimer) -> StepTimer:
    """``timer`` with each of its model's child modules compiled in place (``torch.compile``, dynamic
    shapes: a batch's length varies): fewer, fused kernels a step, where a step waits on the host's
    launches (``benchmarks/bench_dispatch.py``). Timed only: no run trains so, so no cost is written.
    Its warm-up step pays the compilation."""
    for module in timer.models[0].children():
        module.compile(dynamic=True)
    return timer


def _allocated() -> int:
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
        return torch.cuda.memory_allocated()
    return 0


def summary(entry: dict) -> str:
    parts = [
        f"{name} {v['seconds_per_batch'] * 1000:.1f} ms/step"
        + (f" ({v['speedup']:.2f}x a seed's)" if "speedup" in v else "")
        + (f", dev {v['dev_seconds']:.1f} s" if "dev_seconds" in v else "")
        for name, v in entry["variants"].items()
    ]
    parts += [f"{name} failed ({why[:80]})" for name, why in entry["failed"].items()]
    return "; ".join(parts)
