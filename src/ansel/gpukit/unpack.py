"""Place a kit's archive as records (CPU, after the lease): ``ansel gpu-unpack ARCHIVE``.

Each record goes to ``reports/device/<record>/`` in the layout of every record (``runs/<dataset>/
<model>/seed<k>/``, ``costs/``, ``bench/``, ``device.json``), an earlier unpack of the same record
kept where this one has nothing newer; then its README is written from what the archive holds.
A record with finished runs has its tables rendered from them (``render_record_tables``).
"""
from __future__ import annotations

import datetime
import io
import json
import re
import shutil
import tarfile
import tempfile
from pathlib import Path

from ansel.config import root
from ansel.gpukit import KIT_FILE
from ansel.gpukit.build import records

DEVICE_DIR = "reports/device"
LEASES = "leases.json"


def read_archive(files: list[Path]) -> tarfile.TarFile:
    """The archive, from its parts joined in the order given."""
    data = b"".join(f.read_bytes() for f in files)
    return tarfile.open(fileobj=io.BytesIO(data), mode="r:gz")


def unpack(files: list[Path], device_minutes: float | None = None, render: bool = True,
           dest: Path | None = None) -> list[Path]:
    """Each record of the archive into ``dest`` (default ``reports/device/``) as ``<record>/``."""
    dest = dest or root() / DEVICE_DIR
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise SystemExit(f"ansel gpu-unpack: no such file: {', '.join(missing)}")
    placed = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            with read_archive(files) as tar:
                tar.extractall(tmp, filter="data")
        except (tarfile.TarError, EOFError, OSError) as e:  # a part missing, out of order, or cut short
            raise SystemExit(f"ansel gpu-unpack: {', '.join(map(str, files))}: not a whole kit archive "
                             f"(give every .partNN, in order): {e}") from None
        tmp = Path(tmp)
        if not (tmp / KIT_FILE).exists():
            raise SystemExit(f"ansel gpu-unpack: {', '.join(map(str, files))}: no {KIT_FILE}: not made by gpu-kit/run.sh")
        kit = json.loads((tmp / KIT_FILE).read_text())
        for rec in kit["records"]:
            src, dst = tmp / rec["name"], dest / rec["name"]
            if not src.exists():
                continue
            _merge(src, dst)
            add_lease(dst, lease_entry(files[0], kit, src, device_minutes),
                      (tmp / "log.txt").read_text() if (tmp / "log.txt").exists() else "")
            about = {k: rec.get(k) for k in ("name", "preset", "config", "about", "items")}
            (dst / "record.json").write_text(json.dumps(about, indent=1) + "\n")
            waiting = {}
            if render and rec.get("items"):
                from ansel.gpukit.tables import render_record_tables

                _, waiting = render_record_tables(rec, dst, siblings(dest, rec))
            write_readme(rec, dst, waiting)
            placed.append(dst)
            print(f"{dst}: placed")
    return placed


def siblings(dest: Path, rec: dict) -> list[Path]:
    """The other records under ``dest`` of the same preset and overrides (their runs fill the same tables)."""
    found = []
    for path in sorted(dest.glob("*/record.json")):
        other = json.loads(path.read_text())
        if other["name"] != rec["name"] and other["preset"] == rec["preset"] and other.get("config") == rec.get("config"):
            found.append(path.parent)
    return found


def lease_entry(archive: Path, kit: dict, src: Path, device_minutes: float | None) -> dict:
    """What one lease did for a record: its archive, kit, device and phases (``device.json``)."""
    info = json.loads((src / "device.json").read_text()) if (src / "device.json").exists() else {}
    return {"archive": re.sub(r"\.part\d+$", "", archive.name), "kit_commit": kit.get("commit"),
            "records": [r["name"] for r in kit["records"]], "device_minutes": device_minutes,
            **{k: info.get(k) for k in ("started", "gpu", "nvidia_smi", "torch", "cuda", "cores", "sessions")}}


def add_lease(dst: Path, entry: dict, log: str) -> None:
    """``leases.json`` (the record's leases in time order, one per archive: unpacking again replaces
    it) and the lease's runner log under ``logs/``."""
    path = dst / LEASES
    leases = [e for e in (json.loads(path.read_text()) if path.exists() else []) if e["archive"] != entry["archive"]]
    leases = sorted([*leases, entry], key=lambda e: e.get("started") or 0)
    path.write_text(json.dumps(leases, indent=1) + "\n")
    if log:
        (dst / "logs").mkdir(exist_ok=True)
        (dst / "logs" / entry["archive"].replace(".tar.gz", ".txt")).write_text(log)


