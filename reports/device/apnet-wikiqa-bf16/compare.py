"""NOTES.md's table: this record's bf16 AP-CNN runs against apnet-wikiqa's (torch's default arithmetic),
seed by seed, from each run's metrics.json (the dev-selected epoch).

    python reports/device/apnet-wikiqa-bf16/compare.py
"""

import json
import statistics
from pathlib import Path

HERE = Path(__file__).parent
RUNS = "runs/wikiqa/apnet_ap_cnn_wikiqa"


def metrics(record: Path) -> dict[int, dict]:
    return {int(p.parent.name[4:]): json.loads(p.read_text()) for p in (record / RUNS).glob("seed*/metrics.json")}


torch, bf16 = metrics(HERE.parent / "apnet-wikiqa"), metrics(HERE)
seeds = sorted(torch.keys() & bf16.keys())
print("| seed | test MAP torch | test MAP bf16 | difference | dev MAP torch | dev MAP bf16 |")
print("|---|---|---|---|---|---|")
for s in seeds:
    t, b = torch[s], bf16[s]
    diff = b["test"]["MAP"] - t["test"]["MAP"]
    print(
        f"| {s} | {t['test']['MAP']:.4f} | {b['test']['MAP']:.4f} | {diff:+.4f} "
        f"| {t['dev']['MAP']:.4f} | {b['dev']['MAP']:.4f} |"
    )


def mean_std(runs: dict, split: str, metric: str) -> str:
    values = [runs[s][split][metric] for s in seeds]
    return f"{statistics.mean(values):.4f} ± {statistics.stdev(values):.4f}"


for split, metric in (("test", "MAP"), ("test", "MRR"), ("dev", "MAP")):
    print(f"{split} {metric}: torch {mean_std(torch, split, metric)}, bf16 {mean_std(bf16, split, metric)}")
