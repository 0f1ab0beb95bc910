"""The published-vectors loader (ansel.pretrained) on a generated file of GloVe 840B's shape.

Writes a GloVe-format text file of ``--words`` lines x ``--dim`` values (2 M x 300 by default:
~3.9 GB, like glove.840B.300d.txt's 2.2 M x 300 in 5.6 GB), with tokens holding spaces and a few
malformed lines, then reads it for a dataset-sized vocabulary (``--vocab`` words, half of them in
the file) in a child process. Prints seconds, MB/s and the child's peak RSS for the loader and,
in the same run, for the baseline of reading the file's lines and doing nothing with them (the
ratio is what the parsing costs). Targets: >= 100 MB/s, <= 1 GB peak RSS.

    PYTHONPATH=src python benchmarks/bench_vectors_loader.py [--words 2000000] [--dim 300] [--vocab 50000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MALFORMED = 7


def generate(path: Path, words: int, dim: int, seed: int = 0) -> None:
    """Lines ``w<i> <dim values>``: 1,000 distinct vectors cycled (the file's size and parsing cost
    are those of real vectors); every 100,000th token holds spaces; MALFORMED lines are cut short."""
    rng = np.random.default_rng(seed)
    tails = [" ".join(f"{v:.4f}" for v in rng.normal(0, 0.4, dim)) for _ in range(1000)]
    bad = set(rng.choice(words, MALFORMED, replace=False).tolist())
    with open(path, "w", buffering=1 << 22) as f:
        for i in range(words):
            token = f". w{i} ." if i % 100_000 == 0 else f"w{i}"
            tail = tails[i % 1000]
            f.write(f"{token} {tail[: len(tail) // 2] if i in bad else tail}\n")


def child(mode: str, path: str, dim: int, vocab_size: int) -> None:
    """One measurement in its own process, so its peak RSS is its own."""
    started = time.perf_counter()
    if mode == "baseline":
        with open(path, "rb", buffering=1 << 22) as f:
            for _ in f:
                pass
        out = {}
    else:
        from ansel.data.vocab import Vocab
        from ansel.pretrained import load_pretrained

        words = [f"w{i}" for i in range(0, 4 * vocab_size, 2)][: vocab_size // 2]  # half found in the file
        words += [f"absent{i}" for i in range(vocab_size - len(words))]
        _, coverage, report = load_pretrained(path, Vocab(["<pad>", "<unk>", *words]), dim)
        out = {"coverage": round(coverage, 4), "words": report.words, "malformed": report.malformed}
    out["seconds"] = time.perf_counter() - started
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def measure(mode: str, path: Path, dim: int, vocab: int) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path), str(dim), str(vocab)], capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"{mode}: {done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--words", type=int, default=2_000_000)
    p.add_argument("--dim", type=int, default=300)
    p.add_argument("--vocab", type=int, default=50_000)
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        mode, path, dim, vocab = a.child
        return child(mode, path, int(dim), int(vocab))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "glove-shaped.txt"
        started = time.perf_counter()
        generate(path, a.words, a.dim)
        gb = path.stat().st_size / 1e9
        print(
            f"generated {path.name}: {a.words:,} words x {a.dim}, {gb:.2f} GB, {MALFORMED} malformed lines "
            f"({time.perf_counter() - started:.0f} s)"
        )
        base = measure("baseline", path, a.dim, a.vocab)
        load = measure("loader", path, a.dim, a.vocab)
    import pandas as pd  # here, not at the top: a child's peak RSS counts its imports

    rows = [
        {
            "": name,
            "seconds": f"{r['seconds']:.1f}",
            "MB/s": f"{gb * 1000 / r['seconds']:.0f}",
            "s/GB": f"{r['seconds'] / gb:.1f}",
            "peak RSS MB": f"{r['peak_rss_mb']:.0f}",
        }
        for name, r in (("read lines only (baseline)", base), ("load_pretrained", load))
    ]
    print(pd.DataFrame(rows).to_markdown(index=False, disable_numparse=True, colalign=("left",) + ("right",) * 4))
    print(
        f"loader / baseline time: {load['seconds'] / base['seconds']:.2f}x; vocabulary coverage {load['coverage']}, "
        f"{load['words']:,} words read, {load['malformed']} malformed lines reported"
    )


if __name__ == "__main__":
    main()
