"""speed.md: the speed entry's figures per shape, from bench/speed.json of gpu-speed and gpu-speed-warm
(its second look: GGSA and iGGSA in bf16 after the fix, dev scoring timed warm).

    python reports/device/gpu-speed/table.py
"""

import json
from pathlib import Path

import pandas as pd

HERE = Path(__file__).parent
first = json.loads((HERE / "bench/speed.json").read_text())
warm = json.loads((HERE.parent / "gpu-speed-warm/bench/speed.json").read_text())


def ms(v: dict | None) -> str:
    return "failed" if v is None else f"{v['seconds_per_batch'] * 1000:.1f}"


rows = []
for key, e in sorted(first.items(), key=lambda kv: (kv[1]["dataset"], kv[1]["model"])):
    v, w = e["variants"], warm.get(key, {}).get("variants", {})
    fp32 = v["fp32"]["seconds_per_batch"]
    bf16 = v.get("bf16") or w.get("bf16")
    stacked = {p: v.get(f"{p} stacked x5") for p in ("fp32", "tf32", "bf16")}
    best = min([x["seconds_per_batch"] / x["seeds"] for x in [v.get("tf32"), bf16, *stacked.values()] if x] or [fp32])
    rows.append(
        {
            "shape (a run of it)": f"{e['dataset']} {e['model']}",
            "fp32 ms/step": ms(v["fp32"]),
            "tf32": ms(v.get("tf32")),
            "bf16": ms(bf16) + ("¹" if "bf16" not in v and bf16 else ""),
            "5 seeds stacked, ms per seed-step (fp32 / tf32 / bf16)": " / ".join(
                f"{x['seconds_per_batch'] / 5 * 1000:.1f}" for x in stacked.values() if x
            )
            or "cannot stack: " + next(iter(e["failed"].values()), "")[:60].split(":")[0],
            "best vs fp32": f"{fp32 / best:.2f}x",
            "dev s, first / warm (fp32)": (
                f"{w['fp32']['dev_first_seconds']:.1f} / {w['fp32']['dev_seconds']:.1f}"
                if "fp32" in w
                else f"{v['fp32']['dev_seconds']:.1f} / -"
            ),
            "dev s (tf32 / bf16)": f"{v['tf32']['dev_seconds']:.1f} / {(bf16 or {}).get('dev_seconds', float('nan')):.1f}",
        }
    )
table = pd.DataFrame(rows).to_markdown(index=False)
note = (
    "\n\n¹ gpu-speed-warm (after the grouped attention's backward was fixed for autocast).\n"
    "Steps: median of 3 rounds of 5 steps, the variants taking turns in one process (random initial vectors). "
    "Dev: one scoring of 100 dev questions scaled to the split; gpu-speed timed each variant's once, fp32 first "
    "(its first scoring in the process), gpu-speed-warm the fp32 variant twice (first / warm).\n"
)
(HERE / "speed.md").write_text(table + note)
print(table + note)