def _merge(src: Path, dst: Path) -> None:
    """Copy ``src`` over ``dst``: a finished run replaces the state of its unfinished self."""
    for f in sorted(src.rglob("*")):
        if f.is_dir():
            continue
        target = dst / f.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, target)
        if f.name == "metrics.json":
            (target.parent / "state.pt").unlink(missing_ok=True)
            (target.parent / "job.log").unlink(missing_ok=True)


def write_readme(rec: dict, dst: Path, waiting: dict[str, list[str]] | None = None) -> None:
    leases = json.loads((dst / LEASES).read_text()) if (dst / LEASES).exists() else []
    minutes = [e["device_minutes"] for e in leases if e.get("device_minutes")]
    lines = [f"# Device record `{rec['name']}`", "",
             rec.get("about") or records().get(rec["name"], {}).get("about", ""), "",
             f"- preset {rec['preset']}; made by: `make gpu-kit RECORD={rec['name']}`, `bash gpu-kit/run.sh`, "
             "`make gpu-unpack`",
             f"- leases: {len(leases)}; device-minutes: {sum(minutes):.1f}"
             + (f" ({len(leases) - len(minutes)} not given)" if len(minutes) < len(leases) else "")
             + " (a lease shared by several records counts whole in each)", "",
             "## Leases", ""]
    for lease in leases:
        when = datetime.datetime.fromtimestamp(lease["started"], datetime.UTC) if lease.get("started") else None
        others = [r for r in lease.get("records", []) if r != rec["name"]]
        lines += [f"### {when:%Y-%m-%d %H:%M} UTC" if when else "### (no start time)", "",
                  f"- device: {lease.get('gpu') or 'CPU'} ({lease.get('nvidia_smi') or ''}), torch "
                  f"{lease.get('torch', '?')}, CUDA {lease.get('cuda') or '-'}, {lease.get('cores', '?')} cores",
                  f"- kit of commit {lease.get('kit_commit')}"
                  + (f", with {', '.join(f'`{o}`' for o in others)}" if others else ""),
                  f"- device-minutes: {lease['device_minutes']:.1f}" if lease.get("device_minutes") else
                  "- device-minutes: not given",
                  f"- runner log: `logs/{lease['archive'].replace('.tar.gz', '.txt')}`"]
        for session in lease.get("sessions") or []:
            for phase in session["phases"]:
                lines.append(_phase_line(phase))
        lines.append("")
    lines += ["## What is here", ""]
    for vectors, note in (rec.get("pruned") or {}).items():
        lines.append(f"- `{vectors}` travelled cut to {note}: the seeds' initial weights after the embedding "
                     "table are other draws than a run on the whole table would make")
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
        lines.append(f"- runs here: {len(done)} finished, {len(cut)} unfinished ({len(kept)} with the state.pt that "
                     f"resumes them in the next kit of this record; {len(cut) - len(kept)} start again: their state "
                     "was too large to come back)")
    rendered = sorted(p.name for p in dst.glob("*.md") if p.name not in ("README.md", "NOTES.md"))
    if rendered:
        lines.append("- rendered by the normal table and figure rules: " + ", ".join(f"`{n}`" for n in rendered))
    for item, missing in (waiting or {}).items():
        lines.append(f"- `{item}` waits for {len(missing)} runs no device record holds yet (e.g. `{missing[0]}`)")
    if (dst / "NOTES.md").exists():
        lines.append("- what the numbers say: NOTES.md")
    for bench in sorted(dst.glob("bench/*.txt")):
        lines += ["", f"## `{bench.name}`", "", "```", bench.read_text().rstrip(), "```"]
    (dst / "README.md").write_text("\n".join(lines) + "\n")


def _phase_line(phase: dict) -> str:
    util = (f", GPU busy {phase['gpu_util_mean']}% on average (max {phase['gpu_util_max']}%), "
            f"memory up to {phase['gpu_mem_max_mb']:.0f} MB" if "gpu_util_mean" in phase else "")
    extra = ""
    if "runs" in phase:
        counts: dict[str, int] = {}
        for status in phase["runs"].values():
            counts[status] = counts.get(status, 0) + 1
        extra = f" ({phase['jobs']} at a time: " + ", ".join(f"{n} {s}" for s, n in counts.items()) + ")"
    return f"- {phase['phase']}: {phase.get('status', 'done')} in {phase['seconds']} s{util}{extra}"
