"""The one config: params.yaml (+ the preset it names), and what a single run needs from it.

Snakemake loads params.yaml as its configfile and validates it; the Snakefile and the CLI
both call ``apply_preset`` and ``run_config`` so a run sees exactly the same resolved values
whether launched by Snakemake, by DVC or by hand.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
PRESETS_DIR = ROOT / "presets"
PAPERS_DIR = ROOT / "workflow" / "papers"


class ConfigError(ValueError):
    pass


def deep_merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def apply_preset(config: dict, overrides: dict | None = None, presets_dir: Path = PRESETS_DIR) -> dict:
    """Merge ``presets/<preset>.yaml`` over the config, then the command line's ``overrides``
    over both (``--config seeds=1`` must win over the preset's ``seeds``); ``preset: full``
    means the papers' settings."""
    name = config.get("preset", "full")
    if name == "full":
        return deep_merge(config, overrides or {})
    path = presets_dir / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in presets_dir.glob("*.yaml"))
        raise ConfigError(f"preset {name!r}: no file {path}; known presets: full, {', '.join(known)}")
    return deep_merge(deep_merge(config, yaml.safe_load(path.read_text()) or {}), overrides or {})


def load(params_path: str | Path = ROOT / "params.yaml", **overrides: Any) -> dict:
    """params.yaml + overrides (like ``snakemake --config``) + preset, for use outside Snakemake."""
    config = yaml.safe_load(Path(params_path).read_text())
    return apply_preset(deep_merge(config, overrides), overrides)


def dataset_name(config: dict, dataset: str) -> str:
    """The dataset a paper's dataset name resolves to under the preset's aliases."""
    name = config.get("dataset_alias", {}).get(dataset, dataset)
    if name not in config["datasets"]:
        raise ConfigError(f"datasets.{name}: not configured (needed by a paper table)")
    return name


# Training settings a derived model may set: `<model>@lr=5e-05` is one point of its `train.lr_grid`.
TRAIN_SWEEPS = ("lr",)


def model_config(config: dict, model: str) -> dict:
    """A model's resolved config; ``<model>@<key>=<value>`` derives one with that hyperparameter
    (a figure's sweep, ``ggsa@group_size=20``) or training setting (a point of its lr grid,
    ``ggsa@lr=5e-05``) changed, the value written as JSON.

    ``train`` is resolved too: params.yaml's ``train`` <- the model's <- the preset's
    ``scale.train`` (its ``lr_grid`` only where the model has a grid) <- the derived value.
    """
    base, derived, override = model.partition("@")
    if base not in config["models"]:
        raise ConfigError(f"models.{base}: not configured (named by a paper spec)")
    m = copy.deepcopy(config["models"][base])
    # A preset's `scale` shrinks every model the same way; hparams only where the arch has them.
    scale = config.get("scale", {})
    from ansel.models.registry import parse_hparams  # torch-free (ansel.models.hparams)

    known = set(parse_hparams(m["arch"], {}, f"models.{model}").__dataclass_fields__)
    m["hparams"] = {**m.get("hparams", {}), **{k: v for k, v in scale.get("hparams", {}).items() if k in known}}
    train = deep_merge(config.get("train", {}), m.get("train", {}))
    scale_train = {k: v for k, v in scale.get("train", {}).items() if k != "lr_grid" or "lr_grid" in train}
    m["train"] = deep_merge(train, scale_train)
    if derived:  # after `scale`: the swept value is the point of the derived run
        key, value = _override(model, override, known)
        (m["hparams"] if key in known else m["train"])[key] = value
    parse_hparams(m["arch"], m["hparams"], f"models.{model}.hparams")
    return m


def _override(model: str, override: str, known: set[str]) -> tuple[str, Any]:
    key, sep, raw = override.partition("=")
    if not sep or key not in known | set(TRAIN_SWEEPS):
        raise ConfigError(f"model {model!r}: expected <model>@<key>=<value> with a hyperparameter of "
                          f"its arch ({', '.join(sorted(known))}) or a training setting ({', '.join(TRAIN_SWEEPS)})")
    try:
        return key, json.loads(raw)
    except json.JSONDecodeError:
        raise ConfigError(f"model {model!r}: value {raw!r} of {key} is not a JSON number or boolean") from None


def run_config(config: dict, dataset: str, model: str, seed: int) -> dict:
    """Everything one (dataset, model, seed) run depends on: also its identity for reruns and resume.
    A run trains at one lr: the grid it belongs to is the tables' business, not part of its identity."""
    m = model_config(config, model)
    ds = config["datasets"][dataset]
    train = {k: v for k, v in m["train"].items() if k != "lr_grid"}
    return {
        "dataset": dataset, "model": model, "seed": int(seed),
        "arch": m["arch"], "hparams": m["hparams"], "embeddings": m.get("embeddings"),
        "max_len_q": ds["max_len_q"], "max_len_a": ds["max_len_a"],
        "eval": ds.get("eval", {}), "train": train,
    }


def fingerprint(cfg: dict) -> str:
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


def load_paper(paper: str, papers_dir: Path = PAPERS_DIR) -> dict:
    path = papers_dir / f"{paper}.yaml"
    if not path.exists():
        raise ConfigError(f"papers.{paper}: no spec {path}")
    return copy.deepcopy(_parse_spec(path, path.stat().st_mtime_ns))


@functools.lru_cache(maxsize=None)
def _parse_spec(path: Path, mtime_ns: int) -> dict:
    # Building the DAG asks for each spec ~200 times; parsing once makes every Snakemake start
    # (two per SLURM job) several seconds shorter.
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
