"""A row's seeds trained as one stacked model against the same seeds trained one model at a time
(``ansel.training.seed_stack``), in one process, the two taking turns round by round.

The synthetic corpus (``synthetic_en``'s generator), the model's run config with the sizes below,
its batch size; each round times ``--batches`` training steps of every seed both ways (after a
one-step warm-up), and prints seed-steps per second and their ratio (stacked / separate).

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/bench_stack_seeds.py       # ~1 CPU minute
    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/bench_stack_seeds.py --model ggsa_global_sa_max_insuranceqa \\
        --embedding-dim 60                                                   # dropout 0.3: masks per seed
    # GGSA's and iGGSA's group attention (the paper's InsuranceQA rows: two encoders, offset heads, groups of 10)
    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/bench_stack_seeds.py --model ggsa_ggsa_max_insuranceqa \\
        --embedding-dim 60
    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/bench_stack_seeds.py --model ggsa_iggsa_attn_insuranceqa \\
        --embedding-dim 60
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import pandas as pd
import torch

from ansel.config import load, run_config
from ansel.data.batches import RunData
from ansel.data.readers.synthetic import Synthetic
from ansel.data.vocab import Vocab, training_texts
from ansel.training.trainer import seed_step_seconds


def synthetic(out: Path, questions: int) -> Path:
    source = Synthetic()
    source.fetch(out / "raw", None, {"seed": 5, "questions": {"train": questions, "dev": 20, "test": 20}})
    ds = source.read(out / "raw", {"language": "en", "tokenizer": "english", "name": "syn_en"})
    ds.save(out / "processed")
    Vocab.build(training_texts(ds)).save(out / "processed" / "vocab.json")
    return out / "processed"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="qa_cnn", help="a model of params.yaml (default: the smoke QA-CNN)")
    p.add_argument("--seeds", default="1,2,3,4,5")
    p.add_argument("--embedding-dim", type=int, default=100, help="where the model has one")
    p.add_argument("--filters", type=int, default=400, help="where the model has them")
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--batches", type=int, default=5, help="timed steps per round")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        processed = synthetic(Path(tmp), 200)
        cfgs = []
        for seed in seeds:
            c = run_config(load(), "synthetic_en", a.model, seed)
            sizes = {"embedding_dim": a.embedding_dim, "filters": a.filters}
            c["hparams"].update({k: v for k, v in sizes.items() if k in c["hparams"]})
            c["train"].update(batch_size=a.batch_size, device="cpu")
            cfgs.append(c)
        data = RunData.load(processed, Vocab.load(processed / "vocab.json"), cfgs[0]["max_len_q"], cfgs[0]["max_len_a"])
        device, seconds = seed_step_seconds(cfgs, data, a.batches, a.rounds)
    n = len(seeds)
    print(
        f"{a.model}: {n} seeds, batch {a.batch_size}, {a.batches} steps x {a.rounds} rounds, {device}, "
        f"{torch.get_num_threads()} thread(s)"
    )
    rounds = [
        {"round": r, "separate seed-steps/s": n / sep, "stacked seed-steps/s": n / stk, "ratio": sep / stk}
        for r, (sep, stk) in enumerate(zip(seconds["separate"], seconds["stacked"]), 1)
    ]
    print(pd.DataFrame(rounds).set_index("round").to_markdown(floatfmt=".2f"))
    sep, stk = statistics.median(seconds["separate"]), statistics.median(seconds["stacked"])
    print(
        f"median: separate {n / sep:.2f} seed-steps/s, stacked {n / stk:.2f} seed-steps/s, stacked/separate {sep / stk:.2f}x"
    )


if __name__ == "__main__":
    main()
