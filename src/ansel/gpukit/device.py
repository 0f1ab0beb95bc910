"""The kit's runner on the device (``gpu-kit/run.sh``): benchmarks, cost measurements and
trainings against a deadline, then one archive of the record.

Each record's jobs run in order: its benchmarks and its cost measurement alone on the device
(they are timings), then its trainings concurrently, as many at once as the device's memory
(from the shapes' measured peaks) and its cores allow, each training followed by its evaluation.
Nothing is started after the deadline, and what runs then is stopped: a training keeps its last
finished epoch in ``state.pt``, so a second ``run.sh`` on the same kit resumes it (to the same
bytes on the same machine) and keeps every finished run. Imports only what the GPU image has.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

from ansel.gpukit import GPU_PARALLEL, KIT_FILE

ARCHIVE_MARGIN_S = 20  # kept back from the deadline to stop jobs and write the archive
STOP = threading.Event()  # SIGTERM or SIGINT: the deadline is now
KIT_COMMIT = [""]  # the commit the kit was packed from: the runs' provenance
PART_BYTES = 15 * 2**20  # the device tool brings back files of at most 16 MiB
STATE_BYTES = 40 * 2**20  # unfinished runs' state.pt travel back up to this much in all (64 MiB come back)
DEFAULT_PEAK_MB = 4096  # a training's device memory where no peak was measured
RUN_FILES = ("metrics.json", "config.json", "log.csv", "timings.json", "run.trec.gz")
# a run with train.keep_last adds its last epoch's evaluation (the protocol of a paper reporting it)
LAST_RUN_FILES = ("metrics_last.json", "run_last.trec.gz")


LOG = Path("work/log.txt")


def log(message: str) -> None:
    line = f"[{time.strftime('%H:%M:%S')}] {message}"
    print(line, flush=True)
    with open(LOG, "a") as f:
        f.write(line + "\n")


class GpuMonitor(threading.Thread):
    """nvidia-smi's utilisation and memory once a second (no samples where there is no nvidia-smi)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples: list[tuple[float, float, float]] = []  # (time, utilisation %, memory MB)
        self.available = shutil.which("nvidia-smi") is not None
        self._stop = threading.Event()

    def run(self):
        while self.available and not self._stop.wait(1.0):
            try:
                text = subprocess.run(
                    ["nvidia-smi", "--query-gpu=utilization.gpu,memory.used", "--format=csv,noheader,nounits"],
                    capture_output=True,
                    text=True,
                    timeout=5,
                ).stdout.splitlines()[0]
                util, mem = (float(x) for x in text.split(","))
            except (OSError, subprocess.SubprocessError, ValueError, IndexError):
                continue
            self.samples.append((time.time(), util, mem))

    def stop(self):
        self._stop.set()

    def window(self, start: float, end: float) -> dict:
        inside = [s for s in self.samples if start <= s[0] <= end]
        if not inside:
            return {}
        return {
            "gpu_util_mean": round(sum(s[1] for s in inside) / len(inside), 1),
            "gpu_util_max": max(s[1] for s in inside),
            "gpu_mem_max_mb": max(s[2] for s in inside),
            "samples": len(inside),
        }


