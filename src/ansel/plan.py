"""What a preset will cost before it runs (``ansel plan``): per table and figure, its runs,
epochs, batches per epoch, and device-minutes from per-batch costs measured by earlier runs.

``ansel plan --measure`` times the shapes no run has measured yet (a few batches and one dev
scoring each, on this machine's device) into ``results/costs/<device>.json``, which later plans
read like any other measurement.

A cost is measured per run *shape* (``shape``: dataset, architecture, the hyperparameters that
change the arithmetic, batch size, negatives, truncation): what one training step and one dev
scoring cost depends on these, not on the seed, learning rate or epochs. A run's minutes add, to
its epochs' steps and dev scorings, the time outside them (start-up, and the state written after
every epoch): fitted per device over the committed runs' timings (``Overhead``).

Sources are a checkout (``results/runs/...`` with each run's config.json, ``results/timings/...``
from ``ansel train --timings``: per epoch the training loop's seconds and batches, and
``dev_seconds``; ``results/costs/``) or a committed record (``runs/<dataset>/<model>/seed<k>/``
with its ``timings.json`` inside; ``costs/``); records made before timings had their own file keep
``seconds_per_batch`` in ``log.csv``. By default every record under ``reports/`` is read. Each cost names its device (``cuda``, ``cpu/AVX512`` ...: a
CPU's instruction set changes its speed; a record of ``log.csv`` alone names no CPU or GPU: ``cuda/?``).
A plan prices on one device, never adding two devices' minutes (``device_costs``, which prices a GPU
kit too): the one whose costs price the most of the preset's runs, of those ``--device`` names exactly
or else starts. Runs of no measured shape are listed, not guessed.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
import math
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ansel import paper_targets as P
from ansel import targets as T
from ansel.config import root
from ansel.data.vocab import run_vocab_file
from ansel.figure_kinds import kind_of as figure_kind_of
from ansel.jsonfile import read_json
from ansel.models.registry import is_trained
from ansel.plan_stacks import SPEED_FILE, Stack, layers_stack, read_stacks, row_key, stack_parts
from ansel.records.kit_runner.trainings import GPU_PARALLEL
from ansel.settings import ConfigError, SettingError, check, parse
from ansel.table_kinds import kind_of

SHAPE_KEYS = ("arch", "hparams", "max_len_q", "max_len_a")
TRAIN_SHAPE_KEYS = ("batch_size", "negatives", "max_batches")
# keyed with their defaults filled in: options added after costs-full ran (2026-11-26), whose runs had
# the defaults' arithmetic; a sparse update, a fused optimizer kernel or another precision is another step
DEFAULTED_TRAIN_KEYS = ("embedding_updates", "optimizer_kernel", "precision")
# Hyperparameters that change a run's numbers but not the operations a step runs nor their sizes: a
# cost measured at one value prices every other, so they do not split a shape.
VALUE_ONLY = {
    "normalize_embeddings": "the initial vectors scaled to unit rows once, when the model is built",
    "init": "the initial weights' distribution",
    "shared_encoder": "one encoder per text (false) runs the same operations on the same sizes as one encoder "
    "run on both; only the optimizer's elementwise update covers the second encoder's weights",
}
# a rate changes numbers only, but at 0 torch skips the dropout (no mask drawn): keyed as on or off
RATES = ("dropout", "lstm_dropout")
# Not keyed, though they change a step: loss, optimizer, momentum, clip_norm, category_weight. The costs
# measured before a shape named them do not say them, and in the presets a shape fixes them but for MTAS's
# category_weight (one linear head over the question's vector beside its encoders). The one loss that
# changes a step's whole path, MTAS's classifier alone (``loss: category``: no answer is encoded), is keyed.


def shape(cfg: dict) -> str:
    """The part of a run config its per-batch cost depends on."""
    train = cfg["train"]
    return shape_key(
        {
            "dataset": cfg["dataset"],
            **{k: cfg.get(k) for k in SHAPE_KEYS},
            **{k: train.get(k) for k in (*TRAIN_SHAPE_KEYS, *DEFAULTED_TRAIN_KEYS)},
            **({"loss": "category"} if train.get("loss") == "category" else {}),
        }
    )


def shape_key(s: dict) -> str:
    """A shape's key: the architecture's and the negatives' defaults filled in (a value given and its
    default are one shape), the value-only hyperparameters left out and rates reduced to on or off.
    Reads a key written before any of these (a committed cost file's) as the shape it measured."""
    from ansel.training.config import NegativesConfig, TrainConfig

    hparams = {**_arch_defaults(s["arch"]), **(s.get("hparams") or {})}
    hparams = {
        k: (v > 0 if k in RATES and isinstance(v, (int, float)) else v)
        for k, v in hparams.items()
        if k not in VALUE_ONLY
    }
    negatives = s.get("negatives")
    if isinstance(negatives, dict):
        negatives = {**_defaults(NegativesConfig), **negatives}
    defaults = _defaults(TrainConfig)
    return json.dumps(
        {**s, "hparams": hparams, "negatives": negatives, **{k: s.get(k) or defaults[k] for k in DEFAULTED_TRAIN_KEYS}},
        sort_keys=True,
    )


@functools.cache
def _defaults(cls: type) -> dict:
    return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}


