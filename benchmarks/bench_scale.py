"""What one session's machine gets through: the smoke DAG's wall time and runs/hour on this
machine's cores and where that time went (the DAG build, the Snakemake process's own CPU, each
rule's jobs), one training job against a bare ``import torch`` (cold: a process of its own;
warm: forked by ansel.forkserver, as local Snakemake runs do), and on a CUDA device its
utilisation and runs/hour with 1, 4 and 8 training jobs sharing it.

Everything runs in a copy of the working tree (tracked and untracked files), so the checkout's
outputs are left alone; ``--cold-dag`` also runs the whole DAG with ANSEL_FORKSERVER=off (one
process per job, as before warm jobs) for the ratio.

    PYTHONPATH=src python benchmarks/bench_scale.py [--cold-dag] [--gpu-model qa_lstm]
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from ansel import forkserver  # noqa: E402
from tests.small_dag import copy_worktree  # noqa: E402  (tracked and untracked files, as a user commits them)


def env_for(repo: Path, warm: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != forkserver.ENV}
    env.update(PYTHONPATH=str(repo / "src"), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}")
    if not warm:
        env[forkserver.ENV] = "off"
    return env


def timed(args, cwd: Path, env: dict) -> float:
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(map(str, args))} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


# Snakemake in a process whose own CPU time (every thread of it; its jobs run in other processes)
# and that of the processes it started and waited for (each job's shell and ``ansel`` client, the ILP
# solver, the warm-job server) are written to the file named first at exit.
SNAKEMAKE_CPU = """
import atexit, resource, sys
from pathlib import Path
out = Path(sys.argv.pop(1))
def own_cpu():
    used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    out.write_text(" ".join(str(u.ru_utime + u.ru_stime) for u in used))
