"""Training one run: pairwise (hinge) or pointwise loss, dev-based checkpoint selection, resume.

``train_run`` is a short driver over the steps below; ``train_seeds`` drives a row's seeds through
the same steps as one stacked model (``ansel.training.seed_stack``): per run a ``Feed`` (its batches)
and a ``_Run`` (its directory), one ``EpochTrainer`` loop over all of them (``ansel.training.epoch``). The dev evaluator is
passed in, so the trainer knows nothing of metrics or scoring (``ansel.evaluation``), only of "a
higher dev value is better".

Reproducibility: every epoch reseeds torch and numpy from (seed, epoch), so an interrupted
run resumed from its last state produces exactly the numbers of an uninterrupted one.
``state.pt`` (saved atomically after each epoch, or every N minutes: ``_Checkpoints``; weights-only
loadable) holds the model, optimizer, best weights, their dev scores, the log, the epochs' wall times
and what the run trained with (config, code, data, vectors: a state of other ones is refused); it is
removed once the run's outputs are written, the caller's (``ansel train``'s dev_scores.pt) included.
Wall times go to a timings file outside the run directory only, so that every file of a run
directory is the same bytes for the same seed (on CPU).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import functools
import hashlib
import json
import math
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch

from ansel.code_digest import checkout_commit, train_code_digest
from ansel.data.batches import RunData
from ansel.device import resolve_device
from ansel.files import remove_temporaries, save_atomic, write_text_atomic
from ansel.models import build_model
from ansel.models.io import load_checkpoint, save_torch, save_torch_together
from ansel.models.registry import arch_module, needs_lexicon
from ansel.settings import InputError, parse
from ansel.training.config import LAST_RESULTS, TrainConfig
from ansel.training.epoch import Alone, DivergedError, EpochTrainer, Feed, batch_loss
from ansel.training.gradient_buffers import keep_gradient_buffers
from ansel.training.precision import arithmetic
from ansel.training.row_blocks import RowBlocks
from ansel.training.seed_stack import SeedStack, StackError, check_stackable, join_states, split_state
from ansel.training.sparse_updates import SplitOptimizer, sparse_optimizer, sparse_tables

# model -> (its scores of every candidate of the dev split, in the split's order; {metric: value})
DevEvaluator = Callable[[torch.nn.Module], "tuple[pd.DataFrame, dict[str, float]]"]
# (run directory, its training's hand-off) -> None: the caller's files of a finished run (``ansel train``:
# dev_scores.pt), written before its state.pt is removed, so that a kill in between loses no epoch
Keep = Callable[[Path, "Trained"], None]

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


# What a finished training and its evaluation leave in the run directory (state.pt aside, which resumes
# the same config and is refused for another): all of it belongs to the model that made it.
STATE = "state.pt"
EARLIER_RESULTS = (
    "model.pt",
    "log.csv",
    "config.json",
    "dev_scores.pt",
    "metrics.json",
    "run.trec",
    "batches.csv",
    *LAST_RESULTS,
)


class StateMismatchError(RuntimeError, InputError):
    """A state.pt that is not this run's to resume: no training state, or saved by a run of another
    config, code, data or vectors (resuming would mix two trainings); the message names the file."""


@dataclass
class Trained:
    """The train -> evaluate hand-off besides the files ``train_run`` writes (model.pt, log.csv,
    config.json, timings): the selected epoch's dev scores, and its monitor splits' where they were
    scored with its weights, which ``ansel train`` stores as dev_scores.pt."""

    epochs: int
    dev_scores: pd.DataFrame | None  # None: nothing was trained (no epoch scored dev)
    monitor_scores: dict[str, torch.Tensor] = field(default_factory=dict)  # {split: scores in candidate order}


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
    best_monitors: dict[str, torch.Tensor] = field(default_factory=dict)  # the best weights' monitor scores


def train_run(
    cfg: dict,
    data: RunData,
    embeddings: np.ndarray | None,
    run_dir: Path,
    evaluate_dev: DevEvaluator,
    progress: bool = True,
    timings: Path | None = None,
    monitors: dict[str, DevEvaluator] | None = None,
    dvclive: bool = True,
    checkpoint_minutes: float | None = None,
    trained_on: str | None = None,
    keep: Keep | None = None,
) -> Trained:
    """Train ``cfg`` (a run config, ``ansel.config.run_config``), keep the weights best on dev;
    write model.pt, log.csv and config.json into run_dir, and the epochs' wall times to ``timings``.
    ``monitors`` ({split: evaluator}, ``train.monitor_splits``) are scored after every epoch into
    the log only. ``dvclive=False`` writes no dvclive/ folder (the GPU record kit: no dvclive there).
    ``checkpoint_minutes``: state.pt is saved after an epoch only once this long has passed since the
    last save (None: after every epoch). ``trained_on``: the data's digest (``evaluate.data_digest``), which
    a state.pt must have been saved with to resume; ``keep``: the caller's files of the finished run (``Keep``)."""
    t = _prepared(cfg, data, run_dir, timings)
    started, device = time.time(), _device(t)
    vectors = vectors_sha256(embeddings)
    model, params, optimizer = _model_and_optimizer(cfg, t, data, embeddings, device)
    del embeddings  # the model holds a copy: freed now, the array's memory serves the training's tensors
    run = _Run(
        cfg,
        t,
        run_dir,
        model,
        model.state_dict,
        evaluate_dev,
        monitors,
        dvclive,
        device,
        inputs=_inputs(cfg, trained_on, vectors),
        keep=keep,
    )
    checkpoints = _Checkpoints(checkpoint_minutes, t.epochs)
    if optimizer is not None and run.optimizer_state is not None:
        optimizer.load_state_dict(run.optimizer_state)
    step = EpochTrainer(
        cfg, t, [Feed(cfg, t, data, model, device)], Alone(model, params, t), optimizer, device, progress
    )
    if run.cadence:
        step.on_step = (t.monitor_every, run.cadence.evaluate)
    with arithmetic(t.precision, device):
        _epochs([run], step, t, t.epochs if params else 0, lambda: [optimizer.state_dict()], checkpoints)
        trained = run.finish(data, timings, device, started, vectors)
    run.state_path.unlink(missing_ok=True)
    return trained


