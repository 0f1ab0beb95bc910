"""Table 3's cost claim of the GGSA paper, measured in one run on the CPU or a GPU (``--device cuda``).

Forward + backward of one self-attention block (the paper's settings: D=300, 6 heads,
groups of 10, FFN 4D) on x [B, L, D]; GGSA = gate + offset group attention without the final
LayerNorm; global = the Transformer block; local = windows of 10 built with unfold ("img2col",
as the paper's local baseline), not with an L x L band mask; local+gate = local with GGSA's gate
(Table 3's second row); group = group attention without offset or gate (Table 4's). Prints
  1. seconds per batch (fastest run) and ratios (median of the rounds' ratios) at L=200
     (targets: GGSA <= 0.5x global, <= 0.25x local; the paper's Table 3: local 1.28 s, local+gate
     1.30 s, GGSA 0.32 s per batch of a whole model's training step on its GPU),
     for the whole block and for the attention step alone (q, k, v -> context), and each
     block's floor: the same block with its attention replaced by "context = v" (projections,
     gate, FFN, LayerNorms), i.e. the part that no attention variant can shrink; the lowest
     block ratio any attention could reach is GGSA's floor / the baseline's block. The
     attention steps are cheap, so they get 5x the repeats of the blocks;
  2. multiply-adds per word of each block, counted from the shapes: the block ratio that time
     proportional to arithmetic would give (at L=200 the projections, gate and FFN dominate);
  3. time vs L in {100, 200, 400, 800} with the growth exponent (slope of log-time vs log-L;
     GGSA ~1, global attention ~2).

Freed memory stays in the process during the run (``ansel.memory.keep_freed_memory``); pass
--system-allocator to time with glibc's defaults instead. On a GPU every timed step ends with
``torch.cuda.synchronize()``, so a time is the kernels' and not their launch.

    python benchmarks/bench_ggsa_cost.py [--quick] [--threads 2] [--system-allocator] [--device cuda]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from typing import Callable

import torch

from ansel.memory import keep_freed_memory
from ansel.models.self_attention import (
    GlobalAttention,
    GroupAttention,
    LocalAttention,
    SelfAttentionEncoder,
    head_offsets,
)

DIM, HEADS, GROUP = 300, 6, 10
DEVICE = torch.device("cpu")  # --device


class NoAttention(torch.nn.Module):
    """context = v: what is left of a block without its attention step."""

    def forward(self, q, k, v, mask):
        return v


def attentions() -> dict[str, tuple[torch.nn.Module, dict]]:
    """name -> (attention, block options) as the registered architectures build them."""
    return {
        "ggsa": (GroupAttention(GROUP, head_offsets(HEADS, GROUP, True)), {"gate": True, "final_norm": False}),
        "global": (GlobalAttention(), {"gate": False, "final_norm": True}),
        "local": (LocalAttention(GROUP), {"gate": False, "final_norm": False}),
        "local+gate": (LocalAttention(GROUP), {"gate": True, "final_norm": False}),
        "group": (GroupAttention(GROUP, head_offsets(HEADS, GROUP, False)), {"gate": False, "final_norm": False}),
    }


def synchronize() -> None:
    """Wait for the GPU's queued kernels (a no-op on the CPU): a step's time is its kernels'."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize(DEVICE)