atexit.register(own_cpu)
from snakemake.cli import main
sys.argv[0] = "snakemake"
main()
"""


def snakemake(args: list, repo: Path, env: dict) -> tuple[float, float, float]:
    """Snakemake ``args`` run in ``repo``: (wall seconds, the Snakemake process's CPU seconds, those
    of the processes it started)."""
    cpu_file = repo / ".snakemake-cpu"
    seconds = timed([sys.executable, "-c", SNAKEMAKE_CPU, cpu_file, *args], repo, env)
    own, children = map(float, cpu_file.read_text().split())
    return seconds, own, children


SERVER_CPU = re.compile(r"^ansel forkserver \d+: ([\d.]+) s CPU$", re.M)
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]$", re.M)


def job_seconds(log: str) -> dict[str, list[float]]:
    """Each rule's jobs' wall times (whole seconds: Snakemake stamps its log so), from a Snakemake log."""
    started, spans = {}, collections.defaultdict(list)
    stamps = list(STAMP.finditer(log))
    for stamp, following in zip(stamps, stamps[1:] + [None]):
        at = datetime.datetime.strptime(stamp[1], "%a %b %d %H:%M:%S %Y")
        body = log[stamp.end() : following.start() if following else len(log)]
        if job := re.match(r"\s*(?:local)?rule \w+:.*?jobid: (\d+)", body, re.S):
            started[job[1]] = at
        for done in re.finditer(r"Finished jobid: (\d+) \(Rule: (\w+)\)", body):
            spans[done[2]].append((at - started.pop(done[1])).total_seconds())
    return spans


JOB_CPU = re.compile(r"^done \d+: ansel (\S+) exit \d+, ([\d.]+) s CPU at [\d.]+$", re.M)
JOB_AT = re.compile(r"^(job|done) (\d+): .* at ([\d.]+)$", re.M)


def job_cpu(log: str) -> dict[str, list[float]]:
    """Each verb's jobs' own CPU seconds (their subprocesses' included), from the forkserver's log."""
    cpu = collections.defaultdict(list)
    for verb, seconds in JOB_CPU.findall(log):
        cpu[verb].append(float(seconds))
    return cpu


def between_jobs(log: str, cores: int) -> str:
    """How long cores waited for a job while the warm jobs ran (from the first fork to the last end;
    each job from its fork to its end, as the server's log stamps them): the cores' idle seconds, the
    seconds fewer jobs than cores ran, and the median wait from a job's end to the next fork."""
    forked, spans = {}, []
    for kind, pid, at in JOB_AT.findall(log):
        if kind == "job":
            forked[pid] = float(at)
        elif pid in forked:
            spans.append((forked.pop(pid), float(at)))
    if not spans:
        return "no job stamped in the server's log"
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running, last, last_end, idle, short, waits = 0, events[0][0], None, 0.0, 0.0, []
    for at, change in events:
        if running < cores:
            idle += (cores - running) * (at - last)
            short += at - last
        if change < 0:
            last_end = at
        elif last_end is not None:  # the fork that follows a job's end: the core's wait for it
            waits.append(at - last_end)
            last_end = None
        running, last = running + change, at
    wait = f"; the next job forked a median {statistics.median(waits) * 1000:.0f} ms after a job ended" if waits else ""
    return f"cores idle {idle:.0f} s between the jobs' {events[-1][0] - events[0][0]:.0f} s, fewer than {cores} jobs running for {short:.0f} s{wait}"


NOT_TAKEN = re.compile(r"^ansel: the warm-job server at .* did not take this job \((.*)\): it runs here$", re.M)


def not_taken(logs: Path) -> str:
    """The jobs that ran in a process of their own though a server was up, from the line each
    wrote to its log (``ansel.forkclient``), counted by the reason given."""
    reasons = collections.Counter(
        reason
        for log in sorted(logs.rglob("*.log"))
        if log.name != "forkserver.log"
        for reason in NOT_TAKEN.findall(log.read_text(errors="replace"))
    )
    if not reasons:
        return "every ansel job was forked by the warm-job server"
    said = "; ".join(f"{n} x {reason}" for reason, n in reasons.most_common())
    return f"{sum(reasons.values())} ansel jobs ran in a process of their own (no server took them: {said})"


def smoke_dag(repo: Path, warm: bool) -> tuple[float, int]:
    """The whole smoke DAG, its time printed by where it went: the DAG build (a dry run, timed
    apart), the Snakemake process's own CPU over the run (scheduling, job bookkeeping), each rule's
    jobs' wall time and, for warm jobs, each ``ansel`` verb's jobs' own CPU time."""
    env = env_for(repo, warm)
    profile = ["--profile", "workflow/profiles/local", "all"]
    dag_wall, dag_cpu, _ = snakemake([*profile, "--dry-run", "--quiet"], repo, env)
    seconds, cpu, started = snakemake(profile, repo, env)
    runs = len(list(repo.glob("results/runs/*/*/seed*/metrics.json")))
    print(
        f"smoke DAG, {'warm jobs' if warm else 'a process per job'}, {os.cpu_count()} cores: {seconds:.0f} s "
        f"for {runs} runs = {runs / seconds * 3600:.0f} runs/hour"
    )
    print(f"  DAG build (snakemake --dry-run all): {dag_wall:.1f} s, {dag_cpu:.1f} s CPU")
    print(
        f"  the Snakemake process over the run: {cpu:.1f} s CPU ({cpu / seconds:.2f} of a core), "
        f"{max(cpu - dag_cpu, 0):.1f} s of it beyond the DAG build (scheduling, job bookkeeping)"
    )
    log = max((repo / ".snakemake/log").glob("*.snakemake.log"), key=lambda f: f.stat().st_mtime).read_text()
    spans = job_seconds(log)
    for rule, times in sorted(spans.items(), key=lambda kv: -sum(kv[1])):
        print(
            f"  {rule}: {len(times)} jobs, {sum(times):.0f} s of job wall time "
            f"(median {statistics.median(times):.0f} s)"
        )
    if warm:  # CPU time counts a job's work alone, where wall time also counts the jobs beside it
        server_log = (repo / "logs/forkserver.log").read_text()
        by_verb = job_cpu(server_log)
        for verb, times in sorted(by_verb.items(), key=lambda kv: -sum(kv[1])):
            print(
                f"  ansel {verb}: {len(times)} jobs, {sum(times):.0f} s of the jobs' own CPU time "
                f"(median {statistics.median(times):.2f} s)"
            )
        jobs = sum(map(sum, by_verb.values()))
        print(f"  between jobs: {between_jobs(server_log, os.cpu_count() or 1)}")
        print(f"  {not_taken(repo / 'logs')}")
        server = sum(map(float, SERVER_CPU.findall(server_log)))
        print(
            f"  the processes Snakemake started: {started:.0f} s CPU; of it the warm-job server's own {server:.0f} s "
            f"(its imports, forking each job), the rest {started - server:.0f} s (each job's shell and client, "
            "and the solver where Snakemake schedules by ILP)"
        )
        print(
            f"  the cores' time beyond all of these: {(os.cpu_count() or 1) * seconds - jobs - cpu - started:.0f} s "
            "(each job's exit, idle cores)"
        )
        cores = os.cpu_count() or 1
        print(
            f"  the floor: the jobs' own CPU over {cores} cores, {jobs / cores:.0f} s; no scheduling and no cut of "
            "the work around the jobs takes the DAG below it, only jobs that compute less or faster"
        )
    return seconds, runs


def one_job(repo: Path, run_dir: Path, env: dict) -> float:
    config = json.loads((repo / "results/runs/synthetic_en/qa_cnn/seed1/config.json").read_text())
    return timed(
        [
            "ansel",
            "train",
            "--config",
            json.dumps(config),
            "--processed",
            "data/processed/synthetic_en",
            "--embeddings",
            "data/embeddings/synthetic_en/word2vec-60.npy",
            "--run-dir",
            str(run_dir),
            "--no-progress",
        ],
        repo,
        env,
    )


def job_against_import(repo: Path, tmp: Path, repeats: int = 3) -> None:
    env = env_for(repo, warm=False)
    imports, cold, warm = [], [], []
    forkserver.start(tmp / "forkserver.log")
    try:
        while "ready" not in (tmp / "forkserver.log").read_text():
            time.sleep(0.2)
        for i in range(repeats):  # interleaved, so load on the machine hits all three alike
            imports.append(timed([sys.executable, "-c", "import torch"], repo, env))
            cold.append(one_job(repo, tmp / f"cold{i}", env))
            warm.append(
                one_job(
                    repo, tmp / f"warm{i}", {**env_for(repo, warm=True), forkserver.ENV: os.environ[forkserver.ENV]}
                )
            )
    finally:
        forkserver.stop()
    t = statistics.median(imports)
    print(f"import torch: {t:.2f} s (median of {repeats})")
    print(
        f"one smoke training job (qa_cnn seed 1), cold: {statistics.median(cold):.2f} s = {statistics.median(cold) / t:.2f}x"
    )
    print(
        f"one smoke training job (qa_cnn seed 1), warm: {statistics.median(warm):.2f} s = {statistics.median(warm) / t:.2f}x"
    )


def gpu_sharing(repo: Path, tmp: Path, model: str) -> None:
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device here: GPU utilisation and runs/hour with 1/4/8 jobs per device not measured")
        return
    import pynvml

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    config = json.loads((repo / f"results/runs/synthetic_en/{model}/seed1/config.json").read_text())
    config["train"].update(device="cuda", max_batches=None, epochs=3)
    env = env_for(repo, warm=True)
    forkserver.start(tmp / "forkserver-gpu.log")
    env[forkserver.ENV] = os.environ[forkserver.ENV]
    try:
        for jobs in (1, 4, 8):
            samples, done = [], threading.Event()

            def sample(samples: list, done: threading.Event):
                while not done.wait(0.2):
                    samples.append(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)

            sampler = threading.Thread(target=sample, args=(samples, done))
            sampler.start()
            started = time.perf_counter()
            procs = [
                subprocess.Popen(
                    [
                        "ansel",
                        "train",
                        "--config",
                        json.dumps({**config, "seed": k + 1}),
                        "--processed",
                        "data/processed/synthetic_en",
                        "--embeddings",
                        "data/embeddings/synthetic_en/word2vec-60.npy",
                        "--run-dir",
                        str(tmp / f"gpu{jobs}-{k}"),
                        "--no-progress",
                    ],
                    cwd=repo,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                for k in range(jobs)
            ]
            codes = [p.wait() for p in procs]
            seconds = time.perf_counter() - started
            done.set()
            sampler.join()
            print(
                f"{jobs} {model} jobs sharing {torch.cuda.get_device_name(0)}: {seconds:.1f} s, "
                f"{jobs / seconds * 3600:.0f} runs/hour, mean utilisation {statistics.mean(samples or [0]):.0f}%"
                + ("" if not any(codes) else f" (exit codes {codes})")
            )
    finally:
        forkserver.stop()


def machine() -> str:
    """The CPU as /proc/cpuinfo names it, with its family and model (one model name, "AMD EPYC", has
    covered CPUs a third apart in this DAG's time) and the kernels torch picks on it."""
    import torch

    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    kind = f"{fields.get('model name', 'a CPU')} (family {fields.get('cpu family', '?')}, model {fields.get('model', '?')})"
    return f"machine: {kind}, {os.cpu_count()} cores; torch's CPU kernels: {torch.backends.cpu.get_cpu_capability()}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cold-dag", action="store_true", help="also run the DAG with one process per job")
    p.add_argument("--gpu-model", default="qa_lstm", help="the smoke model the GPU-sharing runs train")
    a = p.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory(prefix="ansel-bench-") as tmp:
        tmp = Path(tmp)
        repo = tmp / "repo"
        copy_worktree(ROOT, repo)
        seconds, runs = smoke_dag(repo, warm=True)
        if a.cold_dag:
            cold = tmp / "cold"
            copy_worktree(ROOT, cold)
            cold_seconds, _ = smoke_dag(cold, warm=False)
            print(f"warm / cold wall time {seconds / cold_seconds:.2f}")
        job_against_import(repo, tmp)
        gpu_sharing(repo, tmp, a.gpu_model)


if __name__ == "__main__":
    main()
