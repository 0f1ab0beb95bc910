"""One epoch of training steps: each run's batches (``Feed``: its examples in an order seeded by
(seed, epoch), its drawn negatives), the loss of a batch (``batch_loss``), and the loop
(``EpochTrainer``) that steps one model (``Alone``) or a row's seeds stacked
(``ansel.training.seed_stack.SeedStack``) through them: one loop for both, so a seed stacked
takes the steps it takes alone."""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from ansel import interrupts
from ansel.data.batches import RunData
from ansel.data.device_ids import to_device
from ansel.training.config import TrainConfig
from ansel.training.losses import category_loss, pair_loss
from ansel.training.precision import forward_precision
from ansel.training.sampler import NegativeSampler
from ansel.training.seed_dropout import generator_state


def learning_rate(t: TrainConfig, epoch: int) -> float:
    """``constant``, or ``inverse_epoch``: lr / epoch (the per-epoch decay of dos Santos et al.)."""
    return t.lr / epoch if t.lr_schedule == "inverse_epoch" else t.lr


class DivergedError(ArithmeticError):
    """A training loss that is not finite: the weights are NaN or infinite from here on. ``index``:
    which of the epoch's runs (a stack of seeds trains several)."""

    def __init__(self, message: str, index: int = 0):
        super().__init__(message)
        self.index = index


