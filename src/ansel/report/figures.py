"""Paper figures by kind. Each kind is a function (config, spec, out_prefix) that writes png+pdf.

Kinds register with ``@figure_kind("name")``; the paper spec's ``kind`` picks one, and
``ansel.targets.figure_inputs`` lists the files each kind reads (the figure rule's inputs).
``spec["paper"]`` is the paper the figure belongs to (set by the CLI).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import matplotlib

matplotlib.use("Agg")  # cluster nodes and CI have no display
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ansel.config import dataset_name, papers_dir  # noqa: E402
from ansel.data.canonical import Dataset  # noqa: E402
from ansel.report.by_length import accuracy_by_length, plot_accuracy_by_length, question_lengths  # noqa: E402
from ansel.report.plotting import save  # noqa: E402
from ansel.report.tables import published_lookup, run_metric  # noqa: E402
from ansel.targets import (Run, Variant, figure_seed, processed_dir, runs, seed_count,  # noqa: E402
                           sweep_models, sweep_values)

FigureFn = Callable[[dict, dict, Path], None]
_KINDS: dict[str, FigureFn] = {}


def figure_kind(name: str):
    def wrap(fn: FigureFn) -> FigureFn:
        _KINDS[name] = fn
        return fn
    return wrap


def render_figure(config: dict, spec: dict, prefix: Path) -> None:
    if spec["kind"] not in _KINDS:
        raise KeyError(f"figure {spec['id']}: unknown kind {spec['kind']!r}; known: {', '.join(sorted(_KINDS))}")
    prefix.parent.mkdir(parents=True, exist_ok=True)
    _KINDS[spec["kind"]](config, spec, prefix)


@figure_kind("learning_curves")
def learning_curves(config: dict, spec: dict, prefix: Path) -> None:
    """Dev metric per epoch, mean ± std over seeds, one line per model."""
    metric = spec.get("metric", "MAP")
    ds = dataset_name(config, spec["dataset"])
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for model in spec["models"]:
        logs = pd.concat([pd.read_csv(Path(r.dir) / "log.csv") for r in runs(config, ds, Variant(model))])
        if logs.empty or f"dev_{metric}" not in logs:
            continue
        stats = logs.groupby("epoch")[f"dev_{metric}"].agg(["mean", "std"]).fillna(0.0)
        ax.plot(stats.index, stats["mean"], marker="o", label=spec.get("labels", {}).get(model, model))
        ax.fill_between(stats.index, stats["mean"] - stats["std"], stats["mean"] + stats["std"], alpha=0.2)
    if "reference" in spec:
        ax.axhline(spec["reference"]["value"], ls="--", color="grey", label=spec["reference"]["label"])
    ax.set_xlabel("epoch")
    ax.set_ylabel(f"dev {metric}")
    ax.set_title(spec.get("title", f"{ds}: dev {metric} per epoch ({seed_count(config, spec['models'])} seeds)"))
    ax.legend()
    save(fig, prefix)


def split_run(path: Path, split: str) -> pd.DataFrame:
    """(qid, aid, score) of one split of a run.trec, whose qids are written ``<split>:<qid>``."""
    from ansel.evaluation.metrics import read_trec_run  # lazy: ranx is slow to import

    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; the run must be trained first (snakemake {path})")
    run = read_trec_run(path)
    rows = run[run.qid.str.startswith(f"{split}:")]
    if rows.empty:
        found = sorted(run.qid.str.partition(":")[0].unique())
        raise KeyError(f"{path}: no rows of split {split!r}; it has {', '.join(found)}")
    return rows.assign(qid=rows.qid.str.slice(len(split) + 1))[["qid", "aid", "score"]]


def split_labels(data: Dataset, split: str, where: str) -> pd.DataFrame:
    if split not in data.splits:
        raise KeyError(f"{where}: dataset {data.name} has no split {split!r}; it has {', '.join(data.splits)}")
    return data.splits[split]


def length_curves(config: dict, spec: dict) -> dict[str, pd.DataFrame]:
    """Per model label: P@1 by answer length (ansel.report.by_length), mean and std over seeds,
    each seed's curve computed on its own run.trec at thresholds shared by every model and seed."""
    ds, split, step = dataset_name(config, spec["dataset"]), spec["split"], spec.get("step", 10)
    data = Dataset.load(processed_dir(ds))
    qrels = split_labels(data, split, f"figure {spec['id']}")
    lengths = dict(zip(data.answers.aid, data.answers.tokens.map(len)))
    longest = int(question_lengths(qrels, lengths).max())
    thresholds = range(step, math.ceil(longest / step) * step + 1, step)
    curves = {}
    for model in spec["models"]:
        per_seed = pd.concat([accuracy_by_length(split_run(Path(r.dir) / "run.trec", split), qrels, lengths, thresholds)
                              for r in runs(config, ds, Variant(model))])
        curves[spec.get("labels", {}).get(model, model)] = (
            per_seed.groupby("max_length", as_index=False)
            .agg(questions=("questions", "first"), p_at_1=("p_at_1", "mean"), p_at_1_std=("p_at_1", "std"))
            .fillna({"p_at_1_std": 0.0}))
    return curves


