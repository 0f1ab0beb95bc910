"""Training one run: pairwise (hinge) or pointwise loss, dev-based checkpoint selection, resume.

``train_run`` is a short driver over the steps below; the dev evaluator is passed in, so the
trainer knows nothing of metrics or scoring (``ansel.evaluation``), only of "a higher dev value
is better".

Reproducibility: every epoch reseeds torch and numpy from (seed, epoch), so an interrupted
run resumed from its last state produces exactly the numbers of an uninterrupted one.
``state.pt`` (saved atomically after each epoch, weights-only loadable) holds the model,
optimizer, best weights, their dev scores, the log and the epochs' wall times; it is removed once
the run's outputs are written. Wall times go to a timings file outside the run directory only, so
that every file of a run directory is the same bytes for the same seed (on CPU).
"""
from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import json
import math
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from tqdm import tqdm

from ansel.code_digest import train_code_digest
from ansel.data.batches import RunData, trim_padding
from ansel.device import resolve_device
from ansel.models import build_model
from ansel.models.registry import arch_module, needs_lexicon
from ansel.models.io import load_checkpoint, save_atomic, save_text, save_torch
from ansel.settings import parse
from ansel.training.config import LAST_RESULTS, TrainConfig
from ansel.training.gradient_buffers import keep_gradient_buffers
from ansel.training.losses import category_loss, pair_loss
from ansel.training.row_blocks import RowBlocks
from ansel.training.sampler import NegativeSampler
from ansel.training.sparse_updates import SplitOptimizer, sparse_optimizer, sparse_tables

# model -> (its scores of every candidate of the dev split, in the split's order; {metric: value})
DevEvaluator = Callable[[torch.nn.Module], "tuple[pd.DataFrame, dict[str, float]]"]

# Keras 2's rho and epsilon: MatchZoo 1.x trains its WikiQA models with adadelta at lr 1.0
ADADELTA = {"rho": 0.95, "eps": 1e-7}
OPTIMIZERS = {
    "sgd": lambda p, t: torch.optim.SGD(p, lr=t.lr, momentum=t.momentum, weight_decay=t.weight_decay, **_kernel(t)),
    "adam": lambda p, t: torch.optim.Adam(p, lr=t.lr, weight_decay=t.weight_decay, **_kernel(t)),
    "rmsprop": lambda p, t: torch.optim.RMSprop(p, lr=t.lr, momentum=t.momentum, weight_decay=t.weight_decay),
    "adagrad": lambda p, t: torch.optim.Adagrad(p, lr=t.lr, weight_decay=t.weight_decay, **_kernel(t)),
    "adadelta": lambda p, t: torch.optim.Adadelta(p, lr=t.lr, **ADADELTA, weight_decay=t.weight_decay),
}


def _kernel(t: TrainConfig) -> dict:
    """``train.optimizer_kernel: fused``: torch's one-pass kernel (``TrainConfig`` admits it for the
    optimizers that have one); the loop is torch's CPU default, and every record's."""
    return {"fused": True} if t.optimizer_kernel == "fused" else {}


def learning_rate(t: TrainConfig, epoch: int) -> float:
    """``constant``, or ``inverse_epoch``: lr / epoch (the per-epoch decay of dos Santos et al.)."""
    return t.lr / epoch if t.lr_schedule == "inverse_epoch" else t.lr


# What a finished training and its evaluation leave in the run directory (state.pt aside, which resumes
# the same config and is refused for another): all of it belongs to the model that made it.
EARLIER_RESULTS = ("model.pt", "log.csv", "config.json", "dev_scores.pt", "metrics.json", "run.trec", "batches.csv",
                   *LAST_RESULTS)


class DivergedError(ArithmeticError):
    """A training loss that is not finite: the weights are NaN or infinite from here on."""


@dataclass
class Trained:
    """The train -> evaluate hand-off besides the files ``train_run`` writes (model.pt, log.csv,
    config.json, timings): the selected epoch's dev scores, which ``ansel train`` stores as dev_scores.pt."""
    epochs: int
    dev_scores: pd.DataFrame | None  # None: nothing was trained (no epoch scored dev)


@dataclass
class _State:
    """What survives an interruption (``state.pt``)."""
    epoch: int = 0
    best: float = -math.inf
    best_model: dict | None = None
    best_scores: torch.Tensor | None = None
    log: list[dict] = field(default_factory=list)
    timings: list[dict] = field(default_factory=list)  # per epoch: wall time, kept out of the log
    batches: list[dict] = field(default_factory=list)  # train.batch_log: one row per training step