@functools.cache
def _arch_defaults(arch: str) -> dict:
    """Every hyperparameter of ``arch`` (each has a default) at its default."""
    from ansel.models.registry import parse_hparams

    return vars(parse_hparams(arch, {}, "shape"))


@dataclass
class Overhead:
    """A run's device time outside its epochs' training steps and dev scorings, as the runs timed on one
    device spent it (``costs_by_device`` fits it): ``start_seconds`` once (imports, data and model
    building, the last files) and ``epoch_seconds`` after every epoch (``state.pt`` written, the best
    weights kept, the log)."""

    start_seconds: float
    epoch_seconds: float
    runs: int  # the timed runs it is fitted over

    @classmethod
    def fit(cls, runs: list[tuple[int, float]]) -> Overhead | None:
        """The line start + epochs x per epoch through the median seconds outside the epochs of the ``runs``
        ((epochs, seconds) each) of each epoch count, neither part below 0; None unless two epoch counts
        tell the start from the epochs. Medians: a run resumed in a later process (its start that
        process's, its epochs all of them) or slowed by its neighbours moves the line not at all."""
        counts: dict[int, list[float]] = {}
        for epochs, seconds in runs:
            counts.setdefault(epochs, []).append(seconds)
        if len(counts) < 2:
            return None
        x, y = list(counts), [statistics.median(v) for v in counts.values()]
        per_epoch, start = statistics.linear_regression(x, y)
        if per_epoch < 0:
            per_epoch, start = 0.0, statistics.mean(y)
        elif start < 0:
            per_epoch, start = statistics.linear_regression(x, y, proportional=True)[0], 0.0
        return cls(start, per_epoch, len(runs))


@dataclass
class Cost:
    seconds_per_batch: float
    dev_seconds: float | None  # per epoch; None: not measured (older records)
    device: str
    source: str
    peak_mb: float | None = None  # the device's peak memory (CUDA), sizes concurrent jobs
    batches: int | None = None  # per epoch, as the measured run trained (same shape: same count)
    overhead: Overhead | None = None  # its device's (``costs_by_device`` fits it), never read from a costs file
    # {seeds: the shape's seeds stacked}, measured on this cost's device beside it (``plan_stacks``)
    stacks: dict[int, Stack] = field(default_factory=dict)
    stack_failed: str | None = None  # why the speed entry's stack of this shape failed

    def __post_init__(self):
        for key in ("seconds_per_batch", "dev_seconds", "peak_mb"):
            value = getattr(self, key)
            check(value is None or (math.isfinite(value) and value >= 0), key, f"{value} is not a number >= 0")
        check(self.batches is None or self.batches >= 1, "batches", f"{self.batches} is not >= 1")


def default_sources() -> list[Path]:
    """This checkout and every committed record (``reports/*/`` and ``reports/device/*/``)."""
    records = [
        d
        for d in [*root().glob("reports/*"), *root().glob("reports/device/*")]
        if (d / "runs").is_dir() or (d / "costs").is_dir() or (d / "results/runs").is_dir()
    ]
    return [root(), *sorted(records)]


def costs_by_device(sources: list[Path]) -> dict[str, dict[str, Cost]]:
    """{device: {shape: the cost measured on that device}}, a later source winning over an earlier one."""
    found, attach = _read_costs(sources)
    by_device: dict[str, dict[str, Cost]] = {}
    for key, cost in found:
        by_device.setdefault(cost.device, {})[key] = cost
    return {d: attach(costs) for d, costs in by_device.items()}