@figure_kind("accuracy_by_length")
def accuracy_by_length_figure(config: dict, spec: dict, prefix: Path) -> None:
    ds = dataset_name(config, spec["dataset"])
    plot_accuracy_by_length(length_curves(config, spec), prefix, spec.get(
        "title", f"{ds} {spec['split']}: P@1 by answer length ({seed_count(config, spec['models'])} seeds)"))


@figure_kind("attention_maps")
def attention_maps_figure(config: dict, spec: dict, prefix: Path) -> None:
    """σq/σa heat map of one correctly answered question with a long answer (the spec's
    ``example``-th longest, answers of at least ``min_answer_tokens``), from one seed's model."""
    import numpy as np
    import torch

    from ansel.data.vocab import Vocab
    from ansel.models.registry import parse_hparams
    from ansel.report.attention_maps import long_correct_examples, plot_attention_map, window_to_tokens
    from ansel.models.io import load_model

    ds, split, seed = dataset_name(config, spec["dataset"]), spec["split"], figure_seed(config, spec)
    run, processed = Path(Run(ds, Variant(spec["model"]), seed).dir), Path(processed_dir(ds))
    data = Dataset.load(processed)
    lengths = dict(zip(data.answers.aid, data.answers.tokens.map(len)))
    example, min_tokens = spec.get("example", 1), spec.get("min_answer_tokens", 0)
    picked = long_correct_examples(split_run(run / "run.trec", split), split_labels(data, split, f"figure {spec['id']}"),
                                   lengths, min_tokens, n=example)
    if len(picked) < example:
        # Explicit in the figure itself: the DAG stays whole on data without such answers (e.g. smoke).
        message = (f"{ds} {split}: only {len(picked)} question(s) answered correctly by {spec['model']} "
                   f"(seed {seed}) with an answer of at least {min_tokens} tokens; example {example} does not exist")
        print(f"figure {spec['id']}: {message}", file=sys.stderr)
        fig, ax = plt.subplots(figsize=(8, 1.5))
        ax.text(0.5, 0.5, message, ha="center", va="center", wrap=True, fontsize=9)
        ax.axis("off")
        save(fig, prefix)
        return
    qid, aid, n_answer = picked.iloc[example - 1][["qid", "aid", "answer_length"]]
    cfg = json.loads((run / "config.json").read_text())
    vocab = Vocab.load(processed / "vocab.json")
    model = load_model(cfg, len(vocab), run / "model.pt")
    if not hasattr(getattr(model, "composition", None), "attention"):
        raise TypeError(f"figure {spec['id']}: arch {cfg['arch']!r} has no attention(q, a) to draw")
    q_tokens = list(data.questions.set_index("qid").tokens[qid])[: cfg["max_len_q"]]
    a_tokens = list(data.answers.set_index("aid").tokens[aid])[: cfg["max_len_a"]]
    sigma_q, sigma_a = model.attention(torch.from_numpy(vocab.encode_batch([q_tokens], len(q_tokens))),
                                       torch.from_numpy(vocab.encode_batch([a_tokens], len(a_tokens))))
    kernel = getattr(parse_hparams(cfg["arch"], cfg["hparams"]), "kernel", 1)  # CNN: one weight per window
    plot_attention_map(q_tokens, a_tokens,
                       window_to_tokens(np.asarray(sigma_q[0]), len(q_tokens), kernel),
                       window_to_tokens(np.asarray(sigma_a[0]), len(a_tokens), kernel), prefix,
                       spec.get("title", f"{spec['model']} seed {seed}: {ds} {split} question {qid} "
                                         f"(answer {int(n_answer)} tokens)"))


