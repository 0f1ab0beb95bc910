"""A row's seeds trained as one model: their parameters stacked on a leading seed axis and every
training step one vmapped forward and backward (``torch.func``), so a device runs one large kernel
per layer instead of one small kernel per seed.

Each seed stays its own run: its model is built alone from its seed (the same initial weights), its
batches and negatives come from its own generators (``epoch.Feed``), and its optimizer state is
its slice of the stacked optimizer's (every supported update is elementwise; gradient clipping is
per seed). The seeds' models stay real modules whose parameters are views of the stacked tensors:
the sampler scores with them, dev is scored with them (and the monitor splits at ``monitor_every``'s
step cadence, each seed's between the same steps as alone), and their weights are saved as each run's.
A batch is padded to the widest seed's texts, where an alone run trims it to its own: the models
that stack mask padding, so the scores agree to float rounding (tests/training/test_seed_stack.py).

Dropout masks are drawn per seed from its own generator, as its alone run draws them
(``ansel.training.seed_dropout``). What cannot stack is refused by ``check_stackable`` with the key to
change (the seeds then train one after another, ``ansel train --seeds``): recurrent layers (torch has
no batching rule for them), a dropout that is not a mask (AlphaDropout), sparse embedding updates;
and, by ``probe``, a model whose forward vmap cannot run (a
tensor's value read into Python, an autograd Function without a vmap rule). GGSA's group attention
stacks: its slots come from the shapes, its Function has vmap's rule (``models.self_attention``).
"""

from __future__ import annotations

import copy

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from ansel.training.seed_dropout import MULTIPLICATIVE, SeedDropout


class StackError(ValueError):
    """A row's seeds that cannot be one stacked model; the message names the key."""


def check_stackable(cfg: dict, t, model: nn.Module) -> None:
    """Refuse, naming the key, a run config (``t``: its TrainConfig) whose seeds would not each train
    exactly as alone in one stacked model."""
    where = f"models.{cfg['model']}"
    if t.embedding_updates == "sparse":
        raise StackError(
            f"{where}.train.embedding_updates: sparse updates a seed's rows alone; stacked seeds "
            "need dense (or train the seeds one after another)"
        )
    for name, m in model.named_modules():
        if isinstance(m, nn.RNNBase):
            raise StackError(
                f"{where}: arch {cfg['arch']!r} has a recurrent layer ({name}: {type(m).__name__}), "
                "which torch cannot vmap over seeds; train the seeds one after another"
            )
        if isinstance(m, nn.modules.dropout._DropoutNd) and m.p > 0 and not isinstance(m, MULTIPLICATIVE):
            raise StackError(
                f"{where}.hparams.dropout: {m.p} at {name}: {type(m).__name__} is not a mask to "
                "multiply by, which a stacked step draws per seed; train the seeds one after another"
            )
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            raise StackError(
                f"{where}: arch {cfg['arch']!r} updates batch statistics ({name}), which differ per "
                "seed; train the seeds one after another"
            )