def device_costs(cfgs: Iterable[dict], sources: list[Path], device: str | None = None) -> tuple[str | None, dict, dict]:
    """The costs of one device, those that price the run configs ``cfgs`` (every consumer of measured costs
    takes them from here): a total never adds minutes of two devices (a CPU's and a GPU's, two GPUs').
    Of the devices measured, the one named ``device`` or, where none is or its costs price none of ``cfgs``,
    those whose names start with it (every device when not given), the one whose costs price the most of ``cfgs``' trained runs, the
    first by name of equals. Returns (that device, None where none is measured; its {shape: Cost};
    {each device measured: the trained runs its costs price})."""
    by_device = costs_by_device(sources)
    runs: dict[str, int] = {}  # {shape: the trained runs of it}
    for cfg in cfgs:
        if is_trained(cfg["arch"]):
            runs[shape(cfg)] = runs.get(shape(cfg), 0) + 1
    priced = {d: sum(n for key, n in runs.items() if key in costs) for d, costs in by_device.items()}
    exact = device in by_device and priced[device] > 0
    named = [device] if exact else [d for d in by_device if device is None or d.startswith(device)]
    if not named:
        return None, {}, priced
    chosen = min(named, key=lambda d: (-priced[d], d))
    return chosen, by_device[chosen], priced


def plan_costs(config: dict, sources: list[Path], device: str | None = None) -> tuple[str | None, dict, dict]:
    """``device_costs`` of ``config``'s runs: the device ``ansel plan`` prices the preset on."""
    return device_costs((run.config(config) for run in P.paper_runs(config)), sources, device)


def _read_costs(sources: list[Path]):
    """(every (shape, Cost) read, in the sources' order; a function giving {shape: Cost} each its device's
    ``Overhead`` and stacks)."""
    found: list[tuple[str, Cost]] = []
    outside: dict[str, list[tuple[int, float]]] = {}  # {device: (epochs, seconds outside them) of each timed run}
    stacks: dict[str, dict[int, Stack]] = {}
    failed: dict[str, str] = {}
    for src in sources:
        own: dict[str, Cost] = {}  # this source's: the device of its speed entry's stacks
        for path in sorted([*src.glob("results/costs/*.json"), *src.glob("costs/*.json")]):
            for key, c in read_json(path).items():
                for derived, why in (("overhead", "fitted from runs' timings"), ("stacks", f"read from {SPEED_FILE}")):
                    if isinstance(c, dict) and derived in c:
                        raise ConfigError(f"{path}: {key}.{derived}: {why}, never read from a costs file")
                c = {**c, "source": str(path)} if isinstance(c, dict) else c  # parse names a list or a number
                cost = parse(Cost, c, f"{path}: {key}")  # the value's fault named before the key's
                own[_file_shape(path, key)] = cost
                found.append((_file_shape(path, key), cost))
        src_stacks, src_failed = read_stacks(src, own, shape_key)
        for key, by_seeds in src_stacks.items():
            stacks.setdefault(key, {}).update(by_seeds)
        failed |= src_failed
        for config in sorted(
            [*src.glob("results/runs/*/*/seed*/config.json"), *src.glob("runs/*/*/seed*/config.json")]
        ):
            cfg = read_json(config)
            if missing := [k for k in ("dataset", "model", "train") if k not in cfg]:
                raise ConfigError(f"{config}: not a run's config (no {', '.join(missing)})")
            if measured := _run_cost(src, config.parent, cfg, outside):
                try:
                    key = shape(cfg)
                except ConfigError as e:
                    raise ConfigError(f"{config}: not a run's config ({e})") from None
                if isinstance(measured, Stack):
                    stacks.setdefault(key, {})[measured.seeds] = measured
                else:
                    found.append((key, measured))
    fits = {d: Overhead.fit(runs) for d, runs in outside.items()}

    def attach(costs: dict[str, Cost]) -> dict[str, Cost]:
        return {
            k: dataclasses.replace(
                c,
                overhead=fits.get(c.device),
                stacks={n: st for n, st in stacks.get(k, {}).items() if st.device == c.device},
                stack_failed=failed.get(k),
            )
            for k, c in costs.items()
        }

    return found, attach


def _file_shape(path: Path, key: str) -> str:
    """A costs file's key as ``shape_key`` reads it (a key written with other defaults or keys is one shape)."""
    try:
        s = json.loads(key)
        check(isinstance(s, dict) and {"dataset", "arch"} <= set(s), "key", "not a mapping with a dataset and an arch")
        return shape_key(s)
    except (json.JSONDecodeError, TypeError, ConfigError, SettingError) as e:
        raise ConfigError(f"{path}: {key}: not a run shape (the JSON of ``ansel.plan.shape``: {e})") from None


