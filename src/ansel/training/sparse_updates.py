"""``train.embedding_updates: sparse``: trainable word-embedding tables get sparse gradients (the
rows a batch reads) and an optimizer that updates those rows only, where a dense one reads and writes
the whole table every step (16,715 x 300 for WikiQA: most of a MatchZoo model's step).

Per optimizer, what a row the batch did not read undergoes, and what the sparse update does:
- ``adadelta``: its weights stay (the step is zero), its two running averages decay by rho:
  ``LazyAdadelta`` applies that decay (rho ** steps skipped) when the row is next read: the same
  arithmetic in exact numbers (float rounding aside);
- ``adagrad`` and ``sgd`` without momentum: nothing changes; torch's own sparse support, the same;
- ``adam``: its moments decay and its weights move on them; ``torch.optim.SparseAdam`` ("lazy Adam")
  updates a row's moments and weights only at the steps that read it: other arithmetic, an option
  whose effect on MAP is measured before a record uses it;
- ``rmsprop``, ``sgd`` with momentum, any weight decay or gradient clipping: refused when the
  settings load (``TrainConfig``): no exact or library sparse form.
No library offers a sparse Adadelta: LazyAdadelta is written here.
"""

from __future__ import annotations

import torch
from torch import nn


class LazyAdadelta(torch.optim.Optimizer):
    """Adadelta for sparse gradients (``torch.optim.Adadelta``'s update, rows read by the batch only);
    a row's running averages catch up on the steps it missed (rho ** k) when it is next read."""

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6):
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps})

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        for state in self.state.values():  # torch casts a state to its parameter's dtype: the step counts back
            state["last"] = state["last"].long()

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.coalesce()
                state = self.state[p]
                if not state:
                    state["step"] = torch.zeros((), dtype=torch.int64)
                    state["square_avg"] = torch.zeros_like(p)
                    state["acc_delta"] = torch.zeros_like(p)
                    state["last"] = torch.zeros(p.shape[0], dtype=torch.int64, device=p.device)
                state["step"] += 1
                rows, g = grad.indices()[0], grad.values()
                missed = (state["step"].to(p.device) - 1 - state["last"][rows]).to(p.dtype).unsqueeze(1)
                catch_up = torch.pow(torch.as_tensor(rho, dtype=p.dtype, device=p.device), missed)
                square_avg = state["square_avg"][rows] * catch_up * rho + (1 - rho) * g * g
                acc_delta = state["acc_delta"][rows] * catch_up
                delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * g
                state["acc_delta"][rows] = acc_delta * rho + (1 - rho) * delta * delta
                state["square_avg"][rows] = square_avg
                state["last"][rows] = state["step"].to(p.device)
                p[rows] -= lr * delta


class SplitOptimizer:
    """The run's optimizer for the dense parameters and a sparse one for the embedding tables, as one:
    the trainer sets ``param_groups``' lr, steps, zeroes and saves both together."""

    def __init__(self, dense, sparse: torch.optim.Optimizer):  # dense: the other parameters' (RowBlocks) or None
        self.parts = [o for o in (dense, sparse) if o is not None]
        self.sparse_params = [p for g in sparse.param_groups for p in g["params"]]

    @property
    def param_groups(self) -> list[dict]:
        # the parts' live groups (each load_state_dict replaces a part's list)
        return [g for o in self.parts for g in o.param_groups]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for o in self.parts:
            o.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        for p in self.sparse_params:
            if p.grad is not None and not p.grad.is_sparse:
                raise RuntimeError(
                    "train.embedding_updates: sparse: the model reads an embedding table other "
                    "than by lookup (its gradient is dense); use embedding_updates: dense"
                )
        for o in self.parts:
            o.step()

    def state_dict(self) -> dict:
        return {"parts": [o.state_dict() for o in self.parts]}

    def load_state_dict(self, state: dict) -> None:
        for o, s in zip(self.parts, state["parts"], strict=True):
            o.load_state_dict(s)


def sparse_tables(model: nn.Module) -> list[nn.Parameter]:
    """The model's trainable word-embedding tables, switched to sparse gradients."""
    tables = []
    for m in model.modules():
        if isinstance(m, nn.Embedding) and m.weight.requires_grad and not any(m.weight is t for t in tables):
            m.sparse = True
            tables.append(m.weight)
    return tables


def sparse_optimizer(name: str, tables: list[nn.Parameter], lr: float, adadelta: dict) -> torch.optim.Optimizer:
    if name == "adadelta":
        return LazyAdadelta(tables, lr=lr, **adadelta)
    if name == "adam":
        return torch.optim.SparseAdam(tables, lr=lr)
    if name == "adagrad":
        return torch.optim.Adagrad(tables, lr=lr)
    if name == "sgd":
        return torch.optim.SGD(tables, lr=lr)
    raise ValueError(f"embedding_updates: sparse has no form for optimizer {name!r}")
