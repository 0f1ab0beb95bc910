"""A trainable embedding table's gradient built in one buffer kept across steps (CPU), bit for bit
the dense backward's.

torch's dense embedding backward allocates a zeroed table-sized gradient for every read of the table
(36 MB for a 30,122 x 300 table, four reads a pairwise step). In a process that keeps freed memory
(``ansel.memory``), the forward pass's smaller buffers settle in the holes they leave, the next does
not fit, and the heap grows: ARC-I with trained vectors (Adam, WikiQA, batches of 20 triples) held
597 MB after its first step and 719 MB from about step 50 on. Here each read's backward sums its
gradient rows per distinct word, in the order the dense backward adds them, and adds those sums into
one buffer in the order autograd would add the reads' tables: the same numbers, without a table-sized
allocation. On a GPU the dense backward stays (its own caching allocator has no such heap).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def keep_gradient_buffers(model: nn.Module) -> list[nn.Parameter]:
    """Give the model's trainable, densely updated embedding tables on the CPU one kept gradient
    buffer each (every module reading a table shares its buffer); the tables given one."""
    buffers: dict[int, torch.Tensor] = {}
    kept: list[nn.Parameter] = []
    for m in model.modules():
        w = getattr(m, "weight", None)
        if (
            not isinstance(m, nn.Embedding)
            or not w.requires_grad
            or m.sparse
            or m.max_norm is not None
            or m.scale_grad_by_freq
            or w.device.type != "cpu"
        ):
            continue
        if id(w) not in buffers:
            buffers[id(w)] = torch.zeros_like(w)
            kept.append(w)
        m.forward = _reading(m, buffers[id(w)])
    return kept


def _reading(module: nn.Embedding, buffer: torch.Tensor):
    def forward(ids: torch.Tensor) -> torch.Tensor:
        return _IntoBuffer.apply(ids, module.weight, module.padding_idx, buffer)

    return forward


class _IntoBuffer(torch.autograd.Function):
    """``F.embedding``; its backward adds the read's gradient into ``buffer``, which becomes the
    table's gradient at the first read after the gradients were dropped (zeroed first)."""

    @staticmethod
    def forward(ctx, ids, weight, padding_idx, buffer):
        ctx.save_for_backward(ids)
        ctx.weight, ctx.padding_idx, ctx.buffer = weight, padding_idx, buffer
        return F.embedding(ids, weight, padding_idx)

    @staticmethod
    def backward(ctx, grad):
        (ids,) = ctx.saved_tensors
        ids, grad = ids.reshape(-1), grad.reshape(-1, grad.size(-1))
        if ctx.padding_idx is not None:
            read = ids != ctx.padding_idx
            ids, grad = ids[read], grad[read]
        rows, at = torch.unique(ids, return_inverse=True)
        sums = grad.new_zeros(len(rows), grad.size(1)).index_add_(0, at, grad)  # each row's entries in order
        weight = ctx.weight
        if weight.grad is None:
            weight.grad = ctx.buffer.zero_()
        weight.grad.index_add_(0, rows, sums)  # rows are distinct: one addition each, as autograd's sum
        return None, None, None, None
