"""A run's arithmetic on the device (``train.precision``): ``fp32`` (every matmul and cuDNN
convolution or LSTM in full float32), ``tf32`` (those in TensorFloat-32 on a CUDA GPU: float32 in and
out, 10-bit mantissas inside, several times the fp32 rate from Ampere on) or ``bf16`` (the training
steps' forward passes under ``torch.autocast`` to bfloat16, the rest in tf32).

Scoring (dev and test) never runs in bfloat16: its 8-bit mantissa ties candidates a ranking tells
apart, so a bf16 run scores in tf32. On the CPU tf32 is float32 (no such mode there); bf16 autocasts.

torch's own defaults are neither fp32 nor tf32: cuDNN in TF32, matmuls in float32. The GPU records
made before this setting (2026-11-28) ran so."""

from __future__ import annotations

import contextlib

import torch


@contextlib.contextmanager
def arithmetic(precision: str, device: torch.device):
    """The TF32 switches for ``precision`` while the block runs (training and scoring), restored after."""
    if device.type != "cuda":
        yield
        return
    tf32 = precision != "fp32"
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = tf32
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def forward_precision(precision: str, device: torch.device):
    """Where a training step's forward pass (and its loss) runs: bfloat16 autocast for ``bf16``."""
    if precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()