def sweep_curves(config: dict, spec: dict, scale: float = 1.0) -> pd.DataFrame:
    """(split, value, model, mean, std, n) per swept value, and value None for the reference model:
    ``metric`` over seeds, times ``scale``; targets.sweep_models derives the runs."""
    ds, metric = dataset_name(config, spec["dataset"]), spec["metric"]
    points = sweep_models(config, spec) + [(None, Variant(spec["reference_model"]))]
    rows = []
    for split in spec["splits"]:
        for value, variant in points:
            v = pd.Series([run_metric(r, split, metric) for r in runs(config, ds, variant)]) * scale
            rows.append({"split": split, "value": value, "model": variant.name, "mean": v.mean(),
                         "std": v.std(ddof=1) if len(v) > 1 else 0.0, "n": len(v)})
    return pd.DataFrame(rows)


@figure_kind("sweep")
def sweep_figure(config: dict, spec: dict, prefix: Path) -> None:
    """``metric`` against one hyperparameter of ``base_model``, one line per split (mean over
    seeds, ± std band); the reference model as a solid horizontal line, its published value
    (``reference_published``: table and row label in published_results.csv) as a dashed one."""
    metric, x = spec["metric"], spec["x"]
    published = {}
    if "reference_published" in spec:
        ref = spec["reference_published"]
        lookup = published_lookup(papers_dir() / "published_results.csv", spec["paper"], ref["table"])
        published = {split: lookup[key] for split in spec["splits"]
                     if (key := (spec["dataset"], split, ref["label"], metric)) in lookup}
    scale = 100.0 if any(v > 1.0 for v in published.values()) else 1.0  # the papers print percentages
    curves = sweep_curves(config, spec, scale)
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for split, c in curves.groupby("split", sort=False):
        swept, ref = c[c.value.notna()], c[c.value.isna()].iloc[0]
        line, = ax.plot(swept.value, swept["mean"], marker="o", markersize=3, label=split)
        ax.fill_between(swept.value.astype(float), swept["mean"] - swept["std"], swept["mean"] + swept["std"],
                        color=line.get_color(), alpha=0.2)
        ax.axhline(ref["mean"], color=line.get_color(), lw=1, label=f"{split}: {ref['model']} (ours)")
        if split in published:
            ax.axhline(published[split], color=line.get_color(), lw=1, ls="--",
                       label=f"{split}: {spec['reference_published']['label']} (published)")
    ax.set_xscale("log")  # the papers' grids are roughly geometric (group size 4 .. 200)
    values = sweep_values(config, spec)
    ax.set_xticks(list(values), [str(v) for v in values])
    ax.minorticks_off()
    ax.set_xlabel(x)
    ax.set_ylabel(f"{metric}{' (%)' if scale == 100.0 else ''}")
    ds = dataset_name(config, spec["dataset"])
    ax.set_title(spec.get("title", f"{ds}: {spec['base_model']} by {x} ({seed_count(config, [spec['base_model'], spec['reference_model']])} seeds)"), fontsize=9)
    ax.legend(fontsize=7)
    save(fig, prefix)
