"""A device record's README, written from what the record holds: its leases (device, kit, minutes,
each phase's time and GPU use), its measured costs, its runs finished and cut, what was rendered and
what still waits for runs, its benchmarks' printed figures."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from ansel.files import write_text_atomic
from ansel.records.declared import declared_records
from ansel.records.layout import LEASES_FILE


def write_readme(rec: dict, dst: Path, waiting: dict[str, list[str]] | None = None) -> None:
    """The README of the device record ``dst`` (``rec``: its kit entry; ``waiting``: {item: runs it waits for})."""
    leases = json.loads((dst / LEASES_FILE).read_text()) if (dst / LEASES_FILE).exists() else []
    minutes = [e["device_minutes"] for e in leases if e.get("device_minutes")]
    lines = [
        f"# Device record `{rec['name']}`",
        "",
        rec.get("about") or declared_records().get(rec["name"], {}).get("about", ""),
        "",
        f"- preset {rec['preset']}; made by: `make gpu-kit RECORD={rec['name']}`, `bash gpu-kit/run.sh`, "
        "`make gpu-unpack`",
        f"- leases: {len(leases)}; device-minutes: {sum(minutes):.1f}"
        + (f" ({len(leases) - len(minutes)} not given)" if len(minutes) < len(leases) else "")
        + " (a lease shared by several records counts whole in each)",
        "",
        "## Leases",
        "",
    ]
    shown: set[float] = set()  # a kit run again carries its earlier sessions: each is listed once
    for lease in leases:
        when = datetime.datetime.fromtimestamp(lease["started"], datetime.UTC) if lease.get("started") else None
        others = [r for r in lease.get("records", []) if r != rec["name"]]
        lines += [
            f"### {when:%Y-%m-%d %H:%M} UTC" if when else "### (no start time)",
            "",
            f"- device: {_device(lease)}, torch "
            f"{lease.get('torch', '?')}, CUDA {lease.get('cuda') or '-'}, {lease.get('cores', '?')} cores",
            f"- kit of commit {lease.get('kit_commit')}"
            + (f", with {', '.join(f'`{o}`' for o in others)}" if others else ""),
            f"- device-minutes: {lease['device_minutes']:.1f}"
            if lease.get("device_minutes")
            else "- device-minutes: not given",
            f"- runner log: `logs/{lease['archive'].replace('.tar.gz', '.txt')}`",
        ]
        for session in lease.get("sessions") or []:
            if session.get("started") is not None and session["started"] in shown:
                continue
            shown.add(session.get("started"))
            for phase in session["phases"]:
                lines.append(_phase_line(phase))
        lines.append("")
    lines += ["## What is here", ""]
    for vectors, note in (rec.get("pruned") or {}).items():
        lines.append(
            f"- `{vectors}` travelled cut to {note}: the seeds' initial weights after the embedding "
            "table are other draws than a run on the whole table would make"
        )
    costs = sorted(dst.glob("costs/*.json"))
    for path in costs:
        n = len(json.loads(path.read_text()))
        lines.append(f"- `costs/{path.name}`: {n} run shapes measured (read by `ansel plan` by default)")
    if rec["measure"]:
        measured = {k for p in costs for k in json.loads(p.read_text())}
        lines.append(f"- shapes in the kit: {len(rec['measure']['configs'])}; measured so far: {len(measured)}")
    runs = sorted(dst.glob("runs/*/*/seed*"))
    if runs:
        done = [r for r in runs if (r / "metrics.json").exists()]
        cut = [r for r in runs if r not in done]
        kept = [r for r in cut if (r / "state.pt").exists()]
        lines.append(
            f"- runs here: {len(done)} finished, {len(cut)} unfinished ({len(kept)} with a state.pt that "
            "resumes them in the next kit of this record built on the machine that unpacked it: never "
            f"committed, a clone starts them again; {len(cut) - len(kept)} start again: no state of theirs "
            "came back, cut before a first checkpoint or too large to travel)"
        )
    rendered = sorted(p.name for p in dst.glob("*.md") if p.name not in ("README.md", "NOTES.md"))
    if rendered:
        lines.append("- rendered by the normal table and figure rules: " + ", ".join(f"`{n}`" for n in rendered))
    for item, missing in (waiting or {}).items():
        lines.append(f"- `{item}` waits for {len(missing)} runs no device record holds yet (e.g. `{missing[0]}`)")
    if (dst / "NOTES.md").exists():
        lines.append("- what the numbers say: NOTES.md")
    for bench in sorted(dst.glob("bench/*.txt")):
        lines += ["", f"## `{bench.name}`", "", "```", bench.read_text().rstrip(), "```"]
    write_text_atomic(dst / "README.md", "\n".join(lines) + "\n")


def _device(lease: dict) -> str:
    """The GPU with nvidia-smi's line, or the CPU with its model and instruction set where known."""
    if lease.get("gpu"):
        return f"{lease['gpu']} ({lease.get('nvidia_smi') or ''})"
    known = [v for v in (lease.get("cpu"), lease.get("cpu_capability")) if v]
    return f"CPU ({', '.join(known)})" if known else "CPU"


def _phase_line(phase: dict) -> str:
    util = (
        f", GPU busy {phase['gpu_util_mean']}% on average (max {phase['gpu_util_max']}%), "
        f"memory up to {phase['gpu_mem_max_mb']:.0f} MB"
        if "gpu_util_mean" in phase
        else ""
    )
    extra = ""
    if "runs" in phase:
        counts: dict[str, int] = {}
        for status in phase["runs"].values():
            counts[status] = counts.get(status, 0) + 1
        extra = f" ({phase['jobs']} at a time: " + ", ".join(f"{n} {s}" for s, n in counts.items()) + ")"
    return f"- {phase['phase']}: {phase.get('status', 'done')} in {phase['seconds']} s{util}{extra}"