def _run_cost(src: Path, run_dir: Path, cfg: dict, outside: dict[str, list]) -> Cost | Stack | None:
    """The cost a run's timings measured, its seconds outside its epochs added to ``outside``; a run
    trained in a stack of seeds measured its stack's steps (a ``Stack``), no cost of its own."""
    timings = src / "results/timings" / cfg["dataset"] / cfg["model"] / f"{run_dir.name}.json"
    timings = timings if timings.exists() else run_dir / "timings.json"  # a record keeps it in the run
    if timings.exists():
        try:
            train = read_json(timings)["train"]
            if seeds := train.get("stacked_seeds"):
                stack = timings_cost(train, str(timings))
                return stack and Stack(seeds, stack.seconds_per_batch, stack.device, stack.source, stack.peak_mb)
            cost = timings_cost(train, str(timings))
            if cost and (seconds := outside_seconds(train)):
                outside.setdefault(cost.device, []).append(seconds)
            return cost
        except (KeyError, TypeError, SettingError) as e:
            raise ConfigError(f"{timings}: not a run's timings ({type(e).__name__}: {e})") from None
    # a record older than timings files: of the committed ones, reports/device/apnet-wikiqa-h100 alone (its 15
    # runs) keeps seconds_per_batch in log.csv; it recorded no device, so the record stands for one
    log = run_dir / "log.csv"
    if log.exists():
        rows = [r for r in csv.DictReader(log.open()) if r.get("seconds_per_batch")]
        if rows:  # a record made before timings files: its config names the device, not which CPU or GPU ("/?")
            device = f"{str(cfg['train'].get('device', '?')).split(':')[0]}/?"
            return Cost(sum(float(r["seconds_per_batch"]) for r in rows) / len(rows), None, device, str(log))
    return None


def outside_seconds(train: dict) -> tuple[int, float] | None:
    """(epochs, seconds outside their training steps and dev scorings) of a run's timings (its "train"
    part); None where they keep no start and end."""
    if "started" not in train or "finished" not in train:
        return None
    epochs = [e for e in train["epochs"] if e["batches"]]
    return len(epochs), train["finished"] - train["started"] - sum(
        e["seconds"] + e.get("dev_seconds", 0) for e in epochs
    )


def unmeasured_shapes(
    config: dict,
    known: dict[str, Cost],
    datasets: list[str] | None = None,
    data_root: Path | None = None,
) -> list[dict]:
    """One run config per shape of ``config``'s runs that ``known`` (one device's costs: ``plan_costs``)
    does not price and whose vocabulary is on disk under ``data_root`` (the checkout), in the order of
    ``datasets`` (default: every dataset, sorted) and then of the shapes."""
    data_root = data_root or root()
    todo: dict[str, dict] = {}
    for run in P.paper_runs(config):
        cfg = run.config(config)
        if datasets is not None and cfg["dataset"] not in datasets:
            continue
        vocab = data_root / run_vocab_file(cfg, T.processed_dir(cfg["dataset"]))
        if is_trained(cfg["arch"]) and shape(cfg) not in known and vocab.exists():
            todo.setdefault(shape(cfg), cfg)
    rank = {d: i for i, d in enumerate(datasets or [])}
    return [todo[key] for key in sorted(todo, key=lambda k: (rank.get(todo[k]["dataset"], len(rank)), k))]


def timings_cost(train: dict, source: str) -> Cost | None:
    """The cost a run's timings (``ansel train --timings``: its "train" part) measured; None: no batch."""
    epochs = [e for e in train["epochs"] if e["batches"]]
    if not epochs:
        return None
    dev = [e["dev_seconds"] for e in epochs if "dev_seconds" in e]
    return Cost(
        sum(e["seconds"] for e in epochs) / sum(e["batches"] for e in epochs),
        sum(dev) / len(dev) if dev else None,
        device_label(train),
        source,
        train.get("peak_device_mb"),
        max(e["batches"] for e in epochs),
    )


