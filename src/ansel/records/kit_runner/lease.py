"""What every job of one runner call shares: the kit's folder, the commit it was packed from (the runs'
provenance), the deadline (brought forward by SIGTERM or SIGINT) and the runner's log; and child
processes stopped at the deadline with their whole process group."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Lease:
    kit: Path  # the kit's folder: kit.json, the data the runs read; the jobs run there
    commit: str  # the commit the kit was packed from
    until: float  # the deadline (time.time()): nothing starts after it, what runs then is stopped
    log_path: Path
    stopped: threading.Event = field(default_factory=threading.Event)  # a stop signal: the deadline is now

    def stop_on_signals(self) -> None:
        """SIGTERM and SIGINT stop everything as the deadline would: the archive is still written."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stopped.set())

    def out_of_time(self) -> bool:
        return time.time() >= self.until or self.stopped.is_set()

    def log(self, message: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {message}"
        print(line, flush=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "a") as f:
            f.write(line + "\n")

    def wait(self, proc: subprocess.Popen, until: float | None = None) -> str:
        """Wait for ``proc`` until ``until`` (default the deadline) or a stop signal, then stop its
        process group: "ok", "failed (rc N)" or "cut"."""
        until = self.until if until is None else until
        while proc.poll() is None:
            if time.time() >= until or self.stopped.is_set():
                stop_process(proc)
                return "cut"
            time.sleep(0.2)
        return "ok" if proc.returncode == 0 else f"failed (rc {proc.returncode})"


def stop_process(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group of ``proc`` (started as its own group), SIGKILL after 10 s. A group,
    not a session: a session is a scheduler autogroup of its own on Linux, which `nice` on the runner
    would not reach (a kit on a shared CPU runs at the priority it was started with)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass
