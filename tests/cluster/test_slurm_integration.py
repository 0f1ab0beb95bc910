"""The smoke preset on a real SLURM cluster, through the user-facing profiles.

Needs a cluster: `tests/cluster/slurm.sh up`, then ANSEL_SLURM=1 (otherwise skipped).
One SLURM run and one local run of the same preset go side by side, each in its own
copy of the repository. While the SLURM run trains, one training job is cancelled
with scancel after it saved a checkpoint; Snakemake must resubmit it and the trainer
must resume. Then:
  * every non-local job went through sbatch, and SLURM knows each job id;
  * the retried job logged "resuming from epoch N";
  * every run's metrics.json equals the local run's (timings aside).
"""

import collections
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.small_dag import copy_worktree

REPO = Path(__file__).resolve().parents[2]
# The smoke paper with one seed (6 training jobs) keeps CI short; every rule kind still goes
# through sbatch. `seeds=1` on the command line wins over the preset (ansel.config.apply_preset).
TARGET = ["paper_smoke", "--config", "preset=smoke", "seeds=1"]
SLURM_PROFILES = ["--profile", "slurm", "--profile", "ci-slurm"]
LOCAL_PROFILES = ["--profile", "workflow/profiles/ci"]
TRAIN_RULE = "train"
# The train rule's run directory (from its wildcards); the trainer keeps state.pt there.
RUN_DIR = "results/runs/{dataset}/{model}/seed{seed}"
RESUMED = re.compile(r"resuming from epoch (\d+)")
TIMEOUT_S = 900  # a hang guard, not a speed target


def _why_no_cluster() -> str | None:
    if os.environ.get("ANSEL_SLURM") != "1":
        return "SLURM integration test: run `tests/cluster/slurm.sh up` and set ANSEL_SLURM=1"
    try:
        probe = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=20)
    except FileNotFoundError:
        return "ANSEL_SLURM=1 but sinfo is not installed (run tests/cluster/slurm.sh up)"
    if probe.returncode != 0 or not probe.stdout.strip():
        return f"ANSEL_SLURM=1 but sinfo fails: {probe.stderr.strip() or 'no nodes'}"
    return None


_NO_CLUSTER = _why_no_cluster()
pytestmark = [pytest.mark.slurm, pytest.mark.skipif(_NO_CLUSTER is not None, reason=_NO_CLUSTER or "")]


def copy_repo(dest: Path) -> Path:
    """The working tree (tracked and untracked, not ignored; links kept) copied to dest."""
    copy_worktree(REPO, dest)
    return dest


def _env(workdir: Path) -> dict[str, str]:
    # This checkout's code, and this interpreter's scripts (`ansel`) for rules and SLURM jobs alike.
    return dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(workdir / "src"), os.environ.get("PYTHONPATH")])),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
    )