def measure(
    configs: list[dict],
    out_dir: Path,
    batches: int = 3,
    data_root: Path | None = None,
    deadline: float | None = None,
    report=print,
) -> Path | None:
    """Time each run config's shape on this machine's device: ``batches`` training batches and one dev
    scoring (``unmeasured_shapes`` picks them), and the batches of one of its epochs. Each cost goes
    to ``out_dir/<device>.json`` as soon as it is measured (merged with what the file holds), so an
    interrupted measurement keeps what it did; none is started after ``deadline`` (``time.time()``)."""
    import time

    from ansel.training.trainer import measure_costs

    data_root = data_root or root()
    path, loaded, examples = None, {}, {}
    for i, cfg in enumerate(configs, 1):
        if deadline is not None and time.time() > deadline:
            report(f"deadline: {len(configs) - i + 1} of {len(configs)} shapes left unmeasured")
            break
        data, dev = shape_inputs(cfg, data_root, loaded)
        try:
            cost = measure_costs(cfg, data, dev, batches)
        except Exception as e:  # one shape's fault (memory, say) costs the others nothing
            report(f"[{i}/{len(configs)}] {cfg['dataset']} {cfg['model']}: failed: {type(e).__name__}: {e}")
            continue
        path = save_cost(out_dir, cfg, cost, data_root, examples)
        report(
            f"[{i}/{len(configs)}] {cfg['dataset']} {cfg['model']}: {cost['seconds_per_batch']:.4f} s/batch, "
            f"dev scoring {cost['dev_seconds']:.1f} s"
        )
    return path


def shape_inputs(cfg: dict, data_root: Path, loaded: dict, dev_questions: int | None = None):
    """(the run's data as its evaluation sees it, its dev evaluator), the arrays read once per dataset
    and lengths into ``loaded`` (one dataset's at a time: shapes come grouped by dataset). With
    ``dev_questions``, the dev split is cut to a seeded draw of that many questions."""
    from ansel.data.batches import RunData
    from ansel.data.vocab import Vocab
    from ansel.evaluation.config import EvalConfig
    from ansel.evaluation.evaluate import dev_evaluator, eval_data
    from ansel.training.config import TrainConfig

    processed = data_root / T.processed_dir(cfg["dataset"])
    lengths = (cfg["dataset"], cfg["max_len_q"], cfg["max_len_a"], cfg.get("vocab"))
    if lengths not in loaded:
        loaded.clear()
        loaded[lengths] = RunData.load(processed, Vocab.load(data_root / run_vocab_file(cfg, processed)), *lengths[1:3])
    ev = parse(EvalConfig, cfg["eval"], "eval")
    data, split = eval_data(loaded[lengths], ev), parse(TrainConfig, cfg["train"], "train").dev_split
    if dev_questions:
        data = data.sample_questions([split], dev_questions, 0)
    return data, dev_evaluator(data, split, ev)


def save_cost(out_dir: Path, cfg: dict, cost: dict, data_root: Path, examples: dict) -> Path:
    """``cost`` (``Cost``'s fields) of ``cfg``'s shape merged into ``out_dir/<device>.json``, with the
    batches of one of its epochs: a checkout without the processed data (a fresh clone) prices it too."""
    from ansel.files import write_text_atomic

    dataset_examples(examples, cfg["dataset"], data_root / T.processed_dir(cfg["dataset"]))
    cost = {**cost, "batches": batches_per_epoch(cfg, examples)}
    path = out_dir / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', cost['device'])}.json"
    costs = {**(read_json(path) if path.exists() else {}), shape(cfg): cost}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(costs, indent=2, sort_keys=True) + "\n")
    return path


def device_label(train: dict) -> str:
    """A timings file's device, with the CPU's instruction set or the GPU's name where it has one
    (``cpu/AVX512``, ``cuda/NVIDIA H200``)."""
    device = train.get("device", "?")
    detail = train.get("cpu_capability") or train.get("device_name")
    return f"{device.split(':')[0]}/{detail}" if detail else device


def batches_per_epoch(cfg: dict, examples: dict[str, tuple[int, int] | None]) -> int | None:
    """Training batches of one epoch, at most max_batches: the train split's positive pairs in batches
    (a ranking loss draws each one's negative) or, for ``loss: classification``, every labelled pair
    (as the trainer's epoch runs). ``examples``: {dataset: ``train_examples``}."""
    counts = examples.get(cfg["dataset"])
    if counts is None:
        return None
    n = counts[1] if cfg["train"].get("loss") == "classification" else counts[0]
    batches = math.ceil(n / cfg["train"]["batch_size"])
    return min(batches, cfg["train"]["max_batches"]) if cfg["train"].get("max_batches") else batches


def train_examples(processed: Path) -> tuple[int, int] | None:
    """(positive pairs, labelled pairs) of the processed train split; None where it is not on disk."""
    path = processed / "candidates-train.parquet"
    if not path.exists():
        return None
    labels = pd.read_parquet(path, columns=["label"]).label
    return int((labels == 1).sum()), len(labels)