def device_info(device: str) -> dict:
    import torch

    info = {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "cores": os.cpu_count(),
        "cuda_available": torch.cuda.is_available(),
        "device": device,
    }
    if device.startswith("cuda"):
        info |= {
            "gpu": torch.cuda.get_device_name(),
            "gpu_memory_mb": torch.cuda.get_device_properties(0).total_memory / 2**20,
            "cuda": torch.version.cuda,
        }
        if shutil.which("nvidia-smi"):
            info["nvidia_smi"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                capture_output=True,
                text=True,
            ).stdout.strip()
    else:
        info["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    return info


def with_device(cfg: dict, device: str) -> dict:
    """The run config on ``device`` (``auto`` leaves the run's own setting)."""
    return cfg if device == "auto" else {**cfg, "train": {**cfg["train"], "device": device}}


def python_cmd(*args: str) -> list[str]:
    return [sys.executable, *args]


def run_bench(bench: dict, device: str, until: float, out: Path) -> dict:
    """A benchmark script's printed figures into ``out/<name>.txt`` (cut at ``until`` or after its
    ``timeout_s``, default 120)."""
    out.mkdir(parents=True, exist_ok=True)
    until = min(until, time.time() + bench.get("timeout_s", 120))
    args = [a.replace("{device}", device) for a in bench.get("args", [])]
    started = time.time()
    with open(out / f"{bench['name']}.txt", "w") as f:
        f.write(f"$ python {bench['script']} {' '.join(args)}\n")
        f.flush()
        proc = subprocess.Popen(
            python_cmd(bench["script"], *args), stdout=f, stderr=subprocess.STDOUT, start_new_session=True
        )
        status = _wait(proc, until)
    return {"phase": f"bench {bench['name']}", "status": status, "start": started, "end": time.time()}


def run_step_times(item: dict, device: str, until: float, base: Path) -> dict:
    """A table's rows' training steps timed alone (``ansel step-times``) into ``base/<its file>``,
    cut at ``until`` (nothing is written then)."""
    started, out = time.time(), base / item["file"]
    out.parent.mkdir(parents=True, exist_ok=True)
    configs = {m: with_device(cfg, device) for m, cfg in item["configs"].items()}
    with open(out.with_suffix(".log"), "w") as f:
        proc = subprocess.Popen(
            python_cmd(
                "-m",
                "ansel.cli",
                "step-times",
                "--config",
                json.dumps(configs),
                "--processed",
                item["processed"],
                "--out",
                str(out),
                "--threads",
                str(os.cpu_count() or 1),
            ),
            stdout=f,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        status = _wait(proc, until)
    return {"phase": f"step-times {item['file']}", "status": status, "start": started, "end": time.time()}


def run_measure(name: str, device: str, until: float, out: Path) -> dict:
    """The record's shapes timed in a child process (a CUDA fault stays there), cut at ``until``."""
    return _child_phase("measure", name, device, until, out / "measure.log")  # after the earlier leases' lines


def run_speed(name: str, device: str, until: float, base: Path) -> dict:
    """The speed entry's shapes timed in a child process (``ansel.training.speed``), its lines into
    ``base/bench/speed.txt``, cut at ``until`` (each shape's figures are written as it ends)."""
    return _child_phase("speed", name, device, until, base / "bench" / "speed.txt")


def _child_phase(phase: str, name: str, device: str, until: float, log_path: Path) -> dict:
    """``_<phase>`` of record ``name`` run by this module in a child process, its output appended to
    ``log_path``, stopped at ``until`` (+5 s to write what it measured last)."""
    started = time.time()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a") as f:
        proc = subprocess.Popen(
            python_cmd("-m", "ansel.gpukit.device", f"_{phase}", name, device, str(until)),
            stdout=f,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        status = _wait(proc, until + 5)
    return {"phase": phase, "status": status, "start": started, "end": time.time()}


def _speed_child(name: str, device: str, until: float) -> None:
    from ansel.device import start_torch
    from ansel.training.speed import compare

    spec = _record(json.loads(Path(KIT_FILE).read_text()), name)["speed"]
    start_torch(min(8, os.cpu_count() or 1))
    compare(
        [with_device(cfg, device) for cfg in spec["configs"]],
        Path("work") / name,
        **{k: spec[k] for k in ("precisions", "seeds", "batches", "rounds", "dev_questions")},
        data_root=Path.cwd(),
        deadline=until,
        report=lambda m: print(m, flush=True),
    )


def _measure_child(name: str, device: str, until: float) -> None:
    from ansel.device import start_torch
    from ansel.plan import measure, shape

    rec = _record(json.loads(Path(KIT_FILE).read_text()), name)
    start_torch(min(8, os.cpu_count() or 1))
    out = Path("work") / name / "costs"
    done = {key for f in out.glob("*.json") for key in json.loads(f.read_text())}  # a second run.sh goes on
    configs = [with_device(cfg, device) for cfg in rec["measure"]["configs"] if shape(cfg) not in done]
    measure(
        configs,
        out,
        rec["measure"]["batches"],
        data_root=Path.cwd(),
        deadline=until,
        report=lambda m: print(m, flush=True),
    )


def _wait(proc: subprocess.Popen, until: float) -> str:
    """Wait for ``proc`` until ``until`` (or a stop signal); then stop its process group: "ok",
    "failed (rc N)" or "cut"."""
    while proc.poll() is None:
        if time.time() >= until or STOP.is_set():
            _stop(proc)
            return "cut"
        time.sleep(0.2)
    return "ok" if proc.returncode == 0 else f"failed (rc {proc.returncode})"


def out_of_time(until: float) -> bool:
    return time.time() >= until or STOP.is_set()


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass


def finished(run_dir: Path) -> bool:
    """Trained and evaluated (here, or in an earlier lease: its record's files came with the kit)."""
    return (run_dir / "metrics.json").exists() and any((run_dir / f).exists() for f in ("run.trec", "run.trec.gz"))


def job_count(runs: list[dict], device: str, jobs: int | None) -> tuple[int, int]:
    """(concurrent trainings, threads each): ``jobs`` or as many as the device's free memory holds
    at the largest measured peak (x1.25), at most one per two cores; the cores shared out."""
    cores = os.cpu_count() or 1
    if jobs is None:
        if device.startswith("cuda") or (device == "auto" and _cuda()):
            import torch

            free_mb = torch.cuda.mem_get_info()[0] / 2**20
            peak = max([r["peak_mb"] or DEFAULT_PEAK_MB for r in runs] or [DEFAULT_PEAK_MB]) * 1.25
            jobs = max(1, min(int(free_mb * 0.9 // peak), cores // 2))
        else:
            jobs = max(1, cores // 2)
    jobs = max(1, min(jobs, len(runs) or 1))
    return jobs, max(1, cores // jobs)


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def run_trainings(
    rec: dict, device: str, jobs: int | None, until: float, work: Path, parallel: float = GPU_PARALLEL
) -> dict:
    """Every run of the record not finished yet (under ``work``, the record's folder), ``jobs`` at a time,
    each trained then evaluated; the longest that should still end before the deadline first."""
    started = time.time()
    todo = [r for r in rec["runs"] if not finished(work / r["dir"])]
    todo.sort(key=lambda r: -(r["planned_minutes"] or 0))  # the longest first: the shortest tail
    n_jobs, threads = job_count(todo, device, jobs)
    log(f"{rec['name']}: {len(todo)} of {len(rec['runs'])} runs to train, {n_jobs} at a time, {threads} threads each")
    running: dict[str, subprocess.Popen] = {}
    progress: dict[str, EpochClock] = {}
    hopeless: set[str] = set()  # models whose runs cannot end in time nor come back unfinished
    status: dict[str, str] = {r["dir"]: "finished before" for r in rec["runs"] if r not in todo}
    while todo or running:
        for key, proc in list(running.items()):
            if proc.poll() is not None:
                status[key] = "finished" if proc.returncode == 0 else f"failed (rc {proc.returncode})"
                log(f"{key}: {status[key]}")
                del running[key]
            elif (why := progress[key].hopeless(work / key, until)) is not None:
                _stop(proc)
                status[key] = "stopped"
                hopeless.add(progress[key].model)
                log(f"{key}: stopped, {why}")
                del running[key]
        todo = _drop_hopeless(todo, hopeless, status)
        if out_of_time(until):
            for key, proc in running.items():
                _stop(proc)
                status[key] = "cut"
                log(f"{key}: cut by the deadline")
            status.update({r["dir"]: "not started" for r in todo})
            break
        while todo and len(running) < n_jobs:
            run = next((r for r in todo if fits(r, len(running) + 1, until, parallel)), None)
            if run is None:
                if not running:  # none would end even alone: nothing frees the device for them
                    log(
                        f"{len(todo)} runs not started: the shortest, {todo[-1]['planned_minutes']:.1f} planned "
                        "device-minutes, would not end before the deadline"
                    )
                    status.update({r["dir"]: "not started" for r in todo})
                    todo = []
                break
            todo.remove(run)
            job_log = work / run["dir"] / "job.log"  # an earlier lease's lines stay in it, above this one's
            since = job_log.stat().st_size if job_log.exists() else 0
            running[run["dir"]] = _start_run(run, device, threads, work)
            progress[run["dir"]] = EpochClock(run["config"]["model"], run["config"]["train"]["epochs"], since)
        time.sleep(0.5)
    return {"phase": "train", "start": started, "end": time.time(), "jobs": n_jobs, "threads": threads, "runs": status}


class EpochClock:
    """A running training's pace, from the epochs its job.log reports (``epoch N: ...``) as they come."""

    def __init__(self, model: str, epochs: int, since: int = 0):
        self.model, self.epochs = model, epochs
        self.since = since  # job.log's size when this training started: earlier leases' lines are not its pace
        self.seen: list[tuple[float, int]] = []  # (when first seen, last finished epoch)

    def hopeless(self, run_dir: Path, until: float) -> str | None:
        """Why the run is not worth its device time (None: it is): it will not end before ``until``
        at its pace so far, and its state.pt is too large to come back and resume it."""
        epoch = _last_epoch(run_dir / "job.log", self.since)
        if epoch is None or (self.seen and self.seen[-1][1] >= epoch):
            return None
        self.seen.append((time.time(), epoch))
        if len(self.seen) < 2:
            return None
        (t0, e0), (t1, e1) = self.seen[0], self.seen[-1]
        ends = t1 + (t1 - t0) / (e1 - e0) * (self.epochs - e1)
        state = run_dir / "state.pt"
        state_mb = state.stat().st_size / 2**20 if state.exists() else 0
        if ends <= until - ARCHIVE_MARGIN_S or state_mb <= STATE_BYTES / 2**20:
            return None
        return (
            f"epoch {e1} of {self.epochs} would end {ends - until:.0f} s after the deadline at its pace "
            f"and its state ({state_mb:.0f} MiB) cannot come back: its model's other runs are not started"
        )


def _last_epoch(job_log: Path, since: int = 0) -> int | None:
    if not job_log.exists():
        return None
    with open(job_log, "rb") as f:
        f.seek(since)
        text = f.read().decode(errors="replace")
    epochs = [int(m.group(1)) for m in re.finditer(r"^epoch (\d+):", text, re.M)]
    return epochs[-1] if epochs else None


def _drop_hopeless(todo: list[dict], hopeless: set[str], status: dict[str, str]) -> list[dict]:
    dropped = [r for r in todo if r["config"]["model"] in hopeless]
    status.update({r["dir"]: "not started" for r in dropped})
    return [r for r in todo if r not in dropped]


def fits(run: dict, at_once: int, until: float, parallel: float = GPU_PARALLEL) -> bool:
    """Whether the run, sharing the device with ``at_once - 1`` others (``parallel`` runs' worth of work
    at a time), should end before ``until`` (a run of no measured cost is tried)."""
    if run["planned_minutes"] is None:
        return True
    return run["planned_minutes"] * 60 * max(1.0, at_once / parallel) <= until - time.time()


def run_commands(run: dict, run_dir: Path, data_root: Path, threads: int) -> list[list[str]]:
    """``ansel train`` (config.json of ``run_dir``, timings beside it, no dvclive) then ``ansel evaluate``
    of a kit run whose data lie under ``data_root``."""
    ansel, processed = python_cmd("-m", "ansel.cli"), str(data_root / run["processed"])
    train = [
        *ansel,
        "train",
        "--config",
        str(run_dir / "config.json"),
        "--processed",
        processed,
        "--run-dir",
        str(run_dir),
        "--timings",
        str(run_dir / "timings.json"),
        "--no-progress",
        "--no-dvclive",
        "--threads",
        str(threads),
    ]
    if run["embeddings"]:
        train += ["--embeddings", str(data_root / run["embeddings"])]
    evaluate = [*ansel, "evaluate", "--processed", processed, "--run-dir", str(run_dir), "--threads", str(threads)]
    return [train, evaluate] + ([[*evaluate, "--last"]] if run["config"].get("train", {}).get("keep_last") else [])


def _start_run(run: dict, device: str, threads: int, work: Path) -> subprocess.Popen:
    run_dir = work / run["dir"]
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(
        json.dumps(with_device(run["config"], device), indent=2, sort_keys=True) + "\n"
    )
    script = " && ".join(" ".join(map(shlex.quote, cmd)) for cmd in run_commands(run, run_dir, Path("."), threads))
    with open(run_dir / "job.log", "a") as log_file:
        return subprocess.Popen(
            ["bash", "-c", script],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "ANSEL_KIT_COMMIT": KIT_COMMIT[0]},
        )


def _record(kit: dict, name: str) -> dict:
    return next(r for r in kit["records"] if r["name"] == name)


def archive(kit: dict, work: Path, out: Path, started: float) -> list[Path]:
    """One .tar.gz of every record's files (split into parts of 15 MiB where larger)."""
    stamp = datetime.datetime.fromtimestamp(started, datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    name = (
        "record-" + "_".join(r["name"] for r in kit["records"]) + f"-{stamp}.tar.gz"
    )  # names the device tool brings back
    out.mkdir(parents=True, exist_ok=True)
    path, state_bytes = out / name, 0
    with tarfile.open(path, "w:gz") as tar:
        tar.add(KIT_FILE, arcname=KIT_FILE)
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
                        _gzip(run_dir / trec, run_dir / f"{trec}.gz")
                names = [*RUN_FILES, *LAST_RUN_FILES] if finished(run_dir) else ["config.json", "job.log"]
                state = run_dir / "state.pt"
                if not finished(run_dir) and state.exists() and state_bytes + state.stat().st_size <= STATE_BYTES:
                    names.append("state.pt")
                    state_bytes += state.stat().st_size
                for f in names:
                    if (run_dir / f).exists():
                        tar.add(run_dir / f, arcname=f"{rec['name']}/{run['dir']}/{f}")
    if path.stat().st_size <= PART_BYTES:
        return [path]
    parts = []
    with open(path, "rb") as f:
        for i, chunk in enumerate(iter(lambda: f.read(PART_BYTES), b"")):
            part = path.with_name(f"{path.name}.part{i:02d}")
            part.write_bytes(chunk)
            parts.append(part)
    path.unlink()
    return parts


def _gzip(src: Path, dst: Path) -> None:
    """gzip with no name or time in the header: the same run file, the same bytes."""
    with open(src, "rb") as f, open(dst, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as g:
        shutil.copyfileobj(f, g)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["_measure"], ["_speed"]):
        child = _measure_child if argv[0] == "_measure" else _speed_child
        return child(argv[1], argv[2], float(argv[3]))
    p = argparse.ArgumentParser(
        prog="gpu-kit/run.sh", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--deadline-s", type=float, default=540, help="stop everything by then (seconds from the start)")
    p.add_argument("--device", default="auto", help="auto (the runs' own: CUDA where there is one), cuda or cpu")
    p.add_argument("--jobs", type=int, help="trainings at once (default: from measured memory and cores)")
    p.add_argument(
        "--gpu-parallel",
        type=float,
        default=GPU_PARALLEL,
        help="runs' worth of work one GPU does at a time when shared (admission only; default "
        f"{GPU_PARALLEL}, AP on WikiQA; QA-CNN on TREC-QA measured about 4)",
    )
    p.add_argument("--out", default=os.environ.get("OUT") or "out", help="where the archive goes (default $OUT)")
    p.add_argument(
        "--archive-margin-s",
        type=float,
        default=ARCHIVE_MARGIN_S,
        help="kept back from the deadline to stop the jobs and write the archive",
    )
    a = p.parse_args(argv)
    started = time.time()
    until = started + a.deadline_s - a.archive_margin_s
    for sig in (signal.SIGTERM, signal.SIGINT):  # stop as at the deadline: the archive is still written
        signal.signal(sig, lambda *_: STOP.set())
    kit = json.loads(Path(KIT_FILE).read_text())
    KIT_COMMIT[0] = kit["commit"] or ""
    work = Path("work")
    work.mkdir(exist_ok=True)
    device = a.device if a.device != "auto" else ("cuda" if _cuda() else "cpu")
    info = device_info(device)
    log(
        f"kit of {kit['commit']}: {', '.join(r['name'] for r in kit['records'])} on {info.get('gpu', 'the CPU')}, "
        f"deadline {a.deadline_s:.0f} s"
    )
    monitor = GpuMonitor()
    monitor.start()
    for rec in kit["records"]:
        base, phases = work / rec["name"], []
        for bench in rec["bench"]:
            if not out_of_time(until):
                phases.append(run_bench(bench, device, until, base / "bench"))
        if rec.get("speed") and not out_of_time(until):
            phases.append(run_speed(rec["name"], device, until, base))
        if rec["measure"] and not out_of_time(until):
            phases.append(run_measure(rec["name"], device, until, base / "costs"))
        for item in rec.get("step_times", []):
            if not out_of_time(until) and not (base / item["file"]).exists():
                phases.append(run_step_times(item, device, until, base))
        if rec["runs"]:
            phases.append(run_trainings(rec, a.device, a.jobs, until, base, a.gpu_parallel))
        for phase in phases:
            phase |= monitor.window(phase["start"], phase["end"])
            phase["seconds"] = round(phase["end"] - phase["start"], 1)
            log(
                f"{rec['name']}: {phase['phase']} {phase.get('status', '')} in {phase['seconds']} s "
                f"{'(GPU busy %.0f%% on average)' % phase['gpu_util_mean'] if 'gpu_util_mean' in phase else ''}"
            )
        previous = json.loads((base / "device.json").read_text()) if (base / "device.json").exists() else {}
        base.mkdir(parents=True, exist_ok=True)
        (base / "device.json").write_text(
            json.dumps(
                {
                    **info,
                    "kit_commit": kit["commit"],
                    "deadline_s": a.deadline_s,
                    "started": started,
                    "finished": time.time(),
                    "sessions": [*previous.get("sessions", []), {"started": started, "phases": phases}],
                },
                indent=1,
            )
            + "\n"
        )
    monitor.stop()
    for path in archive(kit, work, Path(a.out), started):
        log(f"archive: {path} ({path.stat().st_size / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main()
