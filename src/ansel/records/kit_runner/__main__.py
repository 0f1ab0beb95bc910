"""The runner's command line: ``run`` (what ``gpu-kit/run.sh`` calls: every record of the kit against
the deadline, then the archive) and the ``measure`` and ``speed`` phases that ``run`` starts in child
processes."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from ansel.records.kit_runner.archive import ARCHIVE_MARGIN_S, archive
from ansel.records.kit_runner.gpu_monitor import GpuMonitor, device_info
from ansel.records.kit_runner.lease import Lease
from ansel.records.kit_runner.phases import measure_costs, run_bench, run_step_times, run_sub_command, time_speed
from ansel.records.kit_runner.trainings import GPU_PARALLEL, cuda_available, run_trainings
from ansel.records.layout import KIT_FILE


def run(a: argparse.Namespace) -> None:
    """Every record of the kit in ``a.kit``: its phases in order, ``device.json`` (this session added to
    an earlier lease's), then the archive into ``a.out``."""
    kit_dir, started = Path(a.kit), time.time()
    kit = json.loads((kit_dir / KIT_FILE).read_text())
    work = kit_dir / "work"
    work.mkdir(exist_ok=True)
    lease = Lease(kit_dir, kit["commit"] or "", started + a.deadline_s - a.archive_margin_s, work / "log.txt")
    lease.stop_on_signals()
    device = a.device if a.device != "auto" else ("cuda" if cuda_available() else "cpu")
    info = device_info(device)
    lease.log(
        f"kit of {kit['commit']}: {', '.join(r['name'] for r in kit['records'])} on {info.get('gpu', 'the CPU')}, "
        f"deadline {a.deadline_s:.0f} s"
    )
    monitor = GpuMonitor()
    monitor.start()
    for rec in kit["records"]:
        base = work / rec["name"]
        phases = record_phases(rec, lease, device, a, base)
        for phase in phases:
            phase |= monitor.window(phase["start"], phase["end"])
            phase["seconds"] = round(phase["end"] - phase["start"], 1)
            lease.log(
                f"{rec['name']}: {phase['phase']} {phase.get('status', '')} in {phase['seconds']} s "
                f"{'(GPU busy %.0f%% on average)' % phase['gpu_util_mean'] if 'gpu_util_mean' in phase else ''}"
            )
        previous = json.loads((base / "device.json").read_text()) if (base / "device.json").exists() else {}
        base.mkdir(parents=True, exist_ok=True)
        session = {"started": started, "phases": phases}
        about = {"kit_commit": kit["commit"], "deadline_s": a.deadline_s, "started": started, "finished": time.time()}
        (base / "device.json").write_text(
            json.dumps({**info, **about, "sessions": [*previous.get("sessions", []), session]}, indent=1) + "\n"
        )
    monitor.stop()
    for path in archive(kit, kit_dir, Path(a.out), started):
        lease.log(f"archive: {path} ({path.stat().st_size / 2**20:.1f} MiB)")


def record_phases(rec: dict, lease: Lease, device: str, a: argparse.Namespace, base: Path) -> list[dict]:
    """A record's phases in order, none started after the deadline: its benchmarks, its speed entry, its
    cost measurement and its tables' step times alone, then its trainings."""
    phases = []
    for bench in rec["bench"]:
        if not lease.out_of_time():
            phases.append(run_bench(bench, lease, device, base / "bench"))
    if rec.get("speed") and not lease.out_of_time():
        phases.append(run_sub_command("speed", rec["name"], lease, device, base / "bench" / "speed.txt"))
    if rec["measure"] and not lease.out_of_time():
        phases.append(run_sub_command("measure", rec["name"], lease, device, base / "costs" / "measure.log"))
    for item in rec.get("step_times", []):
        if not lease.out_of_time() and not (base / item["file"]).exists():
            phases.append(run_step_times(item, lease, device, base))
    if rec["runs"]:
        phases.append(run_trainings(rec, lease, a.device, a.jobs, base, a.gpu_parallel))
    return phases


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ansel.records.kit_runner",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="the kit's records against the deadline, then one archive (gpu-kit/run.sh)")
    r.add_argument("--kit", default=".", help="the kit's folder (default: here)")
    r.add_argument("--deadline-s", type=float, default=540, help="stop everything by then (seconds from the start)")
    r.add_argument("--device", default="auto", help="auto (the runs' own: CUDA where there is one), cuda or cpu")
    r.add_argument("--jobs", type=int, help="trainings at once (default: from measured memory and cores)")
    r.add_argument(
        "--gpu-parallel",
        type=float,
        default=GPU_PARALLEL,
        help="runs' worth of work one GPU does at a time when shared (admission only; default "
        f"{GPU_PARALLEL}, AP on WikiQA; QA-CNN on TREC-QA measured about 4)",
    )
    r.add_argument("--out", default=os.environ.get("OUT") or "out", help="where the archive goes (default $OUT)")
    r.add_argument(
        "--archive-margin-s",
        type=float,
        default=ARCHIVE_MARGIN_S,
        help="kept back from the deadline to stop the jobs and write the archive",
    )
    r.set_defaults(func=run)
    for name, phase, what in (
        ("measure", measure_costs, "a record's shapes' costs into work/<record>/costs/"),
        ("speed", time_speed, "a record's speed entry into work/<record>/bench/"),
    ):
        s = sub.add_parser(name, help=f"{what} (a child process of run)")
        s.add_argument("--kit", default=".", help="the kit's folder (default: here)")
        s.add_argument("record")
        s.add_argument("device")
        s.add_argument("until", type=float, help="the deadline (seconds since the epoch)")
        s.set_defaults(func=lambda a, phase=phase: phase(Path(a.kit), a.record, a.device, a.until))
    return p


def main(argv: list[str] | None = None) -> None:
    a = parser().parse_args(argv)
    a.func(a)


if __name__ == "__main__":
    main()
