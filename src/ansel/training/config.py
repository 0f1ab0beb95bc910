"""Typed training settings: a run's resolved ``train`` block (params.yaml's ``train`` <- the
model's <- the preset's ``scale.train``). Torch-free: checked while Snakemake builds the DAG."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ansel.evaluation.config import CATEGORY_METRICS, CLASSIFICATION_METRICS, METRICS
from ansel.settings import check

# the optimizers torch has a fused (one-pass) kernel for, on the CPU as on CUDA
FUSED = ("adam", "sgd", "adagrad")


@dataclass(frozen=True)
class NegativesConfig:
    """How each pairwise example's negative answer is drawn (``ansel.training.sampler``)."""

    strategy: Literal["pool", "random", "sampled_max"] = "pool"
    n: int = 1  # sampled_max: candidates scored per example
    # sampled_max draws from the whole training answer set, or the question's own labelled negatives
    source: Literal["answers", "candidates"] = "answers"

    def __post_init__(self) -> None:
        check(self.n >= 1, "n", f"{self.n} is not >= 1")
        check(
            self.source == "answers" or self.strategy == "sampled_max",
            "source",
            f"{self.source!r} is where sampled_max draws; strategy {self.strategy!r} ignores it",
        )


# What a run with ``keep_last`` adds: the last epoch's weights, and evaluation's run file and metrics of them.
LAST_RESULTS = ("model_last.pt", "run_last.trec", "metrics_last.json")