def seconds(steps: dict[str, Callable[[], None]], repeats: int) -> dict[str, list[float]]:
    """``repeats`` timed runs per step, the steps interleaved round by round: on a machine shared
    with other jobs the fastest run is the least disturbed estimate of a cost, and a ratio is
    taken within each round, so that a slowdown lasting minutes weighs on both sides of it."""
    for step in steps.values():
        step()  # warm-up: allocator, kernel selection
    synchronize()
    runs = {name: [] for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            synchronize()
            runs[name].append(time.perf_counter() - start)
    return runs


def ratio(runs: dict, a, b) -> tuple[float, float, float]:
    """Quartiles of a's time over b's, round by round."""
    return tuple(statistics.quantiles([x / y for x, y in zip(runs[a], runs[b])], n=4))


def block_step(attention, options, batch: int, length: int):
    block = SelfAttentionEncoder(DIM, HEADS, attention, 4 * DIM, **options).to(DEVICE)
    x = torch.randn(batch, length, DIM, device=DEVICE, requires_grad=True)
    mask = torch.ones(batch, length, dtype=torch.bool, device=DEVICE)

    def step():
        block.zero_grad(set_to_none=True)
        x.grad = None  # as a training step: gradients are set, not added to the last step's
        block(x, mask)[0].sum().backward()

    return step


def attention_step(attention, batch: int, length: int):
    qkv = [torch.randn(batch, HEADS, length, DIM // HEADS, device=DEVICE, requires_grad=True) for _ in range(3)]
    mask = torch.ones(batch, length, dtype=torch.bool, device=DEVICE)

    def step():
        for t in qkv:
            t.grad = None
        attention(*qkv, mask).sum().backward()

    return step


def multiply_adds(name: str, length: int) -> dict[str, int]:
    """Multiply-adds per word, fwd: projections (q, k, v, out), FFN (D -> 4D -> D), the gate's
    D x D linear, and attention (scores + weighted sum over the keys a word sees)."""
    seen = length if name == "global" else GROUP
    return {
        "projections": 4 * DIM * DIM,
        "ffn": 2 * DIM * 4 * DIM,
        "gate": DIM * DIM if name in ("ggsa", "local+gate") else 0,
        "attention": 2 * seen * DIM,
    }


def exponent(lengths, times) -> float:
    xs, ys = [math.log(n) for n in lengths], [math.log(t) for t in times]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="B=16 at L=200, B=4 for the length sweep")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--system-allocator", action="store_true", help="glibc's defaults: freed memory returned")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 ...")
    args = parser.parse_args()
    global DEVICE
    DEVICE = torch.device(args.device)
    if args.repeats < 2:
        parser.error("--repeats must be at least 2: ratios are taken over rounds")
    kept = not args.system_allocator and keep_freed_memory()
    attention_repeats = 5 * args.repeats
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    batch, sweep_batch = (16, 4) if args.quick else (128, 16)
    where = torch.cuda.get_device_name(DEVICE) if DEVICE.type == "cuda" else f"CPU, {args.threads} threads"
    print(
        f"torch {torch.__version__}, {where}, fastest of {args.repeats} fwd+bwd "
        f"({attention_repeats} for attention steps alone), interleaved, "
        f"{'freed memory kept' if kept else 'system allocator'}, "
        f"D={DIM}, heads={HEADS}, group/window={GROUP}"
    )

    print(f"\n1. B={batch}, L=200: seconds per batch")
    variants = attentions()
    blocks, attention = {}, {}
    for name, (att, opts) in variants.items():
        blocks[name, "block"] = block_step(att, opts, batch, 200)
        blocks[name, "floor"] = block_step(NoAttention(), opts, batch, 200)
        attention[name, "attention"] = attention_step(att, batch, 200)
    runs = seconds(blocks, args.repeats) | seconds(attention, attention_repeats)
    print(f"{'':12s}{'block':>10s}{'floor':>10s}{'attention':>12s}   (fastest run)")
    for name in variants:
        print(
            f"{name:12s}"
            + "".join(
                f"{min(runs[name, part]):{w}.4f}" for part, w in (("block", 10), ("floor", 10), ("attention", 12))
            )
        )
    print("GGSA / baseline, median [quartiles] of the ratio within each round:")
    for other, target in (("global", 0.5), ("local", 0.25), ("local+gate", 0.25), ("group", None)):
        block, floor = (ratio(runs, ("ggsa", part), (other, "block"))[1] for part in ("block", "floor"))
        q1, median, q3 = ratio(runs, ("ggsa", "attention"), (other, "attention"))
        print(
            f"  {other:10s}: block {block:.2f}x (lowest reachable: floor {floor:.2f}x), "
            f"attention {median:.3f}x [{q1:.3f}, {q3:.3f}]" + (f"  (target <= {target}x)" if target else "")
        )
    print("  the paper's Table 3 (whole model, seconds per batch): GGSA / local 0.25x, GGSA / local+gate 0.25x")

    print("\n2. multiply-adds per word at L=200 (thousands)")
    counts = {name: multiply_adds(name, 200) for name in variants}
    parts = list(counts["ggsa"])
    print(f"{'':12s}" + "".join(f"{part:>13s}" for part in parts) + f"{'block':>8s}")
    for name, count in counts.items():
        print(
            f"{name:12s}"
            + "".join(f"{count[part] / 1e3:13.0f}" for part in parts)
            + f"{sum(count.values()) / 1e3:8.0f}"
        )
    for other in ("global", "local"):
        print(
            f"GGSA / {other:10s}: block {sum(counts['ggsa'].values()) / sum(counts[other].values()):.2f}x "
            f"by arithmetic, attention {counts['ggsa']['attention'] / counts[other]['attention']:.2f}x"
        )

    lengths = (100, 200, 400, 800)
    print(f"\n3. B={sweep_batch}: seconds per batch vs L, growth exponent (log-log slope)")
    print(f"{'':18s}" + "".join(f"{n:>9d}" for n in lengths) + f"{'exponent':>10s}")
    steps = {}
    for name in ("ggsa", "global"):
        att, opts = variants[name]
        for n in lengths:
            steps[name, "block", n] = block_step(att, opts, sweep_batch, n)
            steps[name, "attention", n] = attention_step(att, sweep_batch, n)
    times = {key: min(runs) for key, runs in seconds(steps, args.repeats).items()}
    for name in ("ggsa", "global"):
        for part in ("block", "attention"):
            row = [times[name, part, n] for n in lengths]
            print(f"{name + ' ' + part:18s}" + "".join(f"{t:9.3f}" for t in row) + f"{exponent(lengths, row):10.2f}")


if __name__ == "__main__":
    main()
