"""A record's timing phases on the device, each alone and each in a child process stopped at the
deadline (a CUDA fault stays there): its benchmark scripts, a table's training steps timed alone
(``ansel step-times``), the cost measurement of its shapes (``ansel.plan.measure``) and the speed
entry (``ansel.training.speed``). The last two run as the runner's own ``measure`` and ``speed``
sub-commands (``measure_costs`` and ``time_speed`` below)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from ansel.records.kit_runner.commands import python_cmd, with_device
from ansel.records.kit_runner.lease import Lease
from ansel.records.layout import KIT_FILE


def run_bench(bench: dict, lease: Lease, device: str, out: Path) -> dict:
    """A benchmark script's printed figures into ``out/<name>.txt`` (cut at the deadline or after its
    ``timeout_s``, default 120)."""
    out.mkdir(parents=True, exist_ok=True)
    until = min(lease.until, time.time() + bench.get("timeout_s", 120))
    args = [a.replace("{device}", device) for a in bench.get("args", [])]
    started = time.time()
    with open(out / f"{bench['name']}.txt", "w") as f:
        f.write(f"$ python {bench['script']} {' '.join(args)}\n")
        f.flush()
        proc = subprocess.Popen(
            python_cmd(bench["script"], *args),
            cwd=lease.kit,
            stdout=f,
            stderr=subprocess.STDOUT,
            process_group=0,  # lease.stop_process's group, in the runner's session
            stdin=subprocess.DEVNULL,
        )
        status = lease.wait(proc, until)
    return {"phase": f"bench {bench['name']}", "status": status, "start": started, "end": time.time()}


def run_step_times(item: dict, lease: Lease, device: str, base: Path) -> dict:
    """A table's rows' training steps timed alone (``ansel step-times``) into ``base/<its file>``,
    cut at the deadline (nothing is written then)."""
    started, out = time.time(), (base / item["file"]).absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    configs = {m: with_device(cfg, device) for m, cfg in item["configs"].items()}
    cmd = ["step-times", "--config", json.dumps(configs), "--processed", item["processed"], "--out", str(out)]
    with open(out.with_suffix(".log"), "w") as f:
        proc = subprocess.Popen(
            python_cmd("-m", "ansel.cli", *cmd, "--threads", str(os.cpu_count() or 1)),
            cwd=lease.kit,
            stdout=f,
            stderr=subprocess.STDOUT,
            process_group=0,  # lease.stop_process's group, in the runner's session
            stdin=subprocess.DEVNULL,
        )
        status = lease.wait(proc)
    return {"phase": f"step-times {item['file']}", "status": status, "start": started, "end": time.time()}


def run_sub_command(phase: str, name: str, lease: Lease, device: str, log_path: Path) -> dict:
    """The runner's sub-command ``phase`` (``measure`` or ``speed``) for record ``name`` in a child
    process, its output appended to ``log_path`` (after earlier leases' lines), stopped at the deadline
    (+5 s to write what it measured last)."""
    started = time.time()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    args = [phase, "--kit", str(lease.kit.absolute()), name, device, str(lease.until)]
    with open(log_path, "a") as f:
        proc = subprocess.Popen(
            python_cmd("-m", "ansel.records.kit_runner", *args),
            cwd=lease.kit,
            stdout=f,
            stderr=subprocess.STDOUT,
            process_group=0,  # lease.stop_process's group, in the runner's session
            stdin=subprocess.DEVNULL,
        )
        status = lease.wait(proc, lease.until + 5)
    return {"phase": phase, "status": status, "start": started, "end": time.time()}


def kit_record(kit: Path, name: str) -> dict:
    """Record ``name``'s entry of the kit's kit.json."""
    return next(r for r in json.loads((kit / KIT_FILE).read_text())["records"] if r["name"] == name)


def time_speed(kit: Path, name: str, device: str, until: float) -> None:
    """The speed entry's shapes timed in each precision, alone and stacked (``ansel.training.speed``)."""
    from ansel.device import start_torch
    from ansel.training.speed import compare

    spec = kit_record(kit, name)["speed"]
    start_torch(min(8, os.cpu_count() or 1))
    compare(
        [with_device(cfg, device) for cfg in spec["configs"]],
        kit / "work" / name,
        **{k: spec[k] for k in ("precisions", "seeds", "batches", "rounds", "dev_questions", "compiled")},
        data_root=kit,
        deadline=until,
        report=lambda m: print(m, flush=True),
    )


def measure_costs(kit: Path, name: str, device: str, until: float) -> None:
    """The record's shapes' costs measured (``ansel.plan.measure``) into its ``costs/``, those an earlier
    call of the runner measured left out."""
    from ansel.device import start_torch
    from ansel.plan import measure, shape

    rec = kit_record(kit, name)
    start_torch(min(8, os.cpu_count() or 1))
    out = kit / "work" / name / "costs"
    done = {key for f in out.glob("*.json") for key in json.loads(f.read_text())}  # a second run.sh goes on
    configs = [with_device(cfg, device) for cfg in rec["measure"]["configs"] if shape(cfg) not in done]
    measure(
        configs,
        out,
        rec["measure"]["batches"],
        data_root=kit,
        deadline=until,
        report=lambda m: print(m, flush=True),
    )