def batch_loss(model, batch: dict, t: TrainConfig) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One training batch's loss (``batch``: ``Feed.batch``'s tensors) and, for a pairwise loss, the
    batch's mean score of its positives and of their negatives (None for the others): a loss stuck at
    the margin with equal scores is the collapse of reports/apnet-training-collapse.md."""
    q = batch["q"]
    if t.loss == "category":
        return category_loss(model.classify(q), batch["category"]), None
    s = model(q, batch["a"])
    if t.loss == "classification":  # the score is the two-way head's log-odds (layers.OutputHead)
        return F.binary_cross_entropy_with_logits(s, batch["labels"]), None
    s_neg = model(q, batch["neg"])
    rank = pair_loss(s, s_neg, t)
    alpha = t.category_weight
    loss = (1 - alpha) * rank + alpha * category_loss(model.classify(q), batch["category"]) if alpha else rank
    return loss, torch.stack([s.detach().mean(), s_neg.detach().mean()])


class Feed:
    """One run's training batches, seeded by (seed, epoch): pairwise, its shuffled training positives
    (each with a negative drawn by its own generator, scored by its own ``model`` for sampled_max);
    for ``loss: classification``, every labelled training pair; for ``category``, every training pair
    whose question has a category."""

    def __init__(self, cfg: dict, t: TrainConfig, data: RunData, model, device):
        self.seed, self.t, self.data, self.model, self.device = cfg["seed"], t, data, model, torch.device(device)
        self.q_ids, self.a_ids = data.on_device(self.device)
        cands, qi, ai = data.pairs("train")
        labels = cands.label.to_numpy()
        if t.loss == "classification":
            self.pos_q, self.pos_a, self.labels = qi, ai, (labels > 0).astype(np.float32)
        elif t.loss == "category":  # one step per training pair, as the joint loss sees each question
            keep = (labels == 1) & (data.q_category[qi] >= 0)
            self.pos_q, self.pos_a = qi[keep], ai[keep]
        else:
            self.pos_q, self.pos_a = qi[labels == 1], ai[labels == 1]
            self.sampler = NegativeSampler(
                qi,
                ai,
                labels,
                t.negatives.strategy,
                t.negatives.n,
                t.negatives.source,
                one_call=self.device.type != "cpu",
            )

    def epoch(self, epoch: int) -> tuple[np.ndarray, np.random.Generator]:
        """(the epoch's example order, the generator its negatives are drawn from); the torch generator
        reseeded (dropout)."""
        rng = np.random.default_rng([self.seed, epoch])
        torch.manual_seed(self.seed * 100_003 + epoch)
        self.torch_state = generator_state(self.device)  # what a stack of seeds draws this run's dropout from
        order = rng.permutation(len(self.pos_q))
        if self.t.max_batches:  # a preset's shorter epoch: a fresh random subset each epoch
            order = order[: self.t.batch_size * self.t.max_batches]
        return order, rng

    def batch(self, rows: np.ndarray, rng: np.random.Generator) -> dict:
        """The tensors ``batch_loss`` reads for the examples ``rows``."""
        t, data = self.t, self.data
        batch = {"q": self.q_ids.rows(self.pos_q[rows])}
        if t.loss == "category" or t.category_weight:
            batch["category"] = to_device(data.q_category[self.pos_q[rows]], self.device)
        if t.loss == "category":
            return batch
        batch["a"] = self.a_ids.rows(self.pos_a[rows])
        if t.loss == "classification":
            batch["labels"] = to_device(self.labels[rows], self.device)
        else:
            neg_a = self.sampler.sample(self.pos_q[rows], rng, self.model, data.q_ids, data.a_ids)
            batch["neg"] = self.a_ids.rows(neg_a)
        return batch


class Alone:
    """One run's model as the epoch loop trains it (``seed_stack.SeedStack``: several, stacked)."""

    loss_shape = ()

    def __init__(self, model, params: list, t: TrainConfig):
        self.model, self.params, self.t = model, params, t

    def train(self) -> None:
        self.model.train()

    def losses(self, batches: list[dict], feeds: list[Feed]):
        return batch_loss(self.model, batches[0], self.t)  # dropout draws from the global generator

    def clip(self, max_norm: float) -> None:
        torch.nn.utils.clip_grad_norm_(self.params, max_norm)


class EpochTrainer:
    """One epoch of steps over the ``feeds`` (one per run) through ``trainee`` (one model, or the
    runs' stacked model): each step one batch from every feed, one backward, one optimizer step."""

    def __init__(self, cfg, t: TrainConfig, feeds: list[Feed], trainee, optimizer, device, progress: bool):
        self.cfg, self.t, self.feeds, self.trainee, self.optimizer = cfg, t, feeds, trainee, optimizer
        self.device, self.progress = device, progress
        self.on_step: tuple[int, Callable[[int], None]] | None = None  # (every N steps, call with the step)
        self.scores: list[torch.Tensor] = []  # pairwise: each batch's mean positive and negative scores
        self.losses: list[torch.Tensor] = []  # train.batch_log: each batch's loss (kept on the device)
        self.steps_before = 0  # the steps of the epochs before the one run last

    def run(self, epoch: int) -> tuple[list[dict], dict]:
        """(the epoch's log row of each feed's run, its wall time)."""
        t = self.t
        streams = [feed.epoch(epoch) for feed in self.feeds]
        lr = learning_rate(t, epoch)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        order = streams[0][0]  # every feed's is as long
        steps_before = self.steps_before = (epoch - 1) * -(-len(order) // t.batch_size)  # every epoch as many
        monitored = 0.0  # seconds of the cadence's evaluations: not the epoch's training time
        self.trainee.train()
        # summed on the device in float64 (what Python's float sums): no host synchronisation per batch
        total = torch.zeros(self.trainee.loss_shape, dtype=torch.float64, device=self.device)
        self.scores.clear()
        self.losses.clear()
        n_batches, started = 0, time.perf_counter()
        seeds = "+".join(str(feed.seed) for feed in self.feeds)
        bar = tqdm(
            range(0, len(order), t.batch_size),
            desc=f"{self.cfg['model']} seed{seeds} epoch {epoch}",
            disable=None if self.progress else True,  # None: no bar where stderr is no terminal (a job's log)
            leave=False,
            mininterval=2,
        )
        for i in bar:
            with forward_precision(t.precision, self.device):  # the negatives' scoring and the loss
                loss, scores = self.trainee.losses(
                    [feed.batch(o[i : i + t.batch_size], rng) for feed, (o, rng) in zip(self.feeds, streams)],
                    self.feeds,
                )
            if t.loss in ("hinge", "pointwise"):
                self.scores.append(scores)
            with interrupts.held():  # a Ctrl-C inside backward can hang torch's autograd engine
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward(torch.ones_like(loss))  # a stack's losses: each seed's gradient its own loss's
                if t.clip_norm:
                    self.trainee.clip(t.clip_norm)
                self.optimizer.step()
            total += loss.detach()
            if t.batch_log:
                self.losses.append(loss.detach())
            n_batches += 1
            if self.on_step and (steps_before + n_batches) % self.on_step[0] == 0:
                at = time.perf_counter()
                self.on_step[1](steps_before + n_batches)
                monitored += time.perf_counter() - at
        loss_sums = total.reshape(-1).tolist()  # waits for the device's queued work, so the epoch's time is all of it
        for index, (feed, loss_sum) in enumerate(zip(self.feeds, loss_sums)):
            if not math.isfinite(loss_sum):  # one non-finite batch makes the sum so: checked once an epoch
                raise DivergedError(
                    f"models.{self.cfg['model']} seed {feed.seed}: the training loss of epoch {epoch} "
                    f"is {loss_sum} (lr {lr}): the run diverged; lower train.lr or set "
                    "train.clip_norm",
                    index,
                )
        seconds = time.perf_counter() - started - monitored
        rows = [{"epoch": epoch, "lr": lr, "loss": loss_sum / max(1, n_batches)} for loss_sum in loss_sums]
        if self.scores:  # where the epoch ended: over its last tenth of batches
            end = torch.stack(self.scores[-max(1, len(self.scores) // 10) :]).double().mean(0).reshape(-1, 2)
            for row, (pos, neg) in zip(rows, end.tolist()):
                row["pos_score"], row["neg_score"] = pos, neg
        return (
            rows,
            {
                "epoch": epoch,
                "seconds": round(seconds, 3),
                "batches": n_batches,
                "seconds_per_batch": round(seconds / max(1, n_batches), 5),
            },
        )

    def batch_rows(self, epoch: int) -> list[list[dict]]:
        """``train.batch_log``: each feed's rows of batches.csv for the epoch just run (the step counted
        over the run; the mean positive and negative scores where the loss is pairwise), else none."""
        if not self.t.batch_log:
            return [[] for _ in self.feeds]
        n, runs = len(self.losses), len(self.feeds)
        losses = torch.stack(self.losses).double().reshape(n, runs).cpu().tolist()
        scores = (
            torch.stack(self.scores).double().reshape(n, runs, 2).cpu().tolist()
            if self.scores
            else [[[None, None]] * runs] * n
        )
        return [
            [
                {
                    "epoch": epoch,
                    "step": self.steps_before + i + 1,
                    "loss": losses[i][r],
                    "pos_score": scores[i][r][0],
                    "neg_score": scores[i][r][1],
                }
                for i in range(n)
            ]
            for r in range(runs)
        ]
