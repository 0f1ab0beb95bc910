"""A dataset's id matrices resident on the training device, cut into batches there.

Copying each batch's ids from host memory makes the host wait for the device: a copy from pageable
memory synchronises the stream first, so the host cannot prepare the next batch while the device
computes this one (a hypothesis for why the costliest shapes kept an H100 13% busy,
reports/device/gpu-speed; this change is its test, not yet timed there). Here
the matrices go up once; a batch sends only its row indices (pinned, without blocking, on CUDA) and
is trimmed to its longest text by lengths counted once on the host, so no batch reads a value back.
The batch is the one ``batches.trim_padding`` cuts from the host copy, value for value.
"""

from __future__ import annotations

import numpy as np
import torch

from ansel.data.vocab import PAD


def to_device(array: np.ndarray | torch.Tensor, device: torch.device) -> torch.Tensor:
    """``array`` (host memory) on ``device``: on CUDA through pinned memory without blocking (torch's
    caching host allocator keeps the pinned block until its copy has run)."""
    t = array if isinstance(array, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(array))
    return t.pin_memory().to(device, non_blocking=True) if device.type == "cuda" else t.to(device)


class DeviceIds:
    """An id matrix [rows, max_len] on ``device`` and its rows' lengths (non-padding ids) on the host."""

    def __init__(self, ids: np.ndarray, device: torch.device):
        self.lengths = (ids != PAD).sum(1)
        self.device = device
        self.ids = torch.from_numpy(ids).to(device)

    def rows(self, rows: np.ndarray) -> torch.Tensor:
        """The matrix's ``rows`` (a batch), padding columns that every one of them has dropped."""
        width = max(int(self.lengths[rows].max(initial=0)), 1)
        return self.ids[to_device(rows, self.device), :width]