def train_seeds(
    cfgs: list[dict],
    data: RunData,
    embeddings: np.ndarray | None,
    run_dirs: list[Path],
    evaluate_dev: DevEvaluator,
    progress: bool = True,
    timings: list[Path] | None = None,
    monitors: dict[str, DevEvaluator] | None = None,
    dvclive: bool = True,
    checkpoint_minutes: float | None = None,
    trained_on: str | None = None,
    keep: Keep | None = None,
) -> list[Trained]:
    """The runs ``cfgs`` (one row's seeds: configs equal but for ``seed``) trained as one stacked model
    (``ansel.training.seed_stack``), each run's directory and timings written as ``train_run`` writes
    them alone (``trained_on``, ``keep``: as there); a config that cannot stack is refused (``StackError``,
    naming the key) before any file is touched."""
    if len({json.dumps({**c, "seed": 0}, sort_keys=True) for c in cfgs}) != 1:
        raise StackError("the stacked runs differ in more than their seed: one row's seeds stack, nothing else")
    t = parse(TrainConfig, cfgs[0]["train"], f"models.{cfgs[0]['model']}.train")
    device = resolve_device(t.device)
    models = [_model(cfg, data, embeddings, device) for cfg in cfgs]
    check_stackable(cfgs[0], t, models[0])
    stack = SeedStack(models, functools.partial(batch_loss, t=t))
    if not stack.params:
        raise StackError(f"models.{cfgs[0]['model']}: nothing to train, so nothing to stack")
    feeds = [Feed(cfg, t, data, model, device) for cfg, model in zip(cfgs, models)]
    streams = [feed.epoch(1) for feed in feeds]  # each epoch reseeds its feeds: the probe's draws are not kept
    stack.probe(
        [feed.batch(order[: t.batch_size], rng) for feed, (order, rng) in zip(feeds, streams)],
        feeds,
        f"models.{cfgs[0]['model']}",
    )
    for cfg, run_dir, path in zip(cfgs, run_dirs, timings or [None] * len(cfgs), strict=True):
        _prepared(cfg, data, run_dir, path)
    started, device, vectors = time.time(), _device(t), vectors_sha256(embeddings)
    del embeddings
    optimizer = OPTIMIZERS[t.optimizer](stack.params, t)
    runs = [
        _Run(
            cfg,
            t,
            run_dir,
            model,
            functools.partial(stack.weights, s),
            evaluate_dev,
            monitors,
            dvclive,
            device,
            label=f"seed {cfg['seed']}: ",
            inputs=_inputs(cfg, trained_on, vectors),
            keep=keep,
        )
        for s, (cfg, run_dir, model) in enumerate(zip(cfgs, run_dirs, models))
    ]
    saved = [run.optimizer_state for run in runs]
    if len({run.state.epoch for run in runs}) != 1 or len({s is None for s in saved}) != 1:
        raise StackError(
            f"{', '.join(str(r.state_path) for r in runs if r.state_path.exists())}: the seeds stand at "
            f"epochs {[r.state.epoch for r in runs]}: resume them alone, or delete the states"
        )
    if saved[0] is not None:
        optimizer.load_state_dict(join_states(saved, [str(r.state_path) for r in runs]))
    checkpoints = _Checkpoints(checkpoint_minutes, t.epochs)  # one for the stack: its seeds saved together
    step = EpochTrainer(cfgs[0], t, feeds, stack, optimizer, device, progress)
    if runs[0].cadence:  # each seed's model (its slice of the stack) scored at the step, as alone
        step.on_step = (t.monitor_every, lambda n: [run.cadence.evaluate(n) for run in runs if run.cadence])
    with arithmetic(t.precision, device):
        _epochs(runs, step, t, t.epochs, lambda: split_state(optimizer.state_dict(), len(runs)), checkpoints)
        trained = [
            run.finish(data, path, device, started, vectors, stacked=len(runs))
            for run, path in zip(runs, timings or [None] * len(runs))
        ]
    for run in runs:  # once every seed's files are written: a kill before leaves them all at the last epoch
        run.state_path.unlink(missing_ok=True)
    return trained