class SeedStack:
    """The seeds' ``models`` (built alone, in seed order) as one: ``losses`` of a batch per seed in one
    vmapped call, ``params`` (trainable, stacked) for one optimizer, ``clip`` per seed."""

    def __init__(self, models: list[nn.Module], loss):
        """``loss(model, batch) -> (loss, stats)``: one seed's training loss (``epoch.batch_loss``)."""
        self.models, self._loss = models, loss
        stacked, buffers = stack_module_state(models)
        # a tensor equal in every seed (frozen pretrained vectors, a fixed table) is held once
        self.shared = {
            k: v
            for k, v in {**stacked, **buffers}.items()
            if not v.requires_grad and all(torch.equal(v[0], x) for x in v[1:])
        }
        self.stacked = {k: v for k, v in stacked.items() if k not in self.shared}
        self.stacked |= {k: v for k, v in buffers.items() if k not in self.shared}
        self.shared = {k: v[0].clone() for k, v in self.shared.items()}
        self.params = [v for v in stacked.values() if v.requires_grad]  # the models' parameters() order
        self._base = copy.deepcopy(models[0]).to("meta")
        self.dropout = SeedDropout(self._base, loss)
        self.device = self.params[0].device if self.params else torch.device("cpu")
        with torch.no_grad():  # each seed's module reads and writes its slice of the stack, reads the shared
            for s, model in enumerate(models):
                named = dict(model.named_parameters()) | dict(model.named_buffers())
                for k, v in self.stacked.items():
                    named[k].data = v[s]
                for k, v in self.shared.items():
                    named[k].data = v
        self._step = vmap(self._seed_loss, in_dims=(0, None, 0, 0))
        self.loss_shape = (len(models),)  # one loss per seed

    def _seed_loss(self, stacked: dict, shared: dict, batch: dict, masks: list):
        self.dropout.hand(masks)
        loss, stats = self._loss(_Functional(self._base, {**stacked, **shared}), batch)
        return loss, stats if stats is not None else loss.detach().expand(2)

    def train(self) -> None:
        self._base.train()

    def losses(self, batches: list[dict], feeds: list) -> tuple[torch.Tensor, torch.Tensor]:
        """([seeds] losses, [seeds, 2] mean positive and negative scores) of one batch per seed; the
        feeds' ``torch_state`` (each seed's dropout generator) advanced as its alone step would."""
        padded = _padded(batches)
        states = [feed.torch_state for feed in feeds]
        masks = self.dropout.draw(batches, padded, states, self.device) if self.dropout.modules else []
        for feed, state in zip(feeds, states):
            feed.torch_state = state
        return self._step(self.stacked, self.shared, padded, masks)

    def probe(self, batches: list[dict], feeds: list, where: str) -> None:
        """One step's losses, nothing trained: a model whose forward vmap cannot run (a tensor's value
        read into Python, an autograd Function without a vmap rule) refused before any run's file is touched."""
        try:
            with torch.no_grad():
                self.losses(batches, feeds)
        except RuntimeError as e:
            raise StackError(
                f"{where}: the model does not run vmapped over seeds ({str(e).splitlines()[0]}); "
                "train the seeds one after another"
            ) from None

    @torch.no_grad()
    def clip(self, max_norm: float) -> None:
        """``clip_grad_norm_`` per seed: each seed's gradients scaled by its own total norm."""
        grads = [p.grad for p in self.params if p.grad is not None]
        norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads], 1).norm(dim=1)
        scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(scale.view(-1, *[1] * (g.dim() - 1)))

    def weights(self, s: int) -> dict:
        """Seed ``s``'s state_dict as compact tensors (a view would save the whole stack's storage)."""
        state, copies = self.models[s].state_dict(), dict[int, torch.Tensor]()
        for k, v in state.items():
            if v.untyped_storage().nbytes() != v.numel() * v.element_size():
                state[k] = copies.setdefault(v.data_ptr(), v.clone())
        return state


class _Functional(nn.Module):
    """The base module called with one seed's tensors (``functional_call``), its methods included."""

    def __init__(self, base: nn.Module, tensors: dict):
        super().__init__()
        self._base, self._tensors = base, tensors

    def forward(self, *args):
        return functional_call(self._base, self._tensors, args)

    def classify(self, q):
        return functional_call(_Classify(self._base), {f"m.{k}": v for k, v in self._tensors.items()}, (q,))


class _Classify(nn.Module):
    def __init__(self, m: nn.Module):
        super().__init__()
        self.m = m

    def forward(self, q):
        return self.m.classify(q)


def _padded(batches: list[dict]) -> dict:
    """One batch per seed as one [seeds, ...] batch, token ids right-padded to the widest seed's."""
    out = {}
    for key in batches[0]:
        parts = [b[key] for b in batches]
        if parts[0].dim() == 2 and not parts[0].is_floating_point():  # token ids [B, L]
            width = max(p.shape[1] for p in parts)
            parts = [nn.functional.pad(p, (0, width - p.shape[1])) for p in parts]
        out[key] = torch.stack(parts)
    return out


def split_state(state: dict, seeds: int) -> list[dict]:
    """The stacked optimizer's state_dict as each seed's alone (one entry per parameter, the form
    ``RowBlocks.load_state_dict`` takes): its slice of every parameter-shaped tensor."""

    def part(v, s):
        return v[s].clone() if torch.is_tensor(v) and v.dim() > 0 else copy.deepcopy(v)

    return [
        {
            "state": {i: {k: part(v, s) for k, v in entry.items()} for i, entry in state["state"].items()},
            "param_groups": copy.deepcopy(state["param_groups"]),
        }
        for s in range(seeds)
    ]


def join_states(states: list[dict], where: list[str]) -> dict:
    """The seeds' optimizer states (``split_state``'s form) as the stacked optimizer's; ``where``:
    each state's file, named when one was saved in another form (an alone run's row blocks)."""
    counts = {len(g["params"]) for st in states for g in st["param_groups"]}
    if len(counts) != 1 or any(len(st["param_groups"]) != 1 for st in states):
        raise StackError(
            f"{', '.join(where)}: optimizer states of different forms (a run trained alone in row "
            "blocks?): resume the seeds alone, or delete the states to start over"
        )
    first = states[0]
    return {
        "state": {
            i: {
                k: torch.stack([st["state"][i][k] for st in states]) if torch.is_tensor(v) and v.dim() > 0 else v
                for k, v in entry.items()
            }
            for i, entry in first["state"].items()
        },
        "param_groups": first["param_groups"],
    }
