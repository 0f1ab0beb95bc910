"""A dense optimizer's step over a large parameter, one block of rows at a time.

torch's optimizers update a parameter as a whole: Adadelta's step allocates two temporaries the size
of the parameter, Adam's and RMSprop's one or two. For a trainable 30,122 x 300 embedding table that
is 36 MB each, on top of the table, its gradient and the optimizer's state. Every one of these
updates is elementwise, so the same optimizer handed the table as views of its row blocks computes
the same numbers (bit-equal) with temporaries of one block. ``RowBlocks`` does that: the optimizer
holds the blocks (detached views sharing the table's storage) and each step hands them their rows of
the gradient.
"""

from __future__ import annotations

from typing import Callable

import torch

# Elements of a block: 4 MB of float32 temporaries at a time.
BLOCK_ELEMENTS = 1 << 20


class RowBlocks:
    """``make(parameters)`` (a torch optimizer) over ``params``, a parameter of more than ``block``
    elements split into views of whole rows; the trainer sets ``param_groups``' lr, steps, zeroes
    and saves it as the optimizer itself."""

    def __init__(self, make: Callable[[list], torch.optim.Optimizer], params: list, block: int = BLOCK_ELEMENTS):
        self.params = list(params)
        self.split: list[tuple[torch.Tensor, int, list[torch.Tensor]]] = []  # (parameter, rows a block, views)
        handed = []
        for p in self.params:
            if p.dim() < 2 or p.numel() <= block:
                handed.append(p)
                continue
            rows = max(1, block // p[0].numel())
            views = list(p.detach().split(rows))
            self.split.append((p, rows, views))
            handed += views
        self.optimizer = make(handed)

    @property
    def param_groups(self) -> list[dict]:
        # the optimizer's live list: its load_state_dict replaces the list, so a copy taken before a
        # resume would take the trainer's learning rates where the optimizer no longer reads them
        return self.optimizer.param_groups

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        for p, rows, views in self.split:
            grads = [None] * len(views) if p.grad is None else p.grad.split(rows)
            for view, grad in zip(views, grads):
                view.grad = grad
        self.optimizer.step()
        for _, _, views in self.split:  # the blocks hold no gradient between steps
            for view in views:
                view.grad = None

    def state_dict(self) -> dict:
        return self.optimizer.state_dict()

    def load_state_dict(self, state: dict) -> None:
        """The blocks' state, or a whole-parameter one (torch's optimizer over the unsplit parameters,
        as runs saved it before row blocks): each large parameter's state split into its blocks'."""
        saved = sum(len(g["params"]) for g in state["param_groups"])
        if saved == len(self.params) != len(self.param_groups[0]["params"]) and len(self.param_groups) == 1:
            state = self._split(state)
        self.optimizer.load_state_dict(state)

    def _split(self, state: dict) -> dict:
        blocks = {id(p): (rows, len(views)) for p, rows, views in self.split}
        per_param, handed = [], 0
        for i, p in enumerate(self.params):
            rows, n = blocks.get(id(p), (None, 1))
            whole = state["state"].get(i)
            for j in range(n):
                if whole is not None:
                    per_param.append((handed, {k: _block(v, p, rows, j) for k, v in whole.items()}))
                handed += 1
        (group,) = state["param_groups"]
        return {"state": dict(per_param), "param_groups": [{**group, "params": list(range(handed))}]}


def _block(value, p: torch.Tensor, rows: int | None, j: int):
    """Block ``j``'s part of one entry of a parameter's state: its rows of a tensor shaped like the
    parameter; a copy of anything else (a step count), which each block then advances on its own."""
    if not torch.is_tensor(value):
        return value
    return value.split(rows)[j] if rows and value.shape == p.shape else value.clone()
