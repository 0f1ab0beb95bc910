"""Paper figures by kind. Each kind is a function (config, spec, out_prefix) that writes png+pdf.

Kinds register with ``@figure_kind("name")``; the paper spec's ``kind`` picks one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import matplotlib

matplotlib.use("Agg")  # cluster nodes and CI have no display
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ansel.config import dataset_name  # noqa: E402
from ansel.targets import run_dir, seeds  # noqa: E402

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


def save(fig, prefix: Path) -> None:
    fig.tight_layout()
    for ext in ("png", "pdf"):
        fig.savefig(prefix.with_suffix(f".{ext}"), dpi=150, metadata={"CreationDate": None} if ext == "pdf" else None)
    plt.close(fig)


@figure_kind("learning_curves")
def learning_curves(config: dict, spec: dict, prefix: Path) -> None:
    """Dev metric per epoch, mean ± std over seeds, one line per model."""
    metric = spec.get("metric", "MAP")
    ds = dataset_name(config, spec["dataset"])
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for model in spec["models"]:
        logs = pd.concat([pd.read_csv(Path(run_dir(ds, model, s)) / "log.csv") for s in seeds(config)])
        if logs.empty or f"dev_{metric}" not in logs:
            continue
        stats = logs.groupby("epoch")[f"dev_{metric}"].agg(["mean", "std"]).fillna(0.0)
        ax.plot(stats.index, stats["mean"], marker="o", label=spec.get("labels", {}).get(model, model))
        ax.fill_between(stats.index, stats["mean"] - stats["std"], stats["mean"] + stats["std"], alpha=0.2)
    if "reference" in spec:
        ax.axhline(spec["reference"]["value"], ls="--", color="grey", label=spec["reference"]["label"])
    ax.set_xlabel("epoch")
    ax.set_ylabel(f"dev {metric}")
    ax.set_title(spec.get("title", f"{ds}: dev {metric} per epoch ({len(seeds(config))} seeds)"))
    ax.legend()
    save(fig, prefix)
