"""A record's trainings on the device: admission (a run starts only if it should end before the
deadline, sharing the device with those running), how many at once (from the device's free memory
and the shapes' measured peaks), and pacing (a run that will not end in time, its state too large to
come back, is stopped and its model's other runs are not started)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

from ansel.records.kit_runner.archive import ARCHIVE_MARGIN_S, STATE_BYTES
from ansel.records.kit_runner.commands import run_commands, with_device
from ansel.records.kit_runner.lease import Lease, stop_process
from ansel.records.layout import finished

# Runs sharing one GPU slow each other once it is busy: measured on an H200, 12 AP WikiQA trainings at once
# (GPU 92% busy) each ran ~5x slower than alone, i.e. about 2.4 runs' worth of work at a time (the kit's
# packing, which ``ansel plan`` prices leases at).
GPU_PARALLEL = 2.4
DEFAULT_PEAK_MB = 4096  # a training's device memory where no peak was measured


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def job_count(runs: list[dict], device: str, jobs: int | None) -> tuple[int, int]:
    """(concurrent trainings, threads each): ``jobs`` or as many as the device's free memory holds
    at the largest measured peak (x1.25), at most one per two cores; the cores shared out."""
    cores = os.cpu_count() or 1
    if jobs is None:
        if device.startswith("cuda") or (device == "auto" and cuda_available()):
            import torch

            free_mb = torch.cuda.mem_get_info()[0] / 2**20
            peak = max([r["peak_mb"] or DEFAULT_PEAK_MB for r in runs] or [DEFAULT_PEAK_MB]) * 1.25
            jobs = max(1, min(int(free_mb * 0.9 // peak), cores // 2))
        else:
            jobs = max(1, cores // 2)
    jobs = max(1, min(jobs, len(runs) or 1))
    return jobs, max(1, cores // jobs)


def run_trainings(
    rec: dict, lease: Lease, device: str, jobs: int | None, work: Path, parallel: float = GPU_PARALLEL
) -> dict:
    """Every run of the record not finished yet (under ``work``, the record's folder), ``jobs`` at a time,
    each trained then evaluated; the longest that should still end before the deadline first."""
    started = time.time()
    todo = [r for r in rec["runs"] if not finished(work / r["dir"])]
    todo.sort(key=lambda r: -(r["planned_minutes"] or 0))  # the longest first: the shortest tail
    n_jobs, threads = job_count(todo, device, jobs)
    lease.log(
        f"{rec['name']}: {len(todo)} of {len(rec['runs'])} runs to train, {n_jobs} at a time, {threads} threads each"
    )
    running: dict[str, subprocess.Popen] = {}
    progress: dict[str, EpochClock] = {}
    hopeless: set[str] = set()  # models whose runs cannot end in time nor come back unfinished
    status: dict[str, str] = {r["dir"]: "finished before" for r in rec["runs"] if r not in todo}
    while todo or running:
        for key, proc in list(running.items()):
            if proc.poll() is not None:
                status[key] = "finished" if proc.returncode == 0 else f"failed (rc {proc.returncode})"
                lease.log(f"{key}: {status[key]}")
                del running[key]
            elif (why := progress[key].hopeless(work / key, lease.until)) is not None:
                stop_process(proc)
                status[key] = "stopped"
                hopeless.add(progress[key].model)
                lease.log(f"{key}: stopped, {why}")
                del running[key]
        todo = drop_hopeless(todo, hopeless, status)
        if lease.out_of_time():
            for key, proc in running.items():
                stop_process(proc)
                status[key] = "cut"
                lease.log(f"{key}: cut by the deadline")
            status.update({r["dir"]: "not started" for r in todo})
            break
        while todo and len(running) < n_jobs:
            run = next((r for r in todo if fits(r, len(running) + 1, lease.until, parallel)), None)
            if run is None:
                if not running:  # none would end even alone: nothing frees the device for them
                    lease.log(
                        f"{len(todo)} runs not started: the shortest, {todo[-1]['planned_minutes']:.1f} planned "
                        "device-minutes, would not end before the deadline"
                    )
                    status.update({r["dir"]: "not started" for r in todo})
                    todo = []
                break
            todo.remove(run)
            job_log = work / run["dir"] / "job.log"  # an earlier lease's lines stay in it, above this one's
            since = job_log.stat().st_size if job_log.exists() else 0
            running[run["dir"]] = start_run(run, lease, device, threads, work)
            progress[run["dir"]] = EpochClock(run["config"]["model"], run["config"]["train"]["epochs"], since)
        time.sleep(0.5)
    return {"phase": "train", "start": started, "end": time.time(), "jobs": n_jobs, "threads": threads, "runs": status}


class EpochClock:
    """A running training's pace, from the epochs its job.log reports (``epoch N: ...``) as they come."""

    def __init__(self, model: str, epochs: int, since: int = 0, state_bytes: int = STATE_BYTES):
        self.model, self.epochs = model, epochs
        self.since = since  # job.log's size when this training started: earlier leases' lines are not its pace
        self.state_bytes = state_bytes  # the most state.pt that comes back unfinished
        self.seen: list[tuple[float, int]] = []  # (when first seen, last finished epoch)

    def hopeless(self, run_dir: Path, until: float) -> str | None:
        """Why the run is not worth its device time (None: it is): it will not end before ``until``
        at its pace so far, and its state.pt is too large to come back and resume it."""
        epoch = last_epoch(run_dir / "job.log", self.since)
        if epoch is None or (self.seen and self.seen[-1][1] >= epoch):
            return None
        self.seen.append((time.time(), epoch))
        if len(self.seen) < 2:
            return None
        (t0, e0), (t1, e1) = self.seen[0], self.seen[-1]
        ends = t1 + (t1 - t0) / (e1 - e0) * (self.epochs - e1)
        state = run_dir / "state.pt"
        state_mb = state.stat().st_size / 2**20 if state.exists() else 0
        if ends <= until - ARCHIVE_MARGIN_S or state_mb <= self.state_bytes / 2**20:
            return None
        return (
            f"epoch {e1} of {self.epochs} would end {ends - until:.0f} s after the deadline at its pace "
            f"and its state ({state_mb:.0f} MiB) cannot come back: its model's other runs are not started"
        )


def last_epoch(job_log: Path, since: int = 0) -> int | None:
    """The last ``epoch N:`` line's N in ``job_log`` after byte ``since`` (None: no epoch yet)."""
    if not job_log.exists():
        return None
    with open(job_log, "rb") as f:
        f.seek(since)
        text = f.read().decode(errors="replace")
    epochs = [int(m.group(1)) for m in re.finditer(r"^epoch (\d+):", text, re.M)]
    return epochs[-1] if epochs else None


def drop_hopeless(todo: list[dict], hopeless: set[str], status: dict[str, str]) -> list[dict]:
    """``todo`` without the runs of ``hopeless`` models (marked "not started" in ``status``)."""
    dropped = [r for r in todo if r["config"]["model"] in hopeless]
    status.update({r["dir"]: "not started" for r in dropped})
    return [r for r in todo if r not in dropped]


def fits(run: dict, at_once: int, until: float, parallel: float = GPU_PARALLEL) -> bool:
    """Whether the run, sharing the device with ``at_once - 1`` others (``parallel`` runs' worth of work
    at a time), should end before ``until`` (a run of no measured cost is tried)."""
    if run["planned_minutes"] is None:
        return True
    return run["planned_minutes"] * 60 * max(1.0, at_once / parallel) <= until - time.time()


def start_run(run: dict, lease: Lease, device: str, threads: int, work: Path) -> subprocess.Popen:
    """The run's training and evaluation started in the kit's folder, its output into its job.log."""
    run_dir = (work / run["dir"]).absolute()
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(
        json.dumps(with_device(run["config"], device), indent=2, sort_keys=True) + "\n"
    )
    script = " && ".join(" ".join(map(shlex.quote, cmd)) for cmd in run_commands(run, run_dir, Path("."), threads))
    with open(run_dir / "job.log", "a") as log_file:
        return subprocess.Popen(
            ["bash", "-c", script],
            cwd=lease.kit,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "ANSEL_KIT_COMMIT": lease.commit},
        )
