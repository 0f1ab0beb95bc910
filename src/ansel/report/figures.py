"""Paper figures drawn: a function (config, spec, out_prefix) per figure kind writes png+pdf.

Each registers with ``@draws("name")`` under its kind's name in ``ansel.figure_kinds``, which
knows what the kind reads (the figure rule's inputs).
``spec["paper"]`` is the paper the figure belongs to, ``spec["run_dataset"]`` the dataset its runs
use under the preset (both set where the spec is read: ``ansel.specs.figure_spec``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import matplotlib

matplotlib.use("Agg")  # cluster nodes and CI have no display
import json
import math
import sys

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from ansel.config import root
from ansel.data.canonical import Dataset
from ansel.figure_kinds import AccuracyBars, Sweep, heatmap_table, kind_of
from ansel.report.by_length import accuracy_by_length, plot_accuracy_by_length, question_lengths
from ansel.report.plotting import save
from ansel.report.tables import (
    aggregate,
    last_epoch_metric,
    ours_headers,
    published_values,
    run_log,
    run_metric,
    run_value,
    split_labels,
    split_run,
)
from ansel.run_files import LogFileError, rebuild_log
from ansel.targets import (
    PUBLISHED_RESULTS,
    Run,
    Variant,
    processed_dir,
    runs,
    seed_count,
    spec_seed,
    sweep_models,
    sweep_values,
)

FigureFn = Callable[[dict, dict, Path], None]
_DRAWN: dict[str, FigureFn] = {}


def draws(kind: str):
    """Registers the function that draws figures of ``kind`` (a name of ``ansel.figure_kinds``)."""

    def wrap(fn: FigureFn) -> FigureFn:
        _DRAWN[kind] = fn
        return fn

    return wrap


def drawn() -> list[str]:
    """The kinds a function here draws."""
    return sorted(_DRAWN)


def render_figure(config: dict, spec: dict, prefix: Path) -> None:
    kind = kind_of(spec)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    ds = spec.get("run_dataset")
    if "title" in spec and ds != spec.get("dataset"):  # a kind's own title names the dataset it read
        spec = {**spec, "title": f"{spec['title']}\n(ours on {ds}, standing in for {spec['dataset']})"}
    _DRAWN[kind.name](config, spec, prefix)


def epoch_curves(config: dict, spec: dict) -> dict[str, pd.DataFrame]:
    """Per model: (epoch, split, mean, std) of ``<split>_<metric>`` over its seeds' log.csv, for
    each of the spec's ``splits`` (default dev). Every point is of all its seeds, as a table's cell
    is (the title counts them): an epoch that some seeds' logs hold a value of and others not is
    refused naming those logs; one no seed scored (a cadence's epoch) is no point."""
    ds, metric, splits = spec["run_dataset"], spec.get("metric", "MAP"), spec.get("splits", ["dev"])
    columns = [f"{s}_{metric}" for s in splits]
    curves = {}
    for model in spec["models"]:
        logs = {f"{r.dir}/log.csv": run_log(r, columns) for r in runs(config, ds, Variant(model))}
        for column in columns:
            _refuse_partial_points(
                pd.concat({p: log.set_index("epoch")[column] for p, log in logs.items()}, axis=1), column
            )
        stats = pd.concat(logs.values()).groupby("epoch")[columns].agg(["mean", "std"]).fillna(0.0)  # 1 seed: no band
        curves[model] = pd.concat([stats[c].assign(split=s) for s, c in zip(splits, columns)]).reset_index()
    return curves


def _refuse_partial_points(values: pd.DataFrame, column: str) -> None:
    """LogFileError for the first epoch (row) of ``values`` (``column`` of each seed's log.csv, named by
    its path) that some seeds have a value of and others not."""
    held = values.notna()
    partial = held.any(axis=1) & ~held.all(axis=1)
    if partial.any():
        epoch = partial.idxmax()
        lacking = [str(p) for p in values.columns[~held.loc[epoch]]]
        raise LogFileError(
            f"{', '.join(lacking)}: no {column} at epoch {epoch}, which {int(held.loc[epoch].sum())} other "
            f"seed(s) have: a point of the figure is of every seed (its title counts them); a log cut short? "
            f"{rebuild_log(lacking[0])}"
        )


def reference_value(config: dict, spec: dict) -> float:
    """``reference_model``'s ``metric`` after training: its last epoch's ``reference_split``
    (default the last of ``splits``), mean over seeds."""
    ds, split = spec["run_dataset"], spec.get("reference_split", spec.get("splits", ["dev"])[-1])
    return float(
        np.mean(
            [
                last_epoch_metric(r, split, spec.get("metric", "MAP"))
                for r in runs(config, ds, Variant(spec["reference_model"]))
            ]
        )
    )


@draws("learning_curves")
def learning_curves(config: dict, spec: dict, prefix: Path) -> None:
    """``metric`` per epoch for each of ``splits`` (default dev; test needs the model's
    ``train.monitor_splits``), mean ± std over seeds: one axes with a line per (model, split), or
    with ``panels`` one panel per model; ``reference_model``: a red line at its value after
    training (``reference_value``), in every panel but its own (the paper's Figure 4)."""
    metric, splits, labels = spec.get("metric", "MAP"), spec.get("splits", ["dev"]), spec.get("labels", {})
    ds, panels, models = spec["run_dataset"], spec.get("panels", False), spec["models"]
    curves = epoch_curves(config, spec)
    ref = spec.get("reference_model")
    ref_value = reference_value(config, spec) if ref else None
    ref_split = spec.get("reference_split", splits[-1])
    fig, axes = plt.subplots(
        1, len(models) if panels else 1, figsize=(4 * len(models) if panels else 5, 3.5), sharey=True, squeeze=False
    )
    for i, model in enumerate(models):
        ax, name = axes[0][i if panels else 0], labels.get(model, model)
        for split, c in curves[model].groupby("split", sort=False):
            (line,) = ax.plot(
                c.epoch,
                c["mean"],
                marker="o",
                markersize=3,
                label=(split if panels else name if len(splits) == 1 else f"{name} {split}"),
            )
            ax.fill_between(c.epoch, c["mean"] - c["std"], c["mean"] + c["std"], color=line.get_color(), alpha=0.2)
        if panels:
            ax.set_title(name, fontsize=9)
        if ref and (model != ref if panels else i == 0):
            ax.axhline(ref_value, color="red", lw=1, label=f"{labels.get(ref, ref)} after training ({ref_split})")
    for ax in axes[0]:
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel(metric if len(splits) > 1 else f"{splits[0]} {metric}")
    title = spec.get("title", f"{ds}: {', '.join(splits)} {metric} per epoch ({seed_count(config, models)} seeds)")
    if panels:
        fig.suptitle(title, fontsize=10)
    else:
        axes[0][0].set_title(title)
    save(fig, prefix)


def percent_scale(published) -> float:
    """100 where a published value is printed as a percentage (> 1), else 1."""
    return 100.0 if any(v > 1.0 for v in published) else 1.0


PROTOCOL_NAMES = {"dev": "selected on dev", "last": "last epoch", "best_split": "best epoch on the split"}


def bar_values(config: dict, spec: dict) -> pd.DataFrame:
    """(model, label, mean, std, n, published) per model of an accuracy_bars spec: ``metric`` on
    ``split`` over seeds under ``protocol`` (``ansel.report.tables.run_value``), the published value
    from ``published_table`` by the model's label (NaN where none)."""
    ds, split, metric, protocol = (
        spec["run_dataset"],
        spec["split"],
        spec["metric"],
        spec.get("protocol", "dev"),
    )
    kind = kind_of(spec)
    assert isinstance(kind, AccuracyBars)  # bar_values is this kind's
    published = published_values(root() / PUBLISHED_RESULTS) if kind.published_keys(config, spec) else {}
    rows = []
    for model in kind.models(config, spec):
        label = spec.get("labels", {}).get(model, model)
        v = np.array([run_value(r, split, metric, protocol) for r in runs(config, ds, Variant(model))])
        rows.append(
            {
                "model": model,
                "label": label,
                "mean": v.mean(),
                "std": v.std(ddof=1) if len(v) > 1 else 0.0,
                "n": len(v),
                "published": published.get(kind.published_key(spec, model), math.nan),
            }
        )
    return pd.DataFrame(rows)


@draws("accuracy_bars")
def accuracy_bars(config: dict, spec: dict, prefix: Path) -> None:
    """A bar per model (``bar_values``: mean, ± std as an error bar), the published value as a
    marker beside it; a solid red line at ``reference_model``'s mean and a dashed green one at the
    best bar's, as the paper's Figure 3 draws them."""
    values = bar_values(config, spec)
    bars = values[values.model.isin(spec["models"])].reset_index(drop=True)
    scale = percent_scale(bars.published.dropna())
    x = np.arange(len(bars))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.7 * len(bars)) + 2, 4))
    ax.bar(
        x,
        bars["mean"] * scale,
        yerr=bars["std"] * scale,
        width=0.6,
        color="lightsteelblue",
        capsize=3,
        label=f"ours ({PROTOCOL_NAMES[spec.get('protocol', 'dev')]})",
    )
    shown = bars.published.notna()
    ax.plot(x[shown] + 0.38, bars.published[shown], "kD", markersize=4, label="published")
    if "reference_model" in spec:
        ref = values.set_index("model").loc[spec["reference_model"]]
        ax.axhline(ref["mean"] * scale, color="red", lw=1, label=f"{ref['label']} (ours)")
    best = bars.loc[bars["mean"].idxmax()]
    ax.axhline(best["mean"] * scale, color="green", lw=1, ls="--", label=f"best: {best['label']} (ours)")
    ax.set_xticks(x, bars.label, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(f"{spec['split']} {spec['metric']}{' (%)' if scale == 100.0 else ''}")
    low = np.nanmin(np.r_[bars["mean"] - bars["std"], bars.published.dropna() / scale]) * scale
    ax.set_ylim(max(0.0, low - 0.1 * scale), None)  # the paper's bars differ by a few points
    ds = spec["run_dataset"]
    ax.set_title(
        spec.get(
            "title", f"{ds} {spec['split']}: {spec['metric']} per model ({seed_count(config, spec['models'])} seeds)"
        ),
        fontsize=9,
    )
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    save(fig, prefix)


def length_curves(config: dict, spec: dict) -> dict[str, pd.DataFrame]:
    """Per model label: P@1 by answer length (ansel.report.by_length), mean and std over seeds,
    each seed's curve computed on its own run.trec at thresholds shared by every model and seed."""
    ds, split, step = spec["run_dataset"], spec["split"], spec.get("step", 10)
    data = Dataset.load(processed_dir(ds))
    qrels = split_labels(data, split, f"figure {spec['id']}")
    lengths = dict(zip(data.answers.aid, data.answers.tokens.map(len)))
    longest = int(question_lengths(qrels, lengths).max())
    thresholds = range(step, math.ceil(longest / step) * step + 1, step)
    curves = {}
    for model in spec["models"]:
        per_seed = pd.concat(
            [
                accuracy_by_length(split_run(Path(r.dir) / "run.trec", split), qrels, lengths, thresholds)
                for r in runs(config, ds, Variant(model))
            ]
        )
        curves[spec.get("labels", {}).get(model, model)] = (
            per_seed.groupby("max_length", as_index=False)
            .agg(questions=("questions", "first"), p_at_1=("p_at_1", "mean"), p_at_1_std=("p_at_1", "std"))
            .fillna({"p_at_1_std": 0.0})
        )
    return curves


@draws("accuracy_by_length")
def accuracy_by_length_figure(config: dict, spec: dict, prefix: Path) -> None:
    ds = spec["run_dataset"]
    plot_accuracy_by_length(
        length_curves(config, spec),
        prefix,
        spec.get("title", f"{ds} {spec['split']}: P@1 by answer length ({seed_count(config, spec['models'])} seeds)"),
    )


@draws("attention_maps")
def attention_maps_figure(config: dict, spec: dict, prefix: Path) -> None:
    """σq/σa heat map of one correctly answered question with a long answer (the spec's
    ``example``-th longest, answers of at least ``min_answer_tokens``), from one seed's model."""
    import torch

    from ansel.data.vocab import Vocab, run_vocab_file
    from ansel.models.io import load_model
    from ansel.models.registry import parse_hparams
    from ansel.report.attention_maps import long_correct_examples, plot_attention_map, window_to_tokens

    ds, split, seed = (
        spec["run_dataset"],
        spec["split"],
        spec_seed(config, spec.get("seed", 1), spec["id"], [spec["model"]]),
    )
    run, processed = Path(Run(ds, Variant(spec["model"]), seed).dir), Path(processed_dir(ds))
    data = Dataset.load(processed)
    lengths = dict(zip(data.answers.aid, data.answers.tokens.map(len)))
    example, min_tokens = spec.get("example", 1), spec.get("min_answer_tokens", 0)
    picked = long_correct_examples(
        split_run(run / "run.trec", split),
        split_labels(data, split, f"figure {spec['id']}"),
        lengths,
        min_tokens,
        n=example,
    )
    if len(picked) < example:
        # Explicit in the figure itself: the DAG stays whole on data without such answers (e.g. smoke).
        message = (
            f"{ds} {split}: only {len(picked)} question(s) answered correctly by {spec['model']} "
            f"(seed {seed}) with an answer of at least {min_tokens} tokens; example {example} does not exist"
        )
        print(f"figure {spec['id']}: {message}", file=sys.stderr)
        fig, ax = plt.subplots(figsize=(8, 1.5))
        ax.text(0.5, 0.5, message, ha="center", va="center", wrap=True, fontsize=9)
        ax.axis("off")
        save(fig, prefix)
        return
    qid, aid, n_answer = picked.iloc[example - 1][["qid", "aid", "answer_length"]]
    cfg = json.loads((run / "config.json").read_text())
    vocab = Vocab.load(run_vocab_file(cfg, processed))
    model = load_model(cfg, len(vocab), run / "model.pt")
    if not hasattr(getattr(model, "composition", None), "attention"):
        raise TypeError(f"figure {spec['id']}: arch {cfg['arch']!r} has no attention(q, a) to draw")
    q_tokens = list(data.questions.set_index("qid").tokens[qid])[: cfg["max_len_q"]]
    a_tokens = list(data.answers.set_index("aid").tokens[aid])[: cfg["max_len_a"]]
    sigma_q, sigma_a = model.attention(
        torch.from_numpy(vocab.encode_batch([q_tokens], len(q_tokens))),
        torch.from_numpy(vocab.encode_batch([a_tokens], len(a_tokens))),
    )
    kernel = getattr(parse_hparams(cfg["arch"], cfg["hparams"]), "kernel", 1)  # CNN: one weight per window
    plot_attention_map(
        q_tokens,
        a_tokens,
        window_to_tokens(np.asarray(sigma_q[0]), len(q_tokens), kernel),
        window_to_tokens(np.asarray(sigma_a[0]), len(a_tokens), kernel),
        prefix,
        spec.get("title", f"{spec['model']} seed {seed}: {ds} {split} question {qid} (answer {int(n_answer)} tokens)"),
    )


def sweep_curves(config: dict, spec: dict, scale: float = 1.0) -> pd.DataFrame:
    """(split, value, model, mean, std, n) per swept value, and value None for the reference model:
    ``metric`` over seeds, times ``scale``; targets.sweep_models derives the runs."""
    ds, metric = spec["run_dataset"], spec["metric"]
    points = sweep_models(config, spec) + [(None, Variant(spec["reference_model"]))]
    rows = []
    for split in spec["splits"]:
        for value, variant in points:
            v = pd.Series([run_metric(r, split, metric) for r in runs(config, ds, variant)]) * scale
            rows.append(
                {
                    "split": split,
                    "value": value,
                    "model": variant.name,
                    "mean": v.mean(),
                    "std": v.std(ddof=1) if len(v) > 1 else 0.0,
                    "n": len(v),
                }
            )
    return pd.DataFrame(rows)


@draws("sweep")
def sweep_figure(config: dict, spec: dict, prefix: Path) -> None:
    """``metric`` against one hyperparameter of ``base_model``, one line per split (mean over
    seeds, ± std band); the reference model as a solid horizontal line, its published value
    (``reference_published``: table and row label in published_results.csv) as a dashed one."""
    metric, x = spec["metric"], spec["x"]
    kind = kind_of(spec)
    assert isinstance(kind, Sweep)  # drawn under this kind's name
    values = published_values(root() / PUBLISHED_RESULTS) if kind.published_keys(config, spec) else {}
    published = {}  # split -> the reference's published value
    if "reference_published" in spec:
        published = {s: values[key] for s in spec["splits"] if (key := kind.reference_key(spec, s)) in values}
    curve = {}  # split -> the paper's value per x (published_curve)
    if "published_curve" in spec:
        curve = {
            split: pts
            for split in spec["splits"]
            if (
                pts := [
                    (v, values[key])
                    for v in sweep_values(config, spec)
                    if (key := kind.curve_key(spec, split, v)) in values
                ]
            )
        }
    scale = percent_scale([*published.values(), *(y for pts in curve.values() for _, y in pts)])
    curves = sweep_curves(config, spec, scale)
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for split, c in curves.groupby("split", sort=False):
        swept, ref = c[c.value.notna()], c[c.value.isna()].iloc[0]
        (line,) = ax.plot(swept.value, swept["mean"], marker="o", markersize=3, label=split)
        ax.fill_between(
            swept.value.astype(float),
            swept["mean"] - swept["std"],
            swept["mean"] + swept["std"],
            color=line.get_color(),
            alpha=0.2,
        )
        ref_label = spec.get("reference_published", {}).get("label", ref["model"])  # the paper's row name
        ax.axhline(ref["mean"], color=line.get_color(), lw=1, label=f"{split}: {ref_label} (ours)")
        if split in published:
            ax.axhline(
                published[split],
                color=line.get_color(),
                lw=1,
                ls="--",
                label=f"{split}: {spec['reference_published']['label']} (published)",
            )
        if split in curve:
            xs, ys = zip(*curve[split])
            ax.plot(
                xs, ys, color=line.get_color(), lw=1, ls="--", marker="x", markersize=4, label=f"{split}: published"
            )
    ax.set_xscale("log")  # the papers' grids are roughly geometric (group size 4 .. 200)
    values = sweep_values(config, spec)
    ax.set_xticks(list(values), [str(v) for v in values])
    ax.minorticks_off()
    ax.set_xlabel(x)
    ax.set_ylabel(f"{metric}{' (%)' if scale == 100.0 else ''}")
    ds = spec["run_dataset"]
    ax.set_title(
        spec.get(
            "title",
            f"{ds}: {spec.get('base_model', 'each model')} by {x} ({seed_count(config, kind_of(spec).models(config, spec))} seeds)",
        ),
        fontsize=9,
    )
    ax.legend(fontsize=7)
    save(fig, prefix)


def column_position(means: pd.DataFrame) -> pd.DataFrame:
    """Each mean's place between its column's lowest (0) and highest (1) mean; 0.5 where a column
    has one value (or all equal), NaN where a cell has none."""
    low, high = means.min(), means.max()
    span = (high - low).where(high > low)  # per column; NaN: nothing to spread
    return ((means - low) / span).fillna(0.5).where(means.notna())


@draws("heatmap")
def heatmap(config: dict, spec: dict, prefix: Path) -> None:
    """A metrics table (spec key ``table``) as a grid: rows x columns, each cell's mean over seeds
    printed in it. Colour = the cell's place within its column (``column_position``): columns are
    different datasets and metrics, whose ranges differ (MAP on 100-candidate pools vs 5; accuracy),
    so one scale over all of them would compare datasets, not models. n/a cells (no model of the
    row applies) and cells without runs are grey."""
    table = heatmap_table(config, spec)
    cells = aggregate(config, table, {})
    rows, columns = [r.label for r in table.rows], [c.label for c in table.columns]
    position = column_position(
        cells.pivot(index="row", columns="column", values="mean").reindex(index=rows, columns=columns)
    )
    cmap = plt.get_cmap("viridis").with_extremes(bad="lightgrey")
    fig, ax = plt.subplots(figsize=(1.3 * len(columns) + 3.5, 0.32 * len(rows) + 1.8))
    image = ax.imshow(np.ma.masked_invalid(position.to_numpy(dtype=float)), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for cell in cells.itertuples():
        where = position.loc[cell.row, cell.column]
        text = "n/a" if cell.na else "" if cell.n == 0 else f"{cell.mean:.3f}"
        ax.text(
            columns.index(cell.column),
            rows.index(cell.row),
            text,
            ha="center",
            va="center",
            fontsize=7,
            color="white" if where < 0.5 else "black",
        )  # NaN (grey) compares False: black
    heads = ours_headers(cells)  # a column whose dataset the preset replaced names its stand-in
    ax.set_xticks(range(len(columns)), [heads.get(c, c).replace(" ", "\n", 1) for c in columns], fontsize=7)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.xaxis.tick_top()
    bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    bar.set_label("place within the column (0 = its lowest mean, 1 = its highest)", fontsize=7)
    seeds = seed_count(config, [m for m in cells.model.unique() if m])
    ax.set_title(
        f"{spec.get('title', table.caption)}\nmean over {seeds} seeds, preset "
        f"{config.get('preset', 'full')}; colour: place within each column",
        fontsize=9,
    )
    save(fig, prefix)
