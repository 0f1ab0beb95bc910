"""Dropout in a stack of seeds, each seed's mask the one its alone run draws.

An alone run draws every dropout mask from torch's global generator, seeded per epoch from its seed,
at the shape its own batch gives (its texts trimmed to its longest). A vmapped step cannot draw so:
one call serves every seed, at the widest seed's shape. So the masks are drawn before the step: per
seed, from that seed's generator state, by the model's own dropout module applied to ones of the
shape the seed's alone forward would hand it (``x * noise`` with ``x = 1`` is the noise itself, and
multiplying by it in the step is the arithmetic the alone dropout does); then padded with ones to the
stacked shape and handed to the step, where each dropout module multiplies by its mask in call order.
The shapes come from the model run on the meta device (no arithmetic), once per distinct batch shape.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

# dropouts that multiply by a drawn mask (and so are reproduced by it); AlphaDropout is affine
MULTIPLICATIVE = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d)


class MaskedDropout(nn.Module):
    """Stands in for a dropout module of the stacked model: multiplies by the next mask handed in,
    records its input's shape while tracing, passes through in eval mode."""

    def __init__(self, original: nn.Module, masks: SeedDropout):
        super().__init__()
        self.original, self._masks = original, [masks]  # a list: the masks' owner is not a submodule

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return x
        return self._masks[0].apply(self, x)


class SeedDropout:
    """The masks of one stacked step: ``install`` puts ``MaskedDropout`` in place of the base model's
    dropouts; ``draw`` draws each seed's masks from its generator state (advanced as its alone run's)."""

    def __init__(self, base: nn.Module, loss: Callable):
        self.base, self.loss = base, loss
        self.modules: list[MaskedDropout] = []
        for _, m in list(base.named_modules()):
            for child_name, child in list(m.named_children()):
                if isinstance(child, MULTIPLICATIVE) and child.p > 0:
                    masked = MaskedDropout(child, self)
                    setattr(m, child_name, masked)
                    self.modules.append(masked)
        self._trace: list | None = None
        self._pending: list[torch.Tensor] | None = None
        self._shapes: dict[tuple, list[tuple]] = {}

    def apply(self, module: MaskedDropout, x: torch.Tensor) -> torch.Tensor:
        if self._trace is not None:
            self._trace.append((module, tuple(x.shape)))
            return x
        assert self._pending is not None, "hand() gives the masks before a stacked forward"
        return x * self._pending.pop(0)

    def shapes(self, batch: dict) -> list[tuple]:
        """(module, input shape) of every dropout call of the loss of ``batch`` (one seed's), in order."""
        key = tuple((k, tuple(v.shape), v.dtype) for k, v in batch.items())
        if key not in self._shapes:
            self._trace = []
            try:
                with torch.no_grad():
                    self.loss(
                        self.base, {k: torch.empty(v.shape, dtype=v.dtype, device="meta") for k, v in batch.items()}
                    )
            finally:
                self._shapes[key], self._trace = self._trace, None
        return self._shapes[key]

    def draw(self, batches: list[dict], padded: dict, states: list[torch.Tensor], device) -> list[torch.Tensor]:
        """Every dropout call's [seeds, ...] masks for the step of ``batches`` (one per seed; ``padded``:
        them stacked), each seed's drawn from ``states[s]``, which is advanced in place."""
        wide = self.shapes({k: v[0] for k, v in padded.items()})
        per_seed = []
        with _generator(device) as generator:
            for s, batch in enumerate(batches):
                calls = self.shapes(batch)
                if [m for m, _ in calls] != [m for m, _ in wide]:
                    raise RuntimeError("a seed's forward calls its dropouts otherwise than the stacked one")
                generator.set(states[s])
                masks = []
                for (module, shape), (_, full) in zip(calls, wide):
                    if len(shape) != len(full) or any(a > b for a, b in zip(shape, full)):
                        raise RuntimeError(f"a seed's dropout input {shape} does not fit the stacked {full}")
                    mask = module.original(torch.ones(shape, device=device))
                    masks.append(
                        F.pad(mask, [n for a, b in zip(reversed(shape), reversed(full)) for n in (0, b - a)], value=1.0)
                    )
                states[s] = generator.get()
                per_seed.append(masks)
        return [torch.stack(masks) for masks in zip(*per_seed)]

    def hand(self, masks: list[torch.Tensor]) -> None:
        """The masks (one seed's, inside the vmapped step) the next dropout calls multiply by."""
        self._pending = list(masks)


class _generator:
    """The global generator of ``device``'s type, its state swapped per seed and restored after."""

    def __init__(self, device):
        self.cuda = torch.device(device).type == "cuda"
        self.device = torch.device(device)

    def get(self) -> torch.Tensor:
        return torch.cuda.get_rng_state(self.device) if self.cuda else torch.get_rng_state()

    def set(self, state: torch.Tensor) -> None:
        if self.cuda:
            torch.cuda.set_rng_state(state, self.device)
        else:
            torch.set_rng_state(state)

    def __enter__(self):
        self.saved = self.get()
        return self

    def __exit__(self, *exc):
        self.set(self.saved)


def generator_state(device) -> torch.Tensor:
    """The state of the global generator dropout on ``device`` draws from."""
    return _generator(device).get()
