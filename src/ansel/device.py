"""Where models run, and the process settings of every command that runs one."""

from __future__ import annotations


def resolve_device(name: str):
    """``train.device``: ``auto`` is CUDA when available, else the CPU."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"train.device: {name!r}, but torch finds no CUDA device here (use auto or cpu)")
    return device


def start_torch(threads: int) -> None:
    """Before a command allocates: keep freed memory in the process (``ansel.memory``) and use
    ``threads`` threads."""
    import torch

    from ansel.memory import keep_freed_memory

    keep_freed_memory()
    torch.set_num_threads(threads)