def start_snakemake(workdir: Path, profiles: list[str]) -> subprocess.Popen:
    with open(workdir / "snakemake.out", "w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "snakemake", *profiles, *TARGET],
            cwd=workdir,
            env=_env(workdir),
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def finish(run: subprocess.Popen, workdir: Path, deadline: float) -> str:
    """Wait for a run started by start_snakemake; return its output, fail on error."""
    try:
        run.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        run.send_signal(signal.SIGINT)  # Snakemake cancels its SLURM jobs on SIGINT (SIGTERM waits for them)
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            run.kill()
            run.wait()
        for job in squeue(workdir, "-t", "PENDING,RUNNING"):
            subprocess.run(["scancel", job["id"]])
    output = (workdir / "snakemake.out").read_text()
    assert run.returncode == 0, f"snakemake in {workdir} exited with {run.returncode}:\n{output[-6000:]}"
    return output


def squeue(workdir: Path, *options: str) -> list[dict]:
    """This run's SLURM jobs (finished ones included: MinJobAge keeps them for 10 min)."""
    lines = subprocess.run(
        ["squeue", "-h", "--states=all", "-o", "%i|%T|%k|%Z", *options],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    jobs = [dict(zip(("id", "state", "comment", "workdir"), line.split("|"))) for line in lines]
    return [job for job in jobs if Path(job["workdir"]).resolve() == workdir.resolve()]


def job_wildcards(job_id: str) -> dict[str, str]:
    """Wildcards of a Snakemake SLURM job, read from its batch script (--target-jobs rule:k=v,...)."""
    script = subprocess.run(
        ["scontrol", "write", "batch_script", job_id, "-"], capture_output=True, text=True, check=True
    ).stdout
    target = re.search(r"--target-jobs '?[^:\s']+:([^'\s]*)", script)
    assert target, f"no --target-jobs in the batch script of SLURM job {job_id}"
    return dict(pair.split("=", 1) for pair in target.group(1).split(",") if pair)


def cancel_checkpointed_training_job(workdir: Path, run: subprocess.Popen, deadline: float) -> dict:
    """scancel the first running training job that has saved state.pt; return that job."""
    tried, run_dirs = set(), {}
    while time.monotonic() < deadline and run.poll() is None:
        for job in squeue(workdir, "-t", "RUNNING"):
            if not job["comment"].startswith(f"rule_{TRAIN_RULE}") or job["id"] in tried:
                continue
            if job["id"] not in run_dirs:
                run_dirs[job["id"]] = workdir / RUN_DIR.format(**job_wildcards(job["id"]))
            run_dir = run_dirs[job["id"]]
            if not (run_dir / "state.pt").exists():
                continue
            tried.add(job["id"])
            subprocess.run(["scancel", job["id"]], check=True)
            state = wait_until_finished(workdir, job["id"])
            if state == "CANCELLED":  # not COMPLETED between the check and scancel
                return dict(job, run_dir=run_dir)
        time.sleep(0.1)
    pytest.fail(
        "no running training job with a state.pt was seen: did training end before its first checkpoint could be cancelled?"
    )


def wait_until_finished(workdir: Path, job_id: str) -> str:
    for _ in range(300):
        (job,) = squeue(workdir, "-j", job_id)
        if job["state"] not in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING"):
            return job["state"]
        time.sleep(0.1)
    pytest.fail(f"SLURM job {job_id} did not end within 30 s of scancel")


def scheduled_jobs(output: str) -> tuple[list[tuple[str, int]], list[str], dict[int, list[str]]]:
    """From Snakemake's output: (rule, jobid) of each cluster job announcement (retries
    announce again), local rule names, and Snakemake jobid -> SLURM job ids."""
    # Logs of failed jobs are echoed between two equal ===== lines; their `rule` lines are not ours.
    output = re.sub(r"^Logfile [^\n]*:\n(=+)\n.*?^\1$", "", output, flags=re.M | re.S)
    remote, local = [], []
    for kind, rule, jobid in re.findall(
        r"^(rule|localrule) (\S+):\n(?:    .*\n)*?    jobid: (\d+)$", output, flags=re.M
    ):
        if kind == "rule":
            remote.append((rule, int(jobid)))
        else:
            local.append(rule)
    submitted = collections.defaultdict(list)
    for jobid, slurm_id in re.findall(r"^Job (\d+) has been submitted with SLURM jobid (\d+)", output, flags=re.M):
        submitted[int(jobid)].append(slurm_id)
    return remote, local, submitted


def without_timings(value):
    """Drop wall-clock figures (keys starting with "seconds"): they differ between any two runs."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if not k.startswith("seconds")}
    return value


def metrics(workdir: Path) -> dict[str, object]:
    """Each run's metrics.json, timings dropped."""
    paths = sorted(workdir.glob(RUN_DIR.format(dataset="*", model="*", seed="*") + "/metrics.json"))
    return {str(p.relative_to(workdir)): without_timings(json.loads(p.read_text())) for p in paths}


def test_smoke_preset_on_slurm_matches_local_and_resumes_cancelled_training(tmp_path):
    slurm_dir = copy_repo(tmp_path / "slurm")
    local_dir = copy_repo(tmp_path / "local")
    deadline = time.monotonic() + TIMEOUT_S
    slurm_run = start_snakemake(slurm_dir, SLURM_PROFILES)
    local_run = start_snakemake(local_dir, LOCAL_PROFILES)
    cancelled = cancel_checkpointed_training_job(slurm_dir, slurm_run, deadline)
    slurm_output = finish(slurm_run, slurm_dir, deadline)
    finish(local_run, local_dir, deadline)

    remote, local, submitted = scheduled_jobs(slurm_output)
    slurm_jobs = {job["id"]: job for job in squeue(slurm_dir)}
    print(f"local rules: {sorted(set(local))}")
    print("cluster jobs (Snakemake jobid -> SLURM job ids, SLURM state, rule/wildcards):")
    for jobid, ids in sorted(submitted.items()):
        for slurm_id in ids:
            job = slurm_jobs.get(slurm_id, {})
            print(f"  {jobid:4d} -> {slurm_id:>6} {job.get('state', '?'):10} {job.get('comment', '?')}")

    assert any(rule == TRAIN_RULE for rule, _ in remote), "no training job ran on the cluster"
    announced = collections.Counter(jobid for _, jobid in remote)
    assert {jobid: len(submitted.get(jobid, [])) for jobid in announced} == dict(announced), (
        "a cluster job was announced without an sbatch submission (or submitted twice)"
    )
    assert set(submitted) == set(announced)
    all_ids = [slurm_id for ids in submitted.values() for slurm_id in ids]
    assert sorted(slurm_jobs) == sorted(all_ids), "SLURM and Snakemake disagree on this run's jobs"
    assert {i: j["state"] for i, j in slurm_jobs.items() if i != cancelled["id"]} == dict.fromkeys(
        set(all_ids) - {cancelled["id"]}, "COMPLETED"
    )

    (retried,) = [ids for ids in submitted.values() if cancelled["id"] in ids]
    assert retried[-1] != cancelled["id"] and slurm_jobs[retried[-1]]["state"] == "COMPLETED", (
        f"the cancelled training job {cancelled['id']} was not resubmitted: {retried}"
    )
    resumed = [
        (log, int(m.group(1)))
        for log in (slurm_dir / "logs").rglob("*.log")
        for m in RESUMED.finditer(log.read_text(errors="replace"))
    ]
    print(
        f"cancelled SLURM job {cancelled['id']} ({cancelled['run_dir'].relative_to(slurm_dir)}); retried as {retried[1:]}; {resumed}"
    )
    assert resumed and all(epoch >= 1 for _, epoch in resumed), (
        "the retried training job did not resume from its checkpoint"
    )

    slurm_metrics, local_metrics = metrics(slurm_dir), metrics(local_dir)
    assert slurm_metrics, "the SLURM run wrote no metrics.json"
    assert slurm_metrics == local_metrics

    # A finished run is complete: neither profile finds anything left to do (no mtime trigger).
    for workdir, profiles in ((slurm_dir, SLURM_PROFILES), (local_dir, LOCAL_PROFILES)):
        dry = subprocess.run(
            [sys.executable, "-m", "snakemake", *profiles, "-n", *TARGET],
            cwd=workdir,
            capture_output=True,
            text=True,
            env=_env(workdir),
        )
        assert "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout[-2000:] + dry.stderr[-2000:]
