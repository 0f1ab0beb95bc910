"""Token-id batches for the architecture tests."""

import torch


def padded_ids(rows: list[list[int]], width: int) -> torch.Tensor:
    """[len(rows), width] token ids, each row right-padded with 0 (PAD)."""
    out = torch.zeros(len(rows), width, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r)
    return out