def dataset_examples(examples: dict, dataset: str, processed: Path) -> None:
    """Puts ``train_examples`` of ``dataset`` into ``examples`` ({dataset: its counts}), read once."""
    if dataset not in examples:
        examples[dataset] = train_examples(processed)


def plan(
    config: dict,
    costs: dict[str, Cost],
    cores: int | None = None,
    budget_hours: float | None = None,
) -> pd.DataFrame:
    """One row per table or figure with runs: runs, epochs, batches per epoch, measured runs and
    the device-minutes of those (training steps plus each epoch's dev scoring where measured) by
    ``costs`` (one device's: ``plan_costs``). With ``cores``: the wall hours of each on that many
    one-thread jobs at a time; with ``budget_hours`` too, a column marking the items chosen to fit it
    (``choose``)."""
    rows, examples, items = [], {}, []
    for paper in config["papers"]:
        tables, figures = P.paper_items(config, paper)
        items += [(paper, t.id, kind_of(t).runs(config, t)) for t in tables if kind_of(t).metric_grid]
        items += [(paper, f["id"], figure_kind_of(f).runs(config, f)) for f in figures]
    for paper, item, item_runs in items:
        rows.append({"paper": paper, "item": item, **_estimate(config, item_runs, costs, examples)})
    every = sorted(set(P.paper_runs(config)))  # a run read by a table and a figure is trained once
    rows.append({"paper": "all", "item": "(each run once)", **_estimate(config, every, costs, examples)})
    table = pd.DataFrame(rows)
    if cores:
        measured = table["measured runs"] == table["runs"]
        hours = (table["device-minutes (measured runs)"] / cores / 60).round(2)
        # an item some of whose runs are unmeasured costs at least this
        table[f"wall hours on {cores} cores"] = [f"{h:g}" if m else f">= {h:g}" for h, m in zip(hours, measured)]
    if cores and budget_hours:
        chosen = choose(config, items, costs, examples, cores * budget_hours * 60)
        table["chosen"] = [("yes" if f"{p}/{i}" in chosen else "") for p, i in zip(table.paper, table["item"])]
    return table


def choose(
    config: dict,
    items: list[tuple[str, str, list[T.Run]]],
    costs: dict[str, "Cost"],
    examples: dict,
    budget_minutes: float,
) -> list[str]:
    """The items ("paper/item") to run within ``budget_minutes`` of device time, cheapest first, a run
    that several of them read counted once; only items whose every run has a measured shape."""
    minutes = {}
    for paper, item, item_runs in items:
        each = {run: plan_minutes(run.config(config), costs, examples)[0] for run in item_runs}
        if item_runs and None not in each.values():
            minutes[f"{paper}/{item}"] = each
    chosen, spent = [], {}
    for name in sorted(minutes, key=lambda n: sum(minutes[n].values())):
        added = {run: m for run, m in minutes[name].items() if run not in spent}
        if sum(spent.values()) + sum(added.values()) <= budget_minutes:
            chosen.append(name)
            spent |= added
    return chosen


def plan_minutes(cfg: dict, costs: dict[str, Cost], examples: dict) -> tuple[float | None, Cost | None]:
    """A run's device-minutes (``run_parts`` summed) and the cost they come from; None where its
    shape or its dataset's size is unknown. ``examples``: {dataset: ``train_examples``}, filled from
    the processed data as needed."""
    if not is_trained(cfg["arch"]):
        return 0.0, None  # a ranker with nothing to train (lexical, random): no epoch to cost
    parts, cost = run_parts(cfg, costs, examples)
    return (None if parts is None else sum(parts.values())), cost


def run_parts(cfg: dict, costs: dict[str, Cost], examples: dict) -> tuple[dict[str, float] | None, Cost | None]:
    """A trained run's device-minutes by part (``PARTS``) and its cost; None where its shape or its
    dataset's size is unknown: training steps; dev scoring after each epoch, and its monitored splits'
    scorings at the dev split's cost (after each epoch, or every ``monitor_every`` steps); checkpoints
    and start-up from its device's ``Overhead`` (none where no timed runs fit one)."""
    dataset_examples(examples, cfg["dataset"], root() / T.processed_dir(cfg["dataset"]))
    cost = costs.get(shape(cfg))
    n = run_batches(cfg, cost, examples)
    if cost is None or n is None:
        return None, cost
    t, epochs = cfg["train"], cfg["train"]["epochs"]
    monitors = len(t.get("monitor_splits") or []) * (n / t["monitor_every"] if t.get("monitor_every") else 1)
    parts = {
        "training": epochs * n * cost.seconds_per_batch,
        "dev scoring": epochs * (1 + monitors) * (cost.dev_seconds or 0),
    }
    if cost.overhead:
        parts |= {"checkpoints": epochs * cost.overhead.epoch_seconds, "start-up": cost.overhead.start_seconds}
    return {k: v / 60 for k, v in parts.items()}, cost


