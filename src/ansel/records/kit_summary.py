"""What a packed kit holds and what the planner says it costs on the device, and whether it fits what
the device tool carries (printed by ``ansel gpu-kit``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ansel.config import root
from ansel.jsonfile import read_json
from ansel.plan import shape
from ansel.records.kit_runner.trainings import GPU_PARALLEL, training_jobs

SIZE_LIMIT_MB = 60  # the device tool carries 64 MiB of working tree in all


def size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def summary(kit: dict, out: Path) -> str:
    """What the kit holds and what the planner says it costs on the device."""
    lines = []
    on = f" on {kit['priced_on']}" if kit["priced_on"] else ""  # one GPU's costs price the whole kit
    for rec in kit["records"]:
        parts = []
        if rec["bench"]:
            parts.append(f"{len(rec['bench'])} benchmark(s)")
        if rec["measure"]:
            parts.append(f"{len(rec['measure']['configs'])} shapes to measure (none that earlier leases measured)")
        if rec.get("speed"):
            s = rec["speed"]
            timed = out / "work" / rec["name"] / "bench" / "speed.json"
            done = set(read_json(timed)) if timed.exists() else set()
            untimed = [c for c in s["configs"] if shape(c) not in done]
            ways = (
                ["alone"]
                + (["compiled"] if s.get("compiled") else [])
                + [f"{s['seeds']} seeds stacked"] * (s["seeds"] > 1)
            )
            parts.append(
                f"{len(s['configs'])} shapes timed in {', '.join(s['precisions'])}, {', '.join(ways)}, "
                f"{len(s['configs']) - len(untimed)} of them by earlier leases (not again); "
                f"{len(untimed)} left: {', '.join(c['model'] for c in untimed)}"
            )
        if rec["runs"]:
            jobs = training_jobs(rec, out / "work" / rec["name"])
            left = sum(len(j["runs"]) for j in jobs)
            known = [j for j in jobs if j["planned_minutes"] is not None]
            minutes = sum(j["planned_minutes"] for j in known)
            stacks = [j for j in jobs if len(j["runs"]) > 1]
            in_stacks = f" ({sum(len(j['runs']) for j in stacks)} in {len(stacks)} stacks of seeds)" if stacks else ""
            parts.append(
                f"{len(rec['runs'])} runs ({len(rec['runs']) - left} finished by earlier leases); "
                f"the {left} left{in_stacks}: {minutes:.1f} device-minutes{on} one run or stack at a time for the "
                f"{sum(len(j['runs']) for j in known)} of a measured shape (about {minutes / GPU_PARALLEL:.1f} "
                f"on one GPU shared as measured), {left - sum(len(j['runs']) for j in known)} unmeasured"
            )
            if len(known) < len(jobs):
                n = len(rec["measure"]["configs"]) if rec["measure"] else 0
                first = (
                    f"this kit measures {n} shapes first (unpack it before the next kit)"
                    if n
                    else "measure their shapes first (a `measure` key, or record costs-full) and unpack that"
                )
                parts.append(
                    "unmeasured runs start blind (one that cannot end before the deadline at its pace, "
                    f"its state too large to come back, is stopped at its second epoch): {first}"
                )
        lines.append(f"{rec['name']}: {'; '.join(parts)}")
    size = size_mb(out)
    lines.append(f"kit {out}: {size:.1f} MiB (limit {SIZE_LIMIT_MB})")
    tree = _tree_mb()
    if tree is not None:
        lines.append(
            f"with it travels the working tree without reports/ (`make gpu-travel`): {tree:.1f} MiB; "
            f"together {tree + size:.1f} of the device tool's 64 MiB"
        )
    return "\n".join(lines)


def _tree_mb() -> float | None:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root(),
            capture_output=True,
            check=True,
        ).stdout.split(b"\0")
    except (OSError, subprocess.CalledProcessError):
        return None
    paths = [root() / os.fsdecode(p) for p in listed if p and not p.startswith(b"reports/")]
    return sum(p.stat().st_size for p in paths if p.is_file()) / 2**20