def _prepared(cfg: dict, data: RunData, run_dir: Path, timings: Path | None) -> TrainConfig:
    """The run's training settings, checked; its directory made, an earlier model's results removed, and
    the temporaries a killed writer of the run's files left (a SIGKILL or SIGTERM runs no cleanup)."""
    t = parse(TrainConfig, cfg["train"], f"models.{cfg['model']}.train")
    if not (data.pairs("train")[0].label == 1).any():  # epochs of no batch would save an untrained model
        raise ValueError(
            f"{run_dir}: the train split of dataset {cfg['dataset']!r} has no positive pair; nothing to train on"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    for name in EARLIER_RESULTS:  # an earlier model's: a training killed from here on must not leave them as the run's
        (run_dir / name).unlink(missing_ok=True)
    for path in [*(run_dir / name for name in (*EARLIER_RESULTS, STATE)), *([timings] if timings else [])]:
        remove_temporaries(path)  # else in the run's DVC-tracked folder for good
    return t


def _device(t: TrainConfig) -> torch.device:
    device = resolve_device(t.device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    return device


def _epochs(
    runs: list[_Run],
    step: EpochTrainer,
    t: TrainConfig,
    last: int,
    optimizer_states: Callable[[], list[dict]],
    checkpoints: _Checkpoints,
) -> None:
    """The runs (standing at one epoch) trained by ``step`` to epoch ``last``; after each epoch every
    run's dev scored, its epoch selected or not, then, when ``checkpoints`` says so, every run's state
    saved as one (``_save_states``)."""
    with contextlib.ExitStack() as lives:
        for run in runs:
            run.live = lives.enter_context(_live(run.dir, run.state.log, run.dvclive))
        if t.epochs == 0:  # the initial weights, scored as epoch 0: what training adds is measured against them
            for run in runs:
                run.untrained()
        for epoch in range(runs[0].state.epoch + 1, last + 1):
            try:
                rows, timing = step.run(epoch)
            except DivergedError as e:  # resumed, the same config diverges again: nothing of it is of use
                runs[e.index].discard(e)
            for run, row, batch_rows in zip(runs, rows, step.batch_rows(epoch), strict=True):
                run.state.batches += batch_rows
                run.scored(epoch, row, dict(timing), step.steps_before + timing["batches"])
            if checkpoints.due(epoch):
                _save_states(runs, optimizer_states())
                checkpoints.saved()
            for run in runs:
                run.epoch_done(epoch)


def _save_states(runs: list[_Run], optimizer_states: list[dict]) -> None:
    """Every run's state.pt at the epoch just scored, each written before any replaces its last: a kill
    leaves a stack's seeds at one epoch (seeds at two would resume alone, to other numbers)."""
    saving = time.perf_counter()
    save_torch_together(
        [(run.checkpoint(state), run.state_path) for run, state in zip(runs, optimizer_states, strict=True)]
    )
    for run in runs:
        run.state.timings[-1]["checkpoint_seconds"] = round(time.perf_counter() - saving, 3)


class _Checkpoints:
    """When an epoch's state.pt is saved: after every epoch (``minutes`` None, and the GPU kit's cut runs
    resume from their last epoch), or once ``minutes`` have passed since the last save (writing a large
    state each epoch was half of an aMV-LSTM run's time), and never after the last epoch, whose outputs
    are written next. A resumed run restarts from the epoch it saved: resuming stays exact."""

    def __init__(self, minutes: float | None, epochs: int):
        self.seconds, self.epochs, self.last = None if minutes is None else minutes * 60, epochs, _now()

    def due(self, epoch: int) -> bool:
        if self.seconds is None:
            return True
        return epoch < self.epochs and _now() - self.last >= self.seconds

    def saved(self) -> None:
        self.last = _now()


def _now() -> float:
    return time.monotonic()


class _Run:
    """One run's directory over its epochs: its resumed state, each epoch's dev selection and saved
    state, and at the end its files. ``weights()``: the model's state_dict as saved."""

    def __init__(
        self,
        cfg: dict,
        t: TrainConfig,
        run_dir: Path,
        model,
        weights: Callable[[], dict],
        evaluate_dev: DevEvaluator,
        monitors: dict[str, DevEvaluator] | None,
        dvclive: bool,
        device,
        inputs: dict,
        label: str = "",
        keep: Keep | None = None,
    ):
        self.cfg, self.t, self.dir, self.model, self.weights = cfg, t, run_dir, model, weights
        self.evaluate_dev, self.monitors, self.dvclive, self.label = evaluate_dev, monitors, dvclive, label
        self.state_path, self.key, self.inputs, self.keep = run_dir / STATE, fingerprint(cfg), inputs, keep
        self.state, self.optimizer_state = _resume(self.state_path, self.key, model, device, t.epochs, self.inputs)
        self.cadence = _Cadence(monitors, model) if t.monitor_every and monitors else None  # no split to score: none
        self.live = None

    def untrained(self) -> None:
        row = {"epoch": 0}
        dev_scores, dev, monitored = _score_epoch(row, self.model, self.evaluate_dev, self.monitors, self.cadence, 0)
        _select(self.state, 0, row, dev[self.t.select_metric], self.model, dev_scores, monitored)
        if self.live is not None:
            _live_log(self.live, row)
        print(
            f"{self.label}epoch 0 (untrained): dev {self.t.select_metric} {dev[self.t.select_metric]:.4f}", flush=True
        )

    def discard(self, e: DivergedError):
        self.state_path.unlink(missing_ok=True)
        shutil.rmtree(self.dir / "dvclive", ignore_errors=True)
        raise DivergedError(f"{self.dir}: {e}; nothing of the run is kept") from None

    def scored(self, epoch: int, row: dict, timing: dict, step: int) -> None:
        """The epoch's dev scored into its log ``row``, selected or not; ``step``: the training steps taken
        so far, the epoch's included."""
        dev_started = time.perf_counter()
        dev_scores, dev, monitored = _score_epoch(row, self.model, self.evaluate_dev, self.monitors, self.cadence, step)
        timing["dev_seconds"] = round(time.perf_counter() - dev_started, 3)
        _select(self.state, epoch, row, dev[self.t.select_metric], self.model, dev_scores, monitored)
        self.state.timings.append(timing)

    def checkpoint(self, optimizer_state: dict) -> dict:
        """What state.pt holds (``_resume`` reads it). Its weights in host memory: a stack's seeds are
        saved together (``_save_states``), and a device holding every seed's copy at once could run out."""
        return {
            "fingerprint": self.key,
            "inputs": self.inputs,
            "model": {k: v.cpu() for k, v in self.weights().items()},
            "optimizer": optimizer_state,
            **vars(self.state),
        }

    def epoch_done(self, epoch: int) -> None:
        """The scored epoch logged (dvclive) and printed, its selection named by the split it scored."""
        row, timing, metric = self.state.log[-1], self.state.timings[-1], self.t.select_metric
        if self.live is not None:
            _live_log(self.live, row)
        print(
            f"{self.label}epoch {epoch}: loss {row['loss']:.4f} {self.t.dev_split} {metric} {row[f'dev_{metric}']:.4f} "
            f"({timing['seconds']:.1f}s)",
            flush=True,
        )

    def finish(
        self,
        data: RunData,
        timings: Path | None,
        device,
        started: float,
        vectors: str | None,
        stacked: int | None = None,
    ) -> Trained:
        """Write model.pt (model_last.pt), log.csv, config.json and the timings, then the caller's files
        (``keep``); the state is the caller's to remove, only then."""
        state, cfg = self.state, self.cfg
        save_torch(state.best_model if state.best_model is not None else self.weights(), self.dir / "model.pt")
        if self.t.keep_last:  # a model that trained no epoch has one state: that one
            save_torch(self.weights(), self.dir / LAST_RESULTS[0])
        _write_log(state.log, self.dir / "log.csv")
        if self.t.batch_log:
            _write_log(state.batches, self.dir / "batches.csv")
        write_text_atomic(self.dir / "config.json", json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        if timings is not None:
            _write_timings(
                state.timings, timings, device, started, train_code_digest(arch_module(cfg["arch"])), vectors, stacked
            )
        scores = None
        if state.best_scores is not None:
            scores = data.pairs(self.t.dev_split)[0][["qid", "aid", "label"]].assign(score=state.best_scores.numpy())
        trained = Trained(len(state.log), scores, state.best_monitors)
        if self.keep is not None:
            self.keep(self.dir, trained)
        return trained


class StepTimer:
    """Training steps of ``cfgs`` timed on their device under their ``train.precision``: one run alone,
    or a row's seeds as one stacked model (``stacked``; ``StackError`` where they cannot), built once
    from random initial weights. Nothing is written."""

    def __init__(self, cfgs: list[dict], data: RunData, stacked: bool = False):
        self.cfgs, self.data = cfgs, data
        self.t = parse(TrainConfig, cfgs[0]["train"], f"models.{cfgs[0]['model']}.train")
        self.device = resolve_device(self.t.device)
        if stacked:
            self.models = [_model(cfg, data, None, self.device) for cfg in cfgs]
            check_stackable(cfgs[0], self.t, self.models[0])
            self.trainee = SeedStack(self.models, functools.partial(batch_loss, t=self.t))
            self.optimizer = OPTIMIZERS[self.t.optimizer](self.trainee.params, self.t)
        else:
            (cfg,) = cfgs
            model, params, self.optimizer = _model_and_optimizer(cfg, self.t, data, None, self.device)
            self.models, self.trainee = [model], Alone(model, params, self.t) if params else None

    @property
    def label(self) -> str:
        return device_label(self.device)

    def seconds(self, batches: int) -> float:
        """Seconds per step (of the whole stack) over ``batches`` steps after a one-step warm-up."""
        if self.trainee is None:
            raise ValueError(f"models.{self.cfgs[0]['model']}: nothing to train, so no training step to time")
        with arithmetic(self.t.precision, self.device):
            return _timed_steps(
                self.cfgs, self.t, self.data, self.models, self.trainee, self.optimizer, self.device, [batches]
            )[0]

    def dev_seconds(self, evaluate_dev: DevEvaluator) -> float:
        """One scoring of the dev split by the (first) model, as the trainer scores it after an epoch."""
        with arithmetic(self.t.precision, self.device):
            started = time.perf_counter()
            evaluate_dev(self.models[0])
            return time.perf_counter() - started


def measure_costs(cfg: dict, data: RunData, evaluate_dev: DevEvaluator, batches: int = 3) -> dict:
    """What one training batch and one dev scoring of ``cfg`` cost on its device, from random
    initial weights after a one-batch warm-up (``ansel plan --measure``); nothing is written."""
    timer = StepTimer([cfg], data)
    if timer.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(timer.device)
    cost = {
        "device": timer.label,
        "seconds_per_batch": timer.seconds(batches) if timer.trainee else 0.0,
        "dev_seconds": timer.dev_seconds(evaluate_dev),
    }
    if timer.device.type == "cuda":
        cost["peak_mb"] = torch.cuda.max_memory_allocated(timer.device) / 2**20
    return cost


def step_seconds(cfg: dict, data: RunData, batches: int, rounds: int) -> tuple[str, list[float]]:
    """(device, seconds per training step of ``cfg`` in each of ``rounds`` rounds of ``batches`` steps,
    each after a one-step warm-up); nothing is written."""
    timer = StepTimer([cfg], data)
    return timer.label, [timer.seconds(batches) for _ in range(rounds)]


def seed_step_seconds(cfgs: list[dict], data: RunData, batches: int, rounds: int) -> tuple[str, dict[str, list[float]]]:
    """(device, {"separate": the seeds' training steps one model at a time, "stacked": as one stacked
    model}: seconds per step of every seed, in each of ``rounds`` rounds of ``batches`` steps, the two
    taking turns round by round); nothing is written."""
    alone = [StepTimer([cfg], data) for cfg in cfgs]
    stack = StepTimer(cfgs, data, stacked=True)
    seconds: dict[str, list[float]] = {"separate": [], "stacked": []}
    for _ in range(rounds):
        seconds["separate"].append(sum(timer.seconds(batches) for timer in alone))
        seconds["stacked"].append(stack.seconds(batches))
    return stack.label, seconds


def _timed_steps(
    cfgs: list[dict], t: TrainConfig, data: RunData, models: list, trainee, optimizer, device, rounds: list[int]
) -> list[float]:
    """Seconds per training step of ``trainee`` (the runs ``cfgs``' ``models``: one, or stacked) in each
    round of ``rounds[i]`` steps, after a one-step warm-up (allocations, kernel choices)."""
    seconds = []
    for epoch, n in enumerate([1, *rounds], 1):
        short = dataclasses.replace(t, max_batches=n)
        feeds = [Feed(cfg, short, data, model, device) for cfg, model in zip(cfgs, models)]
        step = EpochTrainer(cfgs[0], short, feeds, trainee, optimizer, device, progress=False)
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
    model = _model(cfg, data, embeddings, device)
    params = [p for p in model.parameters() if p.requires_grad]
    return model, params, run_optimizer(model, params, t)


def _model(cfg: dict, data: RunData, embeddings: np.ndarray | None, device):
    """The run's model, built from its seed, on ``device``."""
    torch.manual_seed(cfg["seed"])
    return build_model(
        cfg["arch"],
        cfg["hparams"],
        data.vocab_size,
        embeddings,
        f"models.{cfg['model']}",
        data.lexicon if needs_lexicon(cfg["arch"]) else None,
        len(data.categories),
    ).to(device)


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
    of an epoch, the one best on the first split's P@1 (the first of ties), as its log.csv row; the
    last evaluation's scores, with its step."""

    def __init__(self, monitors: dict[str, DevEvaluator], model):
        self.monitors, self.model, self.epoch_rows = monitors, model, []
        self.last: tuple[int, dict[str, pd.DataFrame]] = (-1, {})

    def evaluate(self, step: int) -> None:
        row, scores = {f"{next(iter(self.monitors))}_step": step}, {}
        for split, evaluate in self.monitors.items():
            scores[split], metrics = evaluate(self.model)
            row.update({f"{split}_{m}": v for m, v in metrics.items() if not m.startswith("n_")})
        self.model.train()
        self.epoch_rows.append(row)
        self.last = step, scores

    def scores_at(self, step: int) -> dict[str, pd.DataFrame]:
        """The monitor splits' scores by the weights of training step ``step``: those of an evaluation
        at that step ({} where none was the last)."""
        return dict(self.last[1]) if self.last[0] == step else {}

    def best_of_epoch(self) -> dict:
        rows, self.epoch_rows = self.epoch_rows, []
        key = f"{next(iter(self.monitors))}_P@1"
        return max(rows, key=lambda r: r[key]) if rows else {}  # max keeps the first of equal values


def _score_epoch(
    row: dict,
    model,
    evaluate_dev: DevEvaluator,
    monitors: dict[str, DevEvaluator] | None,
    cadence: "_Cadence | None",
    step: int,
) -> tuple[pd.DataFrame, dict[str, float], dict[str, pd.DataFrame]]:
    """Score dev (and the monitor splits, unless the cadence scored them) after training step ``step``
    into the epoch's log ``row``: (dev scores, dev metrics, the monitor splits' scores by these weights:
    at the epoch's end, or the cadence's where it evaluated at this step)."""
    dev_scores, dev = evaluate_dev(model)
    row.update({f"dev_{m}": v for m, v in dev.items() if not m.startswith("n_")})
    monitored = cadence.scores_at(step) if cadence else {}
    if cadence:
        row.update(cadence.best_of_epoch())
    for split, evaluate in ({} if cadence else monitors or {}).items():
        monitored[split], metrics = evaluate(model)
        row.update({f"{split}_{m}": v for m, v in metrics.items() if not m.startswith("n_")})
    return dev_scores, dev, monitored


def fingerprint(cfg: dict) -> str:
    """What a state.pt was trained with: only a run of the same config resumes from it."""
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


# what else a state.pt was trained with besides its config, as its refusal names it
RESUME_INPUTS = {"code": "training code", "data": "processed data", "vectors": "word vectors"}


def _inputs(cfg: dict, trained_on: str | None, vectors: str | None) -> dict:
    """The run's ``RESUME_INPUTS``: its code's digest (``ansel.code_digest``), its data's, its vectors'."""
    return {"code": train_code_digest(arch_module(cfg["arch"])), "data": trained_on, "vectors": vectors}


def _resume(path: Path, key: str, model, device, epochs: int, inputs: dict) -> tuple[_State, dict | None]:
    """The run's state saved at its last epoch, its weights loaded into ``model``; with its optimizer's
    state (None: no state saved). A state of another config or other ``inputs`` is refused."""
    if not path.exists():
        return _State(), None
    st = load_checkpoint(
        path,
        device,
        "delete it to train the run again from its first epoch (the epochs it "
        "held are lost), then rerun the run's target",
    )
    if "fingerprint" not in st:
        raise StateMismatchError(
            f"{path}: not a training state (no config fingerprint: a model.pt put there?); delete it to start over"
        )
    if st["fingerprint"] != key:
        raise StateMismatchError(f"{path}: saved by a run with a different config; delete it to start over")
    saved = st.get("inputs") or {**inputs, "code": None}  # a state saved before they were kept: older code's
    if other := [what for name, what in RESUME_INPUTS.items() if saved.get(name) != inputs[name]]:
        raise StateMismatchError(
            f"{path}: saved by a run of other {', '.join(other)} (resuming would mix two trainings); "
            "delete it to train the run again from its first epoch"
        )
    model.load_state_dict(st["model"])
    print(f"resuming from epoch {st['epoch']} of {epochs} ({path})", flush=True)
    return (
        _State(
            st["epoch"],
            st["best"],
            st["best_model"],
            st["best_scores"],
            st["log"],
            st.get("timings", []),
            st.get("batches", []),
            st.get("best_monitors", {}),  # a state saved before they were kept: none
        ),
        st["optimizer"],
    )


def _select(
    state: _State,
    epoch: int,
    row: dict,
    value: float,
    model,
    dev_scores: pd.DataFrame,
    monitored: dict[str, pd.DataFrame],
) -> None:
    """Log the epoch; keep its weights, dev scores and the monitor splits' scores by those weights
    (``_score_epoch``) when its dev value is the best so far."""
    state.epoch = epoch
    state.log.append(row)
    if value > state.best:
        state.best = value
        state.best_model = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        state.best_scores = _scores(dev_scores)
        state.best_monitors = {split: _scores(scored) for split, scored in monitored.items()}


def _scores(scored: pd.DataFrame) -> torch.Tensor:
    return torch.from_numpy(scored.score.to_numpy().copy())


def _write_log(rows: list[dict], path: Path) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="") as f:
            # every row's columns (an epoch without a cadence evaluation has none of its columns)
            w = csv.DictWriter(f, list(dict.fromkeys(k for r in rows for k in r)) if rows else ["epoch"])
            w.writeheader()
            w.writerows(rows)

    save_atomic(path, write)


def vectors_sha256(embeddings: np.ndarray | None) -> str | None:
    """sha256 of the pretrained vectors a run trains from (their dtype, shape and values), None without:
    the file a record's run read can be rebuilt or replaced later, so the run keeps what it read."""
    if embeddings is None:
        return None
    h = hashlib.sha256(f"{embeddings.dtype.str}{embeddings.shape}".encode())
    h.update(np.ascontiguousarray(embeddings).data)
    return h.hexdigest()


def _write_timings(
    epochs: list[dict],
    path: Path,
    device: torch.device,
    started: float,
    code: str,
    vectors: str | None,
    stacked: int | None = None,
) -> None:
    """{"train": {"seconds_per_batch": mean over epochs (GGSA Table 3), "epochs": per-epoch times,
    the device (a GPU's name too), its peak memory in MB (CUDA; sizes the job's ``gpu_mem_mb``), this job's start and
    end (Unix seconds), the git commit that trained it (``checkout_commit``; the tables' provenance), the
    digest of the code it trained with (``ansel.code_digest``: the train rule's param), the pretrained
    vectors' ``vectors_sha256`` and, on a CPU, the instruction set torch's kernels dispatched to (AVX512,
    AVX2 ...); trained in a stack of seeds, their number (``stacked_seeds``: the epochs' times are the stack's)}}."""
    train = {"seconds_per_batch": float(np.mean([e["seconds_per_batch"] for e in epochs]))} if epochs else {}
    peak = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None
    train |= {
        "device": str(device),
        "peak_device_mb": peak,
        "started": started,
        "finished": time.time(),
        "commit": checkout_commit(),
        "code": code,
        "vectors_sha256": vectors,
    }
    if stacked:
        train["stacked_seeds"] = stacked
    if device.type == "cpu":  # the kernels' instruction set: a CPU run's floats (and bytes) depend on it
        train["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    else:
        train["device_name"] = torch.cuda.get_device_name(device)
    write_text_atomic(path, json.dumps({"train": {**train, "epochs": epochs}}, indent=2) + "\n")


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