PARTS = ("training", "dev scoring", "checkpoints", "start-up")
LEASE_MINUTES = 13  # of a lease's 15 device-minutes: the start (30-60 s) and a minute's margin off (QUEUE.md)
COMMAND_MINUTES = 9  # a run ends inside one command of at most 10 minutes, a minute's margin kept


def tally(jobs: Iterable[dict[str, float]]) -> tuple[dict[str, float], list[float]]:
    """Device-minutes by part summed over ``jobs`` (runs or stacks), and the minutes of each job too
    long for one command."""
    totals, long_jobs = dict.fromkeys(PARTS, 0.0), []
    for parts in jobs:
        totals = {k: totals[k] + parts.get(k, 0.0) for k in PARTS}
        if sum(parts.values()) > COMMAND_MINUTES:
            long_jobs.append(sum(parts.values()))
    return totals, long_jobs


def reproduction(config: dict, costs: dict[str, Cost], examples: dict | None = None) -> dict:
    """The preset's trained runs once each: their device-minutes by part (one run at a time), the
    fifteen-minute leases they take one at a time and at the kit's packing, the runs too long for
    one command, each unpriced shape ({shape: [a run config of it, its runs, why]}) and the
    overheads of the devices that priced them ({device: ``Overhead`` or None}); under "stacked", the
    same runs with a row's seeds as one stack where ``row_stack`` prices one (``stacked``)."""
    examples = {} if examples is None else examples
    alone: list[dict[str, float]] = []  # each priced run's parts, in the runs' order
    unpriced, overheads = {}, {}
    rows: dict[str, list[tuple[dict, dict[str, float]]]] = {}  # {row: (config, parts) of each priced seed}
    for run in sorted(set(P.paper_runs(config))):
        cfg = run.config(config)
        if not is_trained(cfg["arch"]):
            continue
        parts, cost = run_parts(cfg, costs, examples)
        if parts is None:
            why = "no batches per epoch (its cost kept none, its data not processed here)" if cost else "unmeasured"
            entry = unpriced.setdefault(shape(cfg), [cfg, 0, why])
            entry[1] += 1
            continue
        alone.append(parts)
        overheads[cost.device] = cost.overhead
        rows.setdefault(row_key(cfg), []).append((cfg, parts))
    totals, long_runs = tally(alone)
    minutes = sum(totals.values())
    return {
        "parts": totals,
        "minutes": minutes,
        "priced": len(alone),
        "unpriced": unpriced,
        "leases": math.ceil(minutes / LEASE_MINUTES),
        "packed leases": math.ceil(minutes / LEASE_MINUTES / GPU_PARALLEL),
        "packing": GPU_PARALLEL,
        "long runs": long_runs,
        "overheads": overheads,
        "stacked": stacked(list(rows.values()), costs, examples),
    }


def stacked(rows: list[list[tuple[dict, dict[str, float]]]], costs: dict[str, Cost], examples: dict) -> dict:
    """The priced runs (``rows``: each row's seeds, (config, parts alone) each) with a row's seeds as one
    stack where ``row_stack`` prices one, the others alone: device-minutes by part, the stacks and the
    runs in them, the fifteen-minute leases one stack or run at a time (the kit's packing was measured
    for runs alone), the stacks or runs too long for one command, and each shape whose rows would
    stack but have no measured stack ({shape: [a run config of it, its runs, why]})."""
    stacks, in_stacks, all_jobs, lacking = 0, 0, [], {}
    for seeds in rows:
        cfg, jobs = seeds[0][0], [parts for _, parts in seeds]
        if len(seeds) > 1:
            priced = row_stack(cfg, len(seeds), costs, examples)
            if isinstance(priced, dict):
                stacks, in_stacks, jobs = stacks + 1, in_stacks + len(seeds), [priced]
            elif priced is not None:
                entry = lacking.setdefault(shape(cfg), [cfg, 0, priced])
                entry[1] += len(seeds)
        all_jobs += jobs
    totals, long_jobs = tally(all_jobs)
    minutes = sum(totals.values())
    return {
        "parts": totals,
        "minutes": minutes,
        "stacks": stacks,
        "runs": in_stacks,
        "leases": math.ceil(minutes / LEASE_MINUTES),
        "long": long_jobs,
        "lacking": lacking,
    }


