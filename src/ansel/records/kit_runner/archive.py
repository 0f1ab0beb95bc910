"""One archive of what a runner call made, in the records' layout: every record's measurements,
benchmarks and finished runs, the state of unfinished runs as far as it can come back, split into
parts of what the device tool brings back."""

from __future__ import annotations

import datetime
import tarfile
from pathlib import Path

from ansel.records.layout import KIT_FILE, LAST_RUN_FILES, RUN_FILES, finished, gzip_file

PART_BYTES = 15 * 2**20  # the device tool brings back files of at most 16 MiB
STATE_BYTES = 40 * 2**20  # unfinished runs' state.pt travel back up to this much in all (64 MiB come back)
ARCHIVE_MARGIN_S = 20  # kept back from the deadline to stop jobs and write the archive


def archive(kit: dict, kit_dir: Path, out: Path, started: float, part_bytes: int = PART_BYTES) -> list[Path]:
    """One .tar.gz of every record's files under ``kit_dir/work`` (split into parts of ``part_bytes``
    where larger), named for the records and ``started``."""
    work = kit_dir / "work"
    stamp = datetime.datetime.fromtimestamp(started, datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    name = (
        "record-" + "_".join(r["name"] for r in kit["records"]) + f"-{stamp}.tar.gz"
    )  # names the device tool brings back
    out.mkdir(parents=True, exist_ok=True)
    path, state_bytes = out / name, 0
    with tarfile.open(path, "w:gz") as tar:
        tar.add(kit_dir / KIT_FILE, arcname=KIT_FILE)
        if (work / "log.txt").exists():
            tar.add(work / "log.txt", arcname="log.txt")
        for rec in kit["records"]:
            base = work / rec["name"]
            for extra in ("device.json", "costs", "bench", "results"):  # results/benchmarks: step times
                if (base / extra).exists():
                    tar.add(base / extra, arcname=f"{rec['name']}/{extra}")
            for run in rec["runs"]:
                run_dir = base / run["dir"]
                if not run_dir.exists():
                    continue
                for trec in ("run.trec", "run_last.trec"):
                    if (run_dir / trec).exists():
                        gzip_file(run_dir / trec, run_dir / f"{trec}.gz")
                names = [*RUN_FILES, *LAST_RUN_FILES] if finished(run_dir) else ["config.json", "job.log"]
                state = run_dir / "state.pt"
                if not finished(run_dir) and state.exists() and state_bytes + state.stat().st_size <= STATE_BYTES:
                    names.append("state.pt")
                    state_bytes += state.stat().st_size
                for f in names:
                    if (run_dir / f).exists():
                        tar.add(run_dir / f, arcname=f"{rec['name']}/{run['dir']}/{f}")
    return split(path, part_bytes)


def split(path: Path, part_bytes: int) -> list[Path]:
    """``path`` itself where it is at most ``part_bytes``, else its parts ``<name>.partNN`` (it removed)."""
    if path.stat().st_size <= part_bytes:
        return [path]
    parts = []
    with open(path, "rb") as f:
        for i, chunk in enumerate(iter(lambda: f.read(part_bytes), b"")):
            part = path.with_name(f"{path.name}.part{i:02d}")
            part.write_bytes(chunk)
            parts.append(part)
    path.unlink()
    return parts