@dataclass(frozen=True)
class TrainConfig:
    epochs: int  # 0: no step; the initial weights are scored (log.csv's epoch 0) and kept
    batch_size: int
    optimizer: Literal["sgd", "adam", "rmsprop", "adagrad", "adadelta"]
    lr: float
    # hinge, pointwise: a question's positive against a drawn negative (ranking);
    # classification: every labelled training pair, cross-entropy of the model's two-way head;
    # category: the question-category classifier alone (MTAS's "only text classification")
    loss: Literal["hinge", "pointwise", "classification", "category"]
    select_metric: str  # the dev metric the kept checkpoint (and an lr-grid point) is chosen on
    margin: float | None = None  # hinge only
    lr_grid: list[float] | None = None  # the tables' business: one run per point (ansel.targets)
    # MTAS's alpha: loss = (1 - alpha) * ranking loss + alpha * cross-entropy of the question's
    # category (a model that classifies categories; 0: the ranking loss alone)
    category_weight: float = 0.0
    # the ranking loss over a batch: its mean, or its sum (the MTAS authors' code: reduce_sum, which
    # weighs the category term ~batch_size times less than alpha says; upstream-notes §1.3)
    rank_reduction: Literal["mean", "sum"] = "mean"
    lr_schedule: Literal["constant", "inverse_epoch"] = "constant"
    momentum: float = 0.0
    weight_decay: float = 0.0
    clip_norm: float | None = None
    max_batches: int | None = None  # an epoch stops after this many batches (a preset's shorter epoch)
    negatives: NegativesConfig = field(default_factory=NegativesConfig)
    dev_split: str = "dev"
    # scored after every epoch and logged (log.csv: <split>_<metric>), never used to select: the
    # curves of a paper that reports its last epoch (aMV-LSTM), and that epoch's values
    monitor_splits: list[str] = field(default_factory=list)
    # the monitor splits scored every this many training steps (counted over the run, as the MTAS
    # authors' evaluate_every) instead of after every epoch: each epoch's log.csv row then holds, of
    # the evaluations that fell in it, the one best on the first monitor split's P@1, with its step
    # (<split>_step), so the best over the rows is the best over the evaluations; a row without one
    # leaves them empty (a "last epoch" reading of them is not the last evaluation)
    monitor_every: int | None = None
    # keep the last epoch's weights too (model_last.pt), so evaluation writes that epoch's per-question
    # run file (run_last.trec, metrics_last.json): a paper that reports its last iteration (aMV-LSTM)
    # has its claims tested at its own protocol, not only on the dev-selected checkpoint
    keep_last: bool = False
    # log every training batch (batches.csv: epoch, step, loss, pos_score, neg_score): the first tens
    # of steps, where a hinge loss that sits at the margin (s+ ~ s-) gets there, not only each epoch's end
    batch_log: bool = False
    device: str = "auto"  # auto: CUDA when available, else the CPU
    # sparse: trainable embedding tables updated on the rows a batch reads (ansel.training.sparse_updates;
    # exact for adadelta, adagrad and plain sgd, "lazy" moments for adam)
    embedding_updates: Literal["dense", "sparse"] = "dense"
    # fused: torch's one-pass kernel for the dense update (adam, sgd, adagrad): several times faster
    # on a large trainable table, not the default loop's arithmetic (last bits apart), so an option
    optimizer_kernel: Literal["loop", "fused"] = "loop"
    # the device's arithmetic (ansel.training.precision): torch (its defaults: cuDNN in TensorFloat-32,
    # matmuls in float32), fp32, tf32 (CUDA matmuls and cuDNN in TF32), bf16 (training forward passes
    # autocast to bfloat16, scoring in tf32); on the CPU all but bf16 are float32
    precision: Literal["torch", "fp32", "tf32", "bf16"] = "torch"

    def __post_init__(self) -> None:
        check(self.epochs >= 0, "epochs", f"{self.epochs} is not >= 0")
        check(self.batch_size >= 1, "batch_size", f"{self.batch_size} is not >= 1")
        check(self.lr > 0, "lr", f"{self.lr} is not > 0")
        check(all(lr > 0 for lr in self.lr_grid or []), "lr_grid", f"{self.lr_grid}: every lr must be > 0")
        check(self.momentum >= 0, "momentum", f"{self.momentum} is not >= 0")
        check(self.weight_decay >= 0, "weight_decay", f"{self.weight_decay} is not >= 0")
        check(self.clip_norm is None or self.clip_norm > 0, "clip_norm", f"{self.clip_norm} is not > 0")
        check(self.max_batches is None or self.max_batches >= 1, "max_batches", f"{self.max_batches} is not >= 1")
        known = METRICS + CLASSIFICATION_METRICS + CATEGORY_METRICS
        check(
            self.select_metric in known,
            "select_metric",
            f"{self.select_metric!r} is not a metric; known: {', '.join(known)}",
        )
        check(0 <= self.category_weight <= 1, "category_weight", f"{self.category_weight} is not in [0, 1]")
        check(
            self.loss in ("hinge", "pointwise") or self.category_weight == 0,
            "category_weight",
            f"weighs the category loss against a ranking loss; loss {self.loss!r} is not one",
        )
        check(
            self.monitor_every is None or self.monitor_every >= 1, "monitor_every", f"{self.monitor_every} is not >= 1"
        )
        check(
            self.monitor_every is None or bool(self.monitor_splits),
            "monitor_every",
            "scores the monitor splits, and monitor_splits names none",
        )
        if self.embedding_updates == "sparse":
            check(
                self.optimizer not in ("rmsprop", "sgd") or (self.optimizer == "sgd" and not self.momentum),
                "embedding_updates",
                f"sparse has no form for optimizer {self.optimizer!r}{' with momentum' if self.momentum else ''}",
            )
            check(
                not self.weight_decay,
                "embedding_updates",
                "sparse cannot decay the rows a batch does not read: set weight_decay: 0",
            )
            check(not self.clip_norm, "embedding_updates", "sparse cannot clip sparse gradients: set clip_norm: null")
        check(
            self.optimizer_kernel == "loop" or self.optimizer in FUSED,
            "optimizer_kernel",
            f"fused has no form for optimizer {self.optimizer!r} (torch fuses {', '.join(FUSED)})",
        )
        check(
            not self.dev_split.startswith("test"),  # test, test1, test2: the splits a table reports
            "dev_split",
            f"{self.dev_split!r}: the checkpoint would be selected on the split it is reported on; "
            "select on a development split (dev)",
        )
        check(
            self.dev_split not in self.monitor_splits,
            "monitor_splits",
            f"{self.monitor_splits} repeats the dev split {self.dev_split!r}",
        )
        check(self.loss != "hinge" or self.margin is not None, "margin", "the hinge loss needs a margin")
        check(self.margin is None or self.margin > 0, "margin", f"{self.margin} is not > 0")
        check(
            self.device == "auto" or self.device == "cpu" or self.device.startswith("cuda"),
            "device",
            f"{self.device!r}: expected auto, cpu, cuda or cuda:N",
        )