def row_stack(cfg: dict, seeds: int, costs: dict[str, Cost], examples: dict) -> dict[str, float] | str | None:
    """A row of ``seeds`` seeds of ``cfg`` as one stacked model: its device-minutes by part
    where a stack of that many seeds was measured beside its alone cost and costs fewer minutes than
    the seeds alone; else why it has no stacked price where its model would stack (what the speed
    entry must measure); None where its shape is unmeasured, it does not stack, or stacking was measured
    not to pay."""
    cost = costs.get(shape(cfg))
    if cost is None or not layers_stack(cfg) or cost.stack_failed:
        return None
    alone, _ = run_parts(cfg, costs, examples)
    if (stack := cost.stacks.get(seeds)) is None:
        measured = f" (measured: stacks of {', '.join(map(str, sorted(cost.stacks)))})" if cost.stacks else ""
        return f"no stack of {seeds} seeds measured on {cost.device}{measured}"
    parts = stack_parts(alone, cfg, run_batches(cfg, cost, examples), stack)
    return parts if sum(parts.values()) < seeds * sum(alone.values()) else None


def costliest_shapes(config: dict, costs: dict[str, Cost], n: int, examples: dict | None = None) -> list[dict]:
    """A run config (seed 1's where there is one) of each of the ``n`` shapes whose runs in ``config``
    cost the most device-minutes together (``run_parts``; unpriced shapes are not ranked)."""
    examples = {} if examples is None else examples
    minutes: dict[str, float] = {}
    first: dict[str, dict] = {}
    for run in sorted(set(P.paper_runs(config))):
        cfg = run.config(config)
        if not is_trained(cfg["arch"]):
            continue
        parts, _ = run_parts(cfg, costs, examples)
        if parts is not None:
            key = shape(cfg)
            minutes[key] = minutes.get(key, 0.0) + sum(parts.values())
            if key not in first or cfg["seed"] == 1 and first[key]["seed"] != 1:
                first[key] = cfg
    return [first[k] for k in sorted(minutes, key=lambda k: -minutes[k])[:n]]


def stackless_shapes(config: dict, costs: dict[str, Cost], n: int, examples: dict | None = None) -> list[dict]:
    """A run config (seed 1's where there is one) of each of the ``n`` shapes whose rows would stack but
    have no stack of their seeds measured (``stacked``'s "lacking"), those whose runs cost the most
    device-minutes alone first: what a speed entry times next."""
    examples = {} if examples is None else examples
    lacking = reproduction(config, costs, examples)["stacked"]["lacking"]
    return [cfg for cfg in costliest_shapes(config, costs, len(costs), examples) if shape(cfg) in lacking][:n]


def run_batches(cfg: dict, cost: Cost | None, examples: dict) -> int | None:
    """Training batches of one of the run's epochs: from the processed data, else (a fresh clone) as
    the run that measured its shape trained."""
    return batches_per_epoch(cfg, examples) or (cost.batches if cost else None)


def _estimate(config: dict, item_runs: list[T.Run], costs: dict[str, Cost], examples: dict) -> dict:
    minutes, measured, epochs, batches, devices = 0.0, 0, set(), set(), set()
    for run in item_runs:
        cfg = run.config(config)
        run_minutes, cost = plan_minutes(cfg, costs, examples)
        if is_trained(cfg["arch"]):
            n = run_batches(cfg, cost, examples)
            epochs.add(cfg["train"]["epochs"])
            batches.add(n if n is not None else "?")
        if run_minutes is not None:
            measured += 1
            devices |= {cost.device} if cost else set()
            minutes += run_minutes
    return {
        "runs": len(item_runs),
        "epochs": _span(epochs),
        "batches/epoch": _span(batches),
        "measured runs": measured,
        "device-minutes (measured runs)": round(minutes, 1),
        "measured on": ", ".join(sorted(devices)) or "-",
    }


def _span(values: set) -> str:
    known = sorted(v for v in values if v != "?")
    text = "" if not known else str(known[0]) if len(known) == 1 else f"{known[0]}-{known[-1]}"
    return text + ("?" if "?" in values else "") if known else "?"
