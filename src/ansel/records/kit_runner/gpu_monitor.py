"""What the device is and how busy it was: torch's and nvidia-smi's description of it, and nvidia-smi's
utilisation and memory sampled once a second for each phase's window."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path


class GpuMonitor(threading.Thread):
    """nvidia-smi's utilisation and memory once a second (no samples where there is no nvidia-smi)."""

    def __init__(self) -> None:
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

    info: dict[str, object] = {
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
        info |= {"cpu": cpu_model(), "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    return info


def cpu_model() -> str | None:
    """The CPU's model name as Linux gives it (/proc/cpuinfo), else the platform's, else None:
    two CPUs of one instruction set can still round differently (docs/records.md)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or None