def train_run(cfg: dict, data: RunData, embeddings: np.ndarray | None, run_dir: Path,
              evaluate_dev: DevEvaluator, progress: bool = True, timings: Path | None = None,
              monitors: dict[str, DevEvaluator] | None = None, dvclive: bool = True) -> Trained:
    """Train ``cfg`` (a run config, ``ansel.config.run_config``), keep the weights best on dev;
    write model.pt, log.csv and config.json into run_dir, and the epochs' wall times to ``timings``.
    ``monitors`` ({split: evaluator}, ``train.monitor_splits``) are scored after every epoch into
    the log only. ``dvclive=False`` writes no dvclive/ folder (the GPU record kit: no dvclive there)."""
    t = parse(TrainConfig, cfg["train"], f"models.{cfg['model']}.train")
    if not (data.pairs("train")[0].label == 1).any():  # epochs of no batch would save an untrained model
        raise ValueError(f"{run_dir}: the train split of dataset {cfg['dataset']!r} has no positive pair; "
                         "nothing to train on")
    run_dir.mkdir(parents=True, exist_ok=True)
    for name in EARLIER_RESULTS:  # an earlier model's: a training killed from here on must not leave them as the run's
        (run_dir / name).unlink(missing_ok=True)
    started, device = time.time(), resolve_device(t.device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    vectors = vectors_sha256(embeddings)
    model, params, optimizer = _model_and_optimizer(cfg, t, data, embeddings, device)
    del embeddings  # the model holds a copy: freed now, the array's memory serves the training's tensors
    state_path, key = run_dir / "state.pt", fingerprint(cfg)
    state = _resume(state_path, key, model, optimizer, device, t.epochs)
    step = _EpochTrainer(cfg, t, data, model, optimizer, params, device, progress)
    cadence = _Cadence(monitors, model) if t.monitor_every and monitors else None  # no split to score: none
    if cadence:
        step.on_step = (t.monitor_every, cadence.evaluate)
    with _live(run_dir, state.log, dvclive) as live:
        if t.epochs == 0:  # the initial weights, scored as epoch 0: what training adds is measured against them
            row = {"epoch": 0}
            dev_scores, dev = _score_epoch(row, model, evaluate_dev, monitors, cadence)
            _select(state, 0, row, dev[t.select_metric], model, dev_scores)
            if live is not None:
                _live_log(live, row)
            print(f"epoch 0 (untrained): dev {t.select_metric} {dev[t.select_metric]:.4f}", flush=True)
        for epoch in range(state.epoch + 1, (t.epochs if params else 0) + 1):  # nothing to train: no epoch
            try:
                row, timing = step.run(epoch)
            except DivergedError as e:  # resumed, the same config diverges again: nothing of it is of use
                state_path.unlink(missing_ok=True)
                shutil.rmtree(run_dir / "dvclive", ignore_errors=True)
                raise DivergedError(f"{run_dir}: {e}; nothing of the run is kept") from None
            dev_started = time.perf_counter()
            dev_scores, dev = _score_epoch(row, model, evaluate_dev, monitors, cadence)
            timing["dev_seconds"] = round(time.perf_counter() - dev_started, 3)
            _select(state, epoch, row, dev[t.select_metric], model, dev_scores)
            state.timings.append(timing)
            state.batches += step.batch_rows(epoch)
            save_torch({"fingerprint": key, "model": model.state_dict(),
                        "optimizer": optimizer.state_dict(), **vars(state)}, state_path)
            if live is not None:
                _live_log(live, row)
            print(f"epoch {epoch}: loss {row['loss']:.4f} dev {t.select_metric} {dev[t.select_metric]:.4f} "
                  f"({timing['seconds']:.1f}s)", flush=True)
    save_torch(state.best_model if state.best_model is not None else model.state_dict(), run_dir / "model.pt")
    if t.keep_last:  # a model that trained no epoch has one state: that one
        save_torch(model.state_dict(), run_dir / LAST_RESULTS[0])
    _write_log(state.log, run_dir / "log.csv")
    if t.batch_log:
        _write_log(state.batches, run_dir / "batches.csv")
    save_text(run_dir / "config.json", json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    if timings is not None:
        _write_timings(state.timings, timings, device, started, train_code_digest(arch_module(cfg["arch"])), vectors)
    state_path.unlink(missing_ok=True)
    scores = None
    if state.best_scores is not None:
        scores = data.pairs(t.dev_split)[0][["qid", "aid", "label"]].assign(score=state.best_scores.numpy())
    return Trained(len(state.log), scores)


def measure_costs(cfg: dict, data: RunData, evaluate_dev: DevEvaluator, batches: int = 3) -> dict:
    """What one training batch and one dev scoring of ``cfg`` cost on its device, from random
    initial weights after a one-batch warm-up (``ansel plan --measure``); nothing is written."""
    t = parse(TrainConfig, cfg["train"], f"models.{cfg['model']}.train")
    device = resolve_device(t.device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    model, params, optimizer = _model_and_optimizer(cfg, t, data, None, device)
    steps = _timed_steps(cfg, t, data, model, optimizer, params, device, [batches]) if params else [0.0]
    cost = {"device": device_label(device), "seconds_per_batch": steps[0]}
    started = time.perf_counter()
    evaluate_dev(model)
    cost["dev_seconds"] = time.perf_counter() - started
    if device.type == "cuda":
        cost["peak_mb"] = torch.cuda.max_memory_allocated(device) / 2**20
    return cost


def step_seconds(cfg: dict, data: RunData, batches: int, rounds: int) -> tuple[str, list[float]]:
    """(device, seconds per training step of ``cfg`` in each of ``rounds`` rounds of ``batches`` steps),
    after a one-step warm-up; nothing is written."""
    t = parse(TrainConfig, cfg["train"], f"models.{cfg['model']}.train")
    device = resolve_device(t.device)
    model, params, optimizer = _model_and_optimizer(cfg, t, data, None, device)
    if not params:
        raise ValueError(f"models.{cfg['model']}: nothing to train, so no training step to time")
    return device_label(device), _timed_steps(cfg, t, data, model, optimizer, params, device, [batches] * rounds)


def _timed_steps(cfg: dict, t: TrainConfig, data: RunData, model, optimizer, params, device,
                 rounds: list[int]) -> list[float]:
    """Seconds per training step in each round of ``rounds[i]`` steps, after a one-step warm-up
    (allocations, kernel choices)."""
    seconds = []
    for epoch, n in enumerate([1, *rounds], 1):
        step = _EpochTrainer(cfg, dataclasses.replace(t, max_batches=n), data, model, optimizer, params, device,
                             progress=False)
        started = time.perf_counter()  # the epoch's own figure is rounded to ms: too coarse for a short step
        timing = step.run(epoch)[1]
        seconds.append((time.perf_counter() - started) / max(1, timing["batches"]))
    return seconds[1:]


def device_label(device: torch.device) -> str:
    """A device with the CPU's instruction set or the GPU's name (``cpu/AVX512``, ``cuda/NVIDIA H200``):
    what a timing depends on."""
    if device.type == "cuda":
        return f"cuda/{torch.cuda.get_device_name(device)}"
    return f"cpu/{torch.backends.cpu.get_cpu_capability()}" if device.type == "cpu" else str(device)


def _model_and_optimizer(cfg: dict, t: TrainConfig, data: RunData, embeddings: np.ndarray | None, device):
    """The run's model, seeded, on ``device``; its trainable parameters and their optimizer (None:
    nothing to train)."""
    torch.manual_seed(cfg["seed"])
    model = build_model(cfg["arch"], cfg["hparams"], data.vocab_size, embeddings, f"models.{cfg['model']}",
                        data.lexicon if needs_lexicon(cfg["arch"]) else None, len(data.categories)).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    return model, params, run_optimizer(model, params, t)


def run_optimizer(model, params: list, t: TrainConfig):
    """``t.optimizer`` over ``params`` (None: nothing to train), a large parameter stepped in row blocks
    (``ansel.training.row_blocks``: the same numbers, a block's temporaries); with ``embedding_updates:
    sparse``, the embedding tables' rows a batch reads updated alone (``ansel.training.sparse_updates``),
    otherwise their gradients built in kept buffers on a CPU (``ansel.training.gradient_buffers``)."""
    tables = sparse_tables(model) if t.embedding_updates == "sparse" else []
    keep_gradient_buffers(model)
    dense = [p for p in params if not any(p is table for table in tables)]
    stepped = RowBlocks(lambda handed: OPTIMIZERS[t.optimizer](handed, t), dense) if dense else None
    return SplitOptimizer(stepped, sparse_optimizer(t.optimizer, tables, t.lr, ADADELTA)) if tables else stepped


class _Cadence:
    """The monitor splits scored every N training steps (``train.monitor_every``): of the evaluations
    of an epoch, the one best on the first split's P@1 (the first of ties), as its log.csv row."""

    def __init__(self, monitors: dict[str, DevEvaluator], model):
        self.monitors, self.model, self.epoch_rows = monitors, model, []

    def evaluate(self, step: int) -> None:
        row = {f"{next(iter(self.monitors))}_step": step}
        for split, evaluate in self.monitors.items():
            row.update({f"{split}_{m}": v for m, v in evaluate(self.model)[1].items() if not m.startswith("n_")})
        self.model.train()
        self.epoch_rows.append(row)

    def best_of_epoch(self) -> dict:
        rows, self.epoch_rows = self.epoch_rows, []
        key = f"{next(iter(self.monitors))}_P@1"
        return max(rows, key=lambda r: r[key]) if rows else {}  # max keeps the first of equal values


class _EpochTrainer:
    """One epoch of steps, seeded by (seed, epoch): pairwise over the shuffled training positives
    (each with a drawn negative), or, for ``loss: classification``, over every labelled training pair."""

    def __init__(self, cfg, t: TrainConfig, data: RunData, model, optimizer, params, device, progress: bool):
        self.cfg, self.t, self.data, self.model, self.optimizer = cfg, t, data, model, optimizer
        self.params, self.device, self.progress = params, device, progress
        self.on_step: tuple[int, Callable[[int], None]] | None = None  # (every N steps, call with the step)
        # pairwise losses: each batch's mean score of the positives and of their drawn negatives (a
        # loss stuck at the margin with equal scores is the collapse of reports/apnet-training-collapse.md)
        self.scores: list[torch.Tensor] = []
        self.losses: list[torch.Tensor] = []  # train.batch_log: each batch's loss (kept on the device)
        cands, qi, ai = data.pairs("train")
        labels = cands.label.to_numpy()
        if t.loss == "classification":
            self.pos_q, self.pos_a, self.labels = qi, ai, torch.from_numpy((labels > 0).astype(np.float32))
        elif t.loss == "category":  # one step per training pair, as the joint loss sees each question
            keep = (labels == 1) & (data.q_category[qi] >= 0)
            self.pos_q, self.pos_a = qi[keep], ai[keep]
        else:
            self.pos_q, self.pos_a = qi[labels == 1], ai[labels == 1]
            self.sampler = NegativeSampler(qi, ai, labels, t.negatives.strategy, t.negatives.n,
                                           t.negatives.source, one_call=torch.device(device).type != "cpu")

    def _loss(self, rows: np.ndarray, rng: np.random.Generator) -> torch.Tensor:
        q = self._ids(self.data.q_ids, self.pos_q[rows])
        if self.t.loss == "category":
            return self._category_loss(q, rows)
        s = self.model(q, self._ids(self.data.a_ids, self.pos_a[rows]))
        if self.t.loss == "classification":  # the score is the two-way head's log-odds (layers.OutputHead)
            return F.binary_cross_entropy_with_logits(s, self.labels[rows].to(self.device))
        neg_a = self.sampler.sample(self.pos_q[rows], rng, self.model, self.data.q_ids, self.data.a_ids)
        s_neg = self.model(q, self._ids(self.data.a_ids, neg_a))
        self.scores.append(torch.stack([s.detach().mean(), s_neg.detach().mean()]))
        rank = pair_loss(s, s_neg, self.t)
        alpha = self.t.category_weight
        return (1 - alpha) * rank + alpha * self._category_loss(q, rows) if alpha else rank

    def _category_loss(self, q: torch.Tensor, rows: np.ndarray) -> torch.Tensor:
        category = torch.from_numpy(self.data.q_category[self.pos_q[rows]]).to(self.device)
        return category_loss(self.model.classify(q), category)

    def _ids(self, ids: np.ndarray, rows: np.ndarray) -> torch.Tensor:
        return trim_padding(torch.from_numpy(ids[rows])).to(self.device)

    def run(self, epoch: int) -> tuple[dict, dict]:
        """(the epoch's log row, its wall time)."""
        t, seed = self.t, self.cfg["seed"]
        rng = np.random.default_rng([seed, epoch])
        torch.manual_seed(seed * 100_003 + epoch)
        lr = learning_rate(t, epoch)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        order = rng.permutation(len(self.pos_q))
        if t.max_batches:  # a preset's shorter epoch: a fresh random subset each epoch
            order = order[:t.batch_size * t.max_batches]
        steps_before = (epoch - 1) * -(-len(order) // t.batch_size)  # every epoch has as many batches
        monitored = 0.0  # seconds of the cadence's evaluations: not the epoch's training time
        self.model.train()
        # summed on the device in float64 (what Python's float sums): no host synchronisation per batch
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        self.scores.clear()
        self.losses.clear()
        n_batches, started = 0, time.perf_counter()
        bar = tqdm(range(0, len(order), t.batch_size), desc=f"{self.cfg['model']} seed{seed} epoch {epoch}",
                   disable=not self.progress, leave=False, mininterval=2)
        for i in bar:
            loss = self._loss(order[i:i + t.batch_size], rng)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if t.clip_norm:
                torch.nn.utils.clip_grad_norm_(self.params, t.clip_norm)
            self.optimizer.step()
            total += loss.detach()
            if t.batch_log:
                self.losses.append(loss.detach())
            n_batches += 1
            if self.on_step and (steps_before + n_batches) % self.on_step[0] == 0:
                at = time.perf_counter()
                self.on_step[1](steps_before + n_batches)
                monitored += time.perf_counter() - at
        loss_sum = total.item()  # waits for the device's queued work, so the epoch's time is all of it
        if not math.isfinite(loss_sum):  # one non-finite batch makes the sum so: checked once an epoch
            raise DivergedError(f"models.{self.cfg['model']} seed {seed}: the training loss of epoch {epoch} is "
                                f"{loss_sum} (lr {lr}): the run diverged; lower train.lr or set train.clip_norm")
        seconds = time.perf_counter() - started - monitored
        row = {"epoch": epoch, "lr": lr, "loss": loss_sum / max(1, n_batches)}
        if self.scores:  # where the epoch ended: over its last tenth of batches
            end = torch.stack(self.scores[-max(1, len(self.scores) // 10):]).double().mean(0)
            row["pos_score"], row["neg_score"] = end.tolist()
        return (row,
                {"epoch": epoch, "seconds": round(seconds, 3), "batches": n_batches,
                 "seconds_per_batch": round(seconds / max(1, n_batches), 5)})


    def batch_rows(self, epoch: int) -> list[dict]:
        """``train.batch_log``: the epoch's rows of batches.csv (step counted over the run), else none."""
        if not self.t.batch_log:
            return []
        steps_before = (epoch - 1) * len(self.losses)  # every epoch has as many batches
        losses = torch.stack(self.losses).double().cpu().tolist()
        scores = torch.stack(self.scores).double().cpu().tolist() if self.scores else [[None, None]] * len(losses)
        return [{"epoch": epoch, "step": steps_before + i + 1, "loss": loss, "pos_score": pos, "neg_score": neg}
                for i, (loss, (pos, neg)) in enumerate(zip(losses, scores))]


def _score_epoch(row: dict, model, evaluate_dev: DevEvaluator, monitors: dict[str, DevEvaluator] | None,
                 cadence: "_Cadence | None") -> tuple[pd.DataFrame, dict[str, float]]:
    """Score dev (and the monitor splits, unless the cadence scored them) into the epoch's log ``row``;
    (dev scores, dev metrics)."""
    dev_scores, dev = evaluate_dev(model)
    row.update({f"dev_{m}": v for m, v in dev.items() if not m.startswith("n_")})
    if cadence:
        row.update(cadence.best_of_epoch())
    for split, evaluate in ({} if cadence else monitors or {}).items():
        row.update({f"{split}_{m}": v for m, v in evaluate(model)[1].items() if not m.startswith("n_")})
    return dev_scores, dev


def fingerprint(cfg: dict) -> str:
    """What a state.pt was trained with: only a run of the same config resumes from it."""
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


def _resume(path: Path, key: str, model, optimizer, device, epochs: int) -> _State:
    if not path.exists():
        return _State()
    st = load_checkpoint(path, device, "delete it to train the run again from its first epoch (the epochs it "
                                       "held are lost), then rerun the run's target")
    if "fingerprint" not in st:
        raise RuntimeError(f"{path}: not a training state (no config fingerprint: a model.pt put there?); "
                           "delete it to start over")
    if st["fingerprint"] != key:
        raise RuntimeError(f"{path}: saved by a run with a different config; delete it to start over")
    model.load_state_dict(st["model"])
    if optimizer is not None:
        optimizer.load_state_dict(st["optimizer"])
    print(f"resuming from epoch {st['epoch']} of {epochs} ({path})", flush=True)
    return _State(st["epoch"], st["best"], st["best_model"], st["best_scores"], st["log"], st.get("timings", []),
                  st.get("batches", []))


def _select(state: _State, epoch: int, row: dict, value: float, model, dev_scores: pd.DataFrame) -> None:
    """Log the epoch; keep its weights and dev scores when its dev value is the best so far."""
    state.epoch = epoch
    state.log.append(row)
    if value > state.best:
        state.best = value
        state.best_model = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        state.best_scores = torch.from_numpy(dev_scores.score.to_numpy().copy())


def _write_log(rows: list[dict], path: Path) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="") as f:
            # every row's columns (an epoch without a cadence evaluation has none of its columns)
            w = csv.DictWriter(f, list(dict.fromkeys(k for r in rows for k in r)) if rows else ["epoch"])
            w.writeheader()
            w.writerows(rows)
    save_atomic(path, write)


def checkout_commit() -> str | None:
    """The git commit of the checkout this process runs in, ``+dirty`` when tracked files differ
    from it; in a GPU record kit (no git there) the commit it was packed from (``ANSEL_KIT_COMMIT``);
    None outside a git checkout (a copied tree, an sdist)."""
    if os.environ.get("ANSEL_KIT_COMMIT"):
        return os.environ["ANSEL_KIT_COMMIT"]
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None
    return commit + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def vectors_sha256(embeddings: np.ndarray | None) -> str | None:
    """sha256 of the pretrained vectors a run trains from (their dtype, shape and values), None without:
    the file a record's run read can be rebuilt or replaced later, so the run keeps what it read."""
    if embeddings is None:
        return None
    h = hashlib.sha256(f"{embeddings.dtype.str}{embeddings.shape}".encode())
    h.update(np.ascontiguousarray(embeddings).data)
    return h.hexdigest()


def _write_timings(epochs: list[dict], path: Path, device: torch.device, started: float, code: str,
                   vectors: str | None) -> None:
    """{"train": {"seconds_per_batch": mean over epochs (GGSA Table 3), "epochs": per-epoch times,
    the device (a GPU's name too), its peak memory in MB (CUDA; sizes the job's ``gpu_mem_mb``), this job's start and
    end (Unix seconds), the git commit that trained it (``checkout_commit``; the tables' provenance), the
    digest of the code it trained with (``ansel.code_digest``: the train rule's param), the pretrained
    vectors' ``vectors_sha256`` and, on a CPU, the instruction set torch's kernels dispatched to (AVX512,
    AVX2 ...)}}."""
    train = {"seconds_per_batch": float(np.mean([e["seconds_per_batch"] for e in epochs]))} if epochs else {}
    peak = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None
    train |= {"device": str(device), "peak_device_mb": peak, "started": started, "finished": time.time(),
              "commit": checkout_commit(), "code": code, "vectors_sha256": vectors}
    if device.type == "cpu":  # the kernels' instruction set: a CPU run's floats (and bytes) depend on it
        train["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    else:
        train["device_name"] = torch.cuda.get_device_name(device)
    save_text(path, json.dumps({"train": {**train, "epochs": epochs}}, indent=2) + "\n")


@contextlib.contextmanager
def _live(run_dir: Path, log: list[dict], enabled: bool = True):
    """A dvclive logger (None when not ``enabled``); on resume its files are rebuilt from the saved log,
    so no step is lost or doubled."""
    if not enabled:
        yield None
        return
    from dvclive import Live

    live = Live(str(run_dir / "dvclive"), resume=False, save_dvc_exp=False, dvcyaml=None)
    try:
        for row in log:
            _live_log(live, row)
        yield live
        live.end()
    finally:
        # Live opens the DVC repository and never closes it. After a failure the traceback keeps it
        # alive until interpreter shutdown, where each unclosed dulwich pack's __del__ fails to import
        # `warnings`: "Exception ignored ... sys.meta_path is None", 8-14 times.
        if live._dvc_repo is not None:
            live._dvc_repo.close()


def _live_log(live, row: dict) -> None:
    live.step = row["epoch"]
    for k, v in row.items():
        if k != "epoch" and not k.endswith("_step"):
            live.log_metric(k.replace("@", "_at_"), v, plot=True)
    live.make_summary()
