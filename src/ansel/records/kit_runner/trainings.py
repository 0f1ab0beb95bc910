"""A record's trainings on the device: jobs (a row's seeds as one stacked training where the kit
prices a stack, ``kit_pack.kit_stacks``; every other run alone), admission (a job starts only if it
should end before the deadline, sharing the device with those running), how many at once (from the
device's free memory and the measured peaks), and pacing (a job that will not end in time, its state
too large to come back, is stopped and its model's other jobs are not started)."""

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


def job_count(jobs: list[dict], device: str, n: int | None) -> tuple[int, int]:
    """(concurrent trainings, threads each): ``n`` or as many as the device's free memory holds
    at the largest measured peak (x1.25), at most one per two cores; the cores shared out."""
    cores = os.cpu_count() or 1
    if n is None:
        if device.startswith("cuda") or (device == "auto" and cuda_available()):
            import torch

            free_mb = torch.cuda.mem_get_info()[0] / 2**20
            peak = max([j["peak_mb"] or DEFAULT_PEAK_MB for j in jobs] or [DEFAULT_PEAK_MB]) * 1.25
            n = max(1, min(int(free_mb * 0.9 // peak), cores // 2))
        else:
            n = max(1, cores // 2)
    n = max(1, min(n, len(jobs) or 1))
    return n, max(1, cores // n)


def training_jobs(rec: dict, work: Path, device: str = "cuda") -> list[dict]:
    """The record's runs not finished yet (under ``work``) as jobs ({"runs", "planned_minutes", "peak_mb"}):
    a stack's seeds (``rec["stacks"]``) as one while none of them has finished, every other run alone,
    priced again from the costs measured into ``work/costs/`` on ``device`` (``repriced``; a CPU's costs
    that a record trained in parts there carries never price a GPU's run)."""
    todo = {r["dir"]: r for r in rec["runs"] if not finished(work / r["dir"])}
    jobs = [
        {"runs": [todo.pop(d) for d in stack["dirs"]], **{k: stack[k] for k in ("planned_minutes", "peak_mb")}}
        for stack in rec.get("stacks", [])
        if all(d in todo for d in stack["dirs"])
    ]
    measured = {
        k: v
        for f in sorted(work.glob("costs/*.json"))
        for k, v in json.loads(f.read_text()).items()
        if v["device"].startswith(device)
    }
    return jobs + [
        {"runs": [r], "planned_minutes": repriced(r, measured), "peak_mb": r["peak_mb"]} for r in todo.values()
    ]


def repriced(run: dict, measured: dict) -> float | None:
    """A run's planned minutes with its training steps and dev scorings priced from ``measured`` ({shape:
    cost} measured by the record's own ``measure`` on this device, the whole dev split) where it holds the
    run's shape: each part scaled by the new figure over the one the kit priced it from; checkpoints and
    start-up as planned. The kit's price stands where nothing was measured."""
    was, parts = run.get("priced_from"), run.get("planned_parts")
    if not was or not parts or (now := measured.get(was["shape"])) is None:
        return run["planned_minutes"]
    new = dict(parts, training=parts["training"] * now["seconds_per_batch"] / was["seconds_per_batch"])
    if was.get("dev_seconds") and now.get("dev_seconds") is not None:
        new["dev scoring"] = parts["dev scoring"] * now["dev_seconds"] / was["dev_seconds"]
    return sum(new.values())


def run_trainings(
    rec: dict, lease: Lease, device: str, jobs: int | None, work: Path, parallel: float = GPU_PARALLEL
) -> dict:
    """Every run of the record not finished yet (under ``work``, the record's folder), ``jobs`` at a time,
    each trained then evaluated; the longest job that should still end before the deadline first."""
    started = time.time()
    todo = training_jobs(rec, work, device if device != "auto" else ("cuda" if cuda_available() else "cpu"))
    again = [j for j in todo if len(j["runs"]) == 1 and j["planned_minutes"] != j["runs"][0]["planned_minutes"]]
    if again:
        lease.log(
            f"{rec['name']}: {len(again)} runs priced again from the costs measured here: "
            f"{sum(j['runs'][0]['planned_minutes'] for j in again):.1f} planned device-minutes -> "
            f"{sum(j['planned_minutes'] for j in again):.1f}"
        )
    todo.sort(key=lambda j: -(j["planned_minutes"] or 0))  # the longest first: the shortest tail
    n_jobs, threads = job_count(todo, device, jobs)
    stacked = sum(len(j["runs"]) for j in todo if len(j["runs"]) > 1)
    lease.log(
        f"{rec['name']}: {sum(len(j['runs']) for j in todo)} of {len(rec['runs'])} runs to train"
        + (f" ({stacked} in {sum(len(j['runs']) > 1 for j in todo)} stacks of seeds)" if stacked else "")
        + f", {n_jobs} at a time, {threads} threads each"
    )
    running: dict[str, tuple[dict, subprocess.Popen]] = {}  # {its first run's folder: (job, process)}
    progress: dict[str, EpochClock] = {}
    hopeless: set[str] = set()  # models whose runs cannot end in time nor come back unfinished
    status: dict[str, str] = {r["dir"]: "finished before" for r in rec["runs"] if finished(work / r["dir"])}
    while todo or running:
        for key, (job, proc) in list(running.items()):
            if proc.poll() is not None:
                done = "finished" if proc.returncode == 0 else f"failed (rc {proc.returncode})"
                status |= {r["dir"]: done for r in job["runs"]}
                lease.log(f"{name(job)}: {done}")
                del running[key]
            elif (why := progress[key].hopeless(work / key, lease.until)) is not None:
                stop_process(proc)
                status |= {r["dir"]: "stopped" for r in job["runs"]}
                hopeless.add(progress[key].model)
                lease.log(f"{name(job)}: stopped, {why}")
                del running[key]
        todo = drop_hopeless(todo, hopeless, status)
        if lease.out_of_time():
            for job, proc in running.values():
                stop_process(proc)
                status |= {r["dir"]: "cut" for r in job["runs"]}
                lease.log(f"{name(job)}: cut by the deadline")
            status.update({r["dir"]: "not started" for j in todo for r in j["runs"]})
            break
        while todo and len(running) < n_jobs:
            admitted = next((j for j in todo if fits(j, len(running) + 1, lease.until, parallel)), None)
            if admitted is None:
                if not running:  # none would end even alone: nothing frees the device for them
                    lease.log(
                        f"{len(todo)} jobs not started: the shortest, {todo[-1]['planned_minutes']:.1f} planned "
                        "device-minutes, would not end before the deadline"
                    )
                    status.update({r["dir"]: "not started" for j in todo for r in j["runs"]})
                    todo = []
                break
            job = admitted
            todo.remove(job)
            key = job["runs"][0]["dir"]  # a stack's output goes to its first seed's job.log
            job_log = work / key / "job.log"  # an earlier lease's lines stay in it, above this one's
            since = job_log.stat().st_size if job_log.exists() else 0
            running[key] = job, start_job(job, lease, device, threads, work)
            cfg = job["runs"][0]["config"]
            progress[key] = EpochClock(cfg["model"], cfg["train"]["epochs"], since, seeds=len(job["runs"]))
        time.sleep(0.5)
    return {"phase": "train", "start": started, "end": time.time(), "jobs": n_jobs, "threads": threads, "runs": status}


def name(job: dict) -> str:
    dirs = [r["dir"] for r in job["runs"]]
    return dirs[0] if len(dirs) == 1 else f"{dirs[0]} and {len(dirs) - 1} more seeds, stacked"


class EpochClock:
    """A running training's pace, from the epochs its job.log reports (``epoch N: ...``) as they come."""

    def __init__(self, model: str, epochs: int, since: int = 0, state_bytes: int = STATE_BYTES, seeds: int = 1):
        self.model, self.epochs, self.seeds = model, epochs, seeds  # a stack resumes only with every seed's state
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
        state_mb = self.seeds * state.stat().st_size / 2**20 if state.exists() else 0  # seeds' states alike
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
    # a stack's seeds each report their epoch ("seed 2: epoch N: ...")
    epochs = [int(m.group(1)) for m in re.finditer(r"^(?:seed \d+: )?epoch (\d+):", text, re.M)]
    return epochs[-1] if epochs else None


def drop_hopeless(todo: list[dict], hopeless: set[str], status: dict[str, str]) -> list[dict]:
    """``todo`` without the jobs of ``hopeless`` models (their runs marked "not started" in ``status``)."""
    dropped = [j for j in todo if j["runs"][0]["config"]["model"] in hopeless]
    status.update({r["dir"]: "not started" for j in dropped for r in j["runs"]})
    return [j for j in todo if j not in dropped]


def fits(job: dict, at_once: int, until: float, parallel: float = GPU_PARALLEL) -> bool:
    """Whether the job (a run, or a stack of seeds), sharing the device with ``at_once - 1`` others
    (``parallel`` jobs' worth of work at a time), should end before ``until`` (one of no measured cost
    is tried). ``parallel`` was measured for runs alone; a stack's slowing beside others is not measured
    yet and taken as a run's."""
    if job["planned_minutes"] is None:
        return True
    return job["planned_minutes"] * 60 * max(1.0, at_once / parallel) <= until - time.time()


def start_job(job: dict, lease: Lease, device: str, threads: int, work: Path) -> subprocess.Popen:
    """The job's training and evaluations started in the kit's folder, its output into its first run's
    job.log; each run's config.json written first."""
    runs = job["runs"]
    for run in runs:
        (work / run["dir"]).mkdir(parents=True, exist_ok=True)
        (work / run["dir"] / "config.json").write_text(
            json.dumps(with_device(run["config"], device), indent=2, sort_keys=True) + "\n"
        )
    run_dir = (work / runs[0]["dir"]).absolute()
    seeds = [r["config"]["seed"] for r in runs] if len(runs) > 1 else None
    if seeds:  # the seeds' folders differ in their last part only (seed<k>)
        run_dir = run_dir.parent / "seed{seed}"
    commands = run_commands(runs[0], run_dir, Path("."), threads, seeds)
    script = " && ".join(" ".join(map(shlex.quote, cmd)) for cmd in commands)
    with open(work / runs[0]["dir"] / "job.log", "a") as log_file:
        return subprocess.Popen(
            ["bash", "-c", script],
            cwd=lease.kit,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            process_group=0,  # lease.stop_process's group, in the runner's session
            stdin=subprocess.DEVNULL,
            env={**os.environ, "ANSEL_KIT_COMMIT": lease.commit},
        )
