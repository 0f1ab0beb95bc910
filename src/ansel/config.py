"""The one config: params.yaml (+ the preset it names), and what a single run needs from it.

Snakemake loads params.yaml as its configfile and validates it; the Snakefile and the CLI
both call ``apply_preset`` and ``run_config`` so a run sees exactly the same resolved values
whether launched by Snakemake, by DVC or by hand. ``validate`` checks every setting that the
config alone decides (typed hyperparameters, training and evaluation settings, splits) while
Snakemake builds the DAG, naming the key path.

The project root is the working checkout (``root``), not wherever the package was installed:
presets, paper specs and schemas are read from the checkout the command runs in.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import functools
import json
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ansel.embeddings import WORD2VEC_KEYS
from ansel.evaluation.config import EvalConfig
from ansel.schema import check_schema
from ansel.settings import ConfigError, fits, parse, type_name
from ansel.training.config import TrainConfig
from ansel.typos import typo_of
from ansel.yamlfile import read_yaml

__all__ = ["ConfigError", "apply_preset", "load", "model_config", "run_config", "validate", "root"]


def root(start: Path | None = None) -> Path:
    """The working checkout: ``ANSEL_ROOT``, else the nearest directory from ``start`` (the working
    directory) up that holds params.yaml and workflow/papers/ (Snakemake runs in the Snakefile's
    directory)."""
    if os.environ.get("ANSEL_ROOT"):
        return Path(os.environ["ANSEL_ROOT"]).resolve()
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "params.yaml").is_file() and (d / "workflow" / "papers").is_dir():
            return d
    raise ConfigError(
        f"{here}: not inside an ansel checkout (no params.yaml and workflow/papers/ here or "
        "above); run from the repository or set ANSEL_ROOT"
    )


def presets_dir() -> Path:
    return root() / "presets"


def preset_names(presets: Path | None = None) -> list[str]:
    """``full`` (params.yaml's own settings, the papers') and each ``presets/<name>.yaml``."""
    return ["full", *sorted(p.stem for p in (presets or presets_dir()).glob("*.yaml"))]


def preset_file(name: str) -> Path | None:
    """The file of preset ``name``; None for ``full`` (params.yaml's own settings)."""
    return None if name == "full" else presets_dir() / f"{name}.yaml"


def papers_dir() -> Path:
    return root() / "workflow" / "papers"


def deep_merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def apply_preset(config: dict, overrides: dict | None = None, presets: Path | None = None) -> dict:
    """Merge ``presets/<preset>.yaml`` over the config, then the command line's ``overrides``
    over both (``--config seeds=1`` must win over the preset's ``seeds``); ``preset: full``
    means the papers' settings."""
    name = config.get("preset", "full")
    if name == "full":
        return deep_merge(config, overrides or {})
    presets = presets or presets_dir()
    path = presets / f"{name}.yaml"
    if not path.exists():
        raise ConfigError(f"preset {name!r}: no file {path}; known presets: {', '.join(preset_names(presets))}")
    merged = deep_merge(deep_merge(config, read_yaml(path) or {}), overrides or {})
    _check_not_masked(merged.get("scale", {}), overrides or {}, name)
    return merged


def _check_not_masked(scale: dict, overrides: dict, preset: str) -> None:
    """A preset's ``scale`` wins over every model's own settings (``model_config``): refuse an override
    it would silently mask, saying what to set instead."""
    blocks = [("train", overrides.get("train", {}))]
    for model, block in (overrides.get("models") or {}).items():
        if isinstance(block, dict):
            blocks += [(f"models.{model}.{part}", block.get(part) or {}) for part in ("train", "hparams")]
    for where, values in blocks:
        part = where.rsplit(".", 1)[-1]
        masked = [k for k in values if k in scale.get(part, {})] if isinstance(values, dict) else []
        if masked:
            k = masked[0]
            raise ConfigError(
                f"{where}.{k}: the preset {preset!r} sets every model's {k} "
                f"(scale.{part}.{k}: {scale[part][k]!r}), which wins over this value; "
                f"set scale={{{part}: {{{k}: ...}}}} to change it for every model, or use preset=full"
            )


def typed_overrides(overrides: dict) -> dict:
    """``snakemake --config`` values with their nested scalars typed as the top-level ones are.

    Snakemake reads ``seeds=1`` as an int but ``models={qa_lstm: {train: {epochs: 7}}}`` with
    every nested scalar a string ('7'); here each nested string is read as Snakemake reads a
    top-level value: int, else float, else true/false, else null/~, else the string itself.
    """

    def scalar(text: str) -> Any:
        for number in (int, float):
            try:
                return number(text)
            except ValueError:
                pass
        return {"true": True, "false": False, "null": None, "~": None}.get(text.lower(), text)

    def typed(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: typed(v) for k, v in value.items()}
        if isinstance(value, list):
            return [typed(v) for v in value]
        return scalar(value) if isinstance(value, str) else value

    return {k: typed(v) if isinstance(v, (dict, list)) else v for k, v in (overrides or {}).items()}


def config_origin(
    configfiles: Sequence[Path], config_args: Mapping, base: str, preset: Path | None = None
) -> Callable[..., str]:
    """Where the value at a key path came from, as Snakemake and ``apply_preset`` apply its sources:
    ``--config`` last, then the ``--configfile`` files (a later one wins), then the ``preset`` file
    (presets/<name>.yaml, where one is applied), else ``base`` (params.yaml): a refused value is named
    by the source that gave it. Given several paths (a resolved setting and those it resolves from),
    the first source that sets any of them."""

    def shown(f: Path) -> str:
        rel = os.path.relpath(f)
        return str(f) if rel.startswith("..") else rel

    sources = [("--config", config_args)] + [
        (f"--configfile {shown(f)}", read_yaml(Path(f))) for f in reversed(configfiles)
    ]
    if preset is not None:
        sources.append((shown(preset), read_yaml(preset) or {}))

    def sets(values: Any, path: tuple) -> bool:
        for key in path:
            if isinstance(values, Mapping) and key in values:
                values = values[key]
            elif isinstance(values, list) and isinstance(key, int) and key < len(values):
                values = values[key]
            else:
                return False
        return True

    return lambda *paths: next(
        (label for label, values in sources for path in paths if path and sets(values, path)), base
    )


def refused_paths(message: str) -> list[tuple]:
    """The key paths a ConfigError's message (``models.qa_cnn.train.lr: ...``) refuses a value at: its
    own, where a model's setting came from (``(from scale.hparams.filters)``), the ``train`` and
    ``scale.train`` keys a model's training setting inherits or takes (a preset's scale wins over the
    model's own), and the read and fetch options a dataset's splits follow from."""
    own = re.match(r"[^\s:(]+", message)
    named = [own.group()] if own else []
    named += re.findall(r"^\S+ \(from ([^)\s]+)\)", message)
    paths = [tuple(int(k[1:-1]) if k.startswith("[") else k for k in re.findall(r"\[\d+\]|[^.\[]+", p)) for p in named]
    if paths and paths[0][:1] == ("models",) and paths[0][2:3] == ("train",):
        paths += [paths[0][2:], ("scale", *paths[0][2:])]
    if paths and paths[0][:1] == ("datasets",) and paths[0][2:] == ("splits",):
        paths += [(*paths[0][:2], "read"), (*paths[0][:2], "fetch")]
    return paths


def params_schema() -> Path:
    return root() / "workflow" / "schemas" / "params.schema.yaml"


def load(params_path: str | Path | None = None, **overrides: Any) -> dict:
    """params.yaml (the checkout's by default) + overrides (like ``snakemake --config``) + preset,
    for use outside Snakemake."""
    config = read_yaml(Path(params_path or root() / "params.yaml"))
    return apply_preset(deep_merge(config, overrides), overrides)


def export_data_settings(config: dict) -> None:
    """``data.mirror``, ``data.upstream_rewrite`` and ``data.download_timeout_s`` reach the download
    jobs through the environment, not their params: where files come from must not rerun the DAG
    (they are verified by checksum either way)."""
    data = config.get("data", {})
    if data.get("mirror"):
        os.environ["ANSEL_DATA_MIRROR"] = os.path.abspath(data["mirror"])
    if data.get("upstream_rewrite"):
        os.environ["ANSEL_UPSTREAM_REWRITE"] = json.dumps(data["upstream_rewrite"])
    if data.get("download_timeout_s"):
        os.environ["ANSEL_DOWNLOAD_TIMEOUT_S"] = str(data["download_timeout_s"])


# What preprocessing reads of a dataset block (ansel preprocess): its rule's params, so that an
# edit of the rest (`eval`, truncation lengths, word2vec) reruns no preprocessing.
PREPROCESS_KEYS = ("source", "read", "splits", "vocab")


def preprocess_config(dataset: dict) -> dict:
    return {k: dataset[k] for k in PREPROCESS_KEYS if k in dataset}


def configured(what: str, name: str, known: Sequence[str], config: dict) -> None:
    """Refuse a ``what`` (dataset, source) the preset does not configure -- a misspelt target --
    naming the nearest and every known name, while Snakemake builds the DAG."""
    if name not in known:
        raise ConfigError(
            f"{what} {name!r} is not configured under the preset {config['preset']!r}{typo_of(name, known)}; "
            f"known: {', '.join(known)}"
        )


def dataset_config(config: dict, dataset: str) -> dict:
    """A dataset's block of the (resolved) config; an unknown name refused (``configured``)."""
    configured("dataset", dataset, list(config["datasets"]), config)
    return config["datasets"][dataset]


def preset_sources(config: dict) -> list[str]:
    """The sources the download rule fetches for the preset: its datasets' and its vectors'."""
    vectors = [e["source"] for e in config.get("embeddings", {}).get("pretrained", {}).values() if isinstance(e, dict)]
    return list(dict.fromkeys([d["source"] for d in config["datasets"].values()] + vectors))


def dataset_name(config: dict, dataset: str) -> str:
    """The dataset a paper's dataset name resolves to under the preset's aliases."""
    name = config.get("dataset_alias", {}).get(dataset, dataset)
    if name not in config["datasets"]:
        raise ConfigError(f"datasets.{name}: not configured (needed by a paper table)")
    return name


# What a word2vec recipe (params.yaml embeddings.word2vec) trains on and with; the rest of a recipe
# (all_but_the_top, keep_vector_words) only changes how the trained vectors are used.
RECIPE_TRAINING_KEYS = ("corpus", *WORD2VEC_KEYS)


def word2vec_recipe(config: dict, name: str) -> dict:
    recipes = config.get("embeddings", {}).get("word2vec", {})
    if name not in recipes:
        raise ConfigError(f"embeddings.word2vec.{name}: not configured")
    return recipes[name]


def trained_recipe(config: dict, name: str) -> str:
    """The recipe whose corpus vectors ``name`` uses: the first in params order that trains alike
    (recipes differing only in how they use the vectors share one training)."""

    def training(r: str) -> dict:
        recipe = word2vec_recipe(config, r)
        return {k: recipe[k] for k in RECIPE_TRAINING_KEYS if k in recipe}

    return next(r for r in config["embeddings"]["word2vec"] if training(r) == training(name))


# Training settings a sweep point may set: a point of a model's `train.lr_grid` is ("lr", 5e-05).
TRAIN_SWEEPS = ("lr",)


def variant_name(model: str, point: tuple[str, Any] | None = None) -> str:
    """How a model config with one value changed is named on disk: ``<model>@<key>=<JSON value>``."""
    return model if point is None else f"{model}@{point[0]}={json.dumps(point[1])}"


def model_config(config: dict, model: str, point: tuple[str, Any] | None = None) -> dict:
    """A model's resolved config; ``point`` = (key, value) changes one hyperparameter (a figure's
    sweep, ("group_size", 20)) or training setting (a point of its lr grid, ("lr", 5e-05)).

    ``train`` is resolved too: params.yaml's ``train`` <- the model's <- the preset's
    ``scale.train`` (its ``lr_grid`` keeps those of the model's grid points it lists, or else the
    model's own lr; no grid where the model has none; its ``monitor_every`` only where the model
    sets one, as an evaluation cadence to shrink) <- the point's value.
    Hyperparameters are checked (types and ranges), naming the key; the training settings by
    ``run_config`` and ``validate``, once resolved.
    """
    if model not in config["models"]:
        raise ConfigError(f"models.{model}: not configured (named by a paper spec)")
    where = f"models.{variant_name(model, point)}"
    m = copy.deepcopy(config["models"][model])
    # A preset's `scale` shrinks every model the same way; hparams only where the arch has them.
    scale = config.get("scale", {})
    from ansel.models.registry import hparams_fields, parse_hparams  # torch-free

    known = hparams_fields(m["arch"], f"{where}.arch")
    from_scale = {k: v for k, v in scale.get("hparams", {}).items() if k in known}
    m["hparams"] = {**m.get("hparams", {}), **from_scale}
    train = deep_merge(config.get("train", {}), m.get("train", {}))
    scale_train = {
        k: v
        for k, v in scale.get("train", {}).items()
        if k != "lr_grid" and (k != "monitor_every" or train.get("monitor_every"))
    }
    m["train"] = deep_merge(train, scale_train)
    if "lr_grid" in train and "lr_grid" in scale.get("train", {}):
        # a preset cuts a grid to its points on the model's grid (GGSA's 1e-4), else to the model's own lr
        kept = [lr for lr in train["lr_grid"] if lr in scale["train"]["lr_grid"]]
        m["train"]["lr_grid"] = kept or [m["train"]["lr"]]
    if point is not None:  # after `scale`: the swept value is the point of the derived run
        key, value = point
        if key not in known | set(TRAIN_SWEEPS):
            raise ConfigError(
                f"{where}: {key} is neither a hyperparameter of {m['arch']!r} "
                f"({', '.join(sorted(known))}) nor a training setting ({', '.join(TRAIN_SWEEPS)})"
            )
        (m["hparams"] if key in known else m["train"])[key] = value
        from_scale.pop(key, None)
    try:
        parse_hparams(m["arch"], m["hparams"], f"{where}.hparams")
    except ConfigError as e:  # a refused value the scale gave is named by its key there too
        key, _, rest = str(e).removeprefix(f"{where}.hparams.").partition(":")
        if key in from_scale:
            raise type(e)(f"{where}.hparams.{key} (from scale.hparams.{key}):{rest}") from None
        raise
    if m.get("embeddings") in config.get("embeddings_alias", {}):  # the preset's stand-in for them
        m["embeddings"] = config["embeddings_alias"][m["embeddings"]]
    return m


def split_settings(arch: str, t: TrainConfig) -> list[tuple[str, list[str]]]:
    """The training settings naming splits the data must have: ``dev_split`` only where the arch trains
    (random and the lexical rankers score no epoch, so they run on a dataset without dev, legalqa_siat)."""
    from ansel.models.registry import is_trained  # torch-free

    return [*([("dev_split", [t.dev_split])] if is_trained(arch) else []), ("monitor_splits", t.monitor_splits)]


def run_config(config: dict, dataset: str, model: str, seed: int, point: tuple[str, Any] | None = None) -> dict:
    """Everything one (dataset, model, seed, point) run depends on: also its identity for reruns and
    resume. A run trains at one lr: the grid it belongs to is the tables' business, not part of it."""
    m = model_config(config, model, point)
    ds = dataset_config(config, dataset)
    train = {k: v for k, v in m["train"].items() if k != "lr_grid"}
    where = f"models.{variant_name(model, point)}.train"
    t = parse(TrainConfig, train, where)
    for key, splits in split_settings(m["arch"], t):
        if "splits" in ds and (unknown := [s for s in splits if s not in ds["splits"]]):
            raise ConfigError(
                f"{where}.{key}: {', '.join(map(repr, unknown))} not a split of datasets.{dataset} "
                f"({', '.join(ds['splits'])})"
            )
    from ansel.models.registry import classifies_categories  # torch-free

    if classifies_categories(m["arch"]) and not _has_categories(ds):  # else every such training fails
        having = [name for name, d in config["datasets"].items() if _has_categories(d)]
        # an alias that put the run on this dataset is the setting to name (and its source, the one to blame)
        aliases = [f"dataset_alias.{k}" for k, v in config.get("dataset_alias", {}).items() if v == dataset]
        raise ConfigError(
            f"models.{variant_name(model, point)}.arch{f' (from {aliases[0]})' if aliases else ''}: "
            f"{m['arch']!r} also classifies each question's category; "
            f"the questions of datasets.{dataset} (source {ds.get('source')!r}) carry none: "
            f"datasets that have them: {', '.join(having)}"
        )
    if (t.category_weight or t.loss == "category") and not classifies_categories(m["arch"]):
        key = "category_weight" if t.category_weight else "loss"
        raise ConfigError(
            f"{where}.{key}: trains a question-category classifier; arch {m['arch']!r} has none "
            "(an arch registered with categories=True has, e.g. mtas)"
        )
    task = ds.get("eval", {}).get("task", "ranking")
    if task == "classification" and t.loss != "classification":  # a ranking dataset may train on every labelled pair
        raise ConfigError(
            f"{where}.loss: {t.loss!r} does not fit datasets.{dataset}.eval.task {task!r} "
            "(a classification dataset trains with loss classification)"
        )
    run = {
        "dataset": dataset,
        "model": variant_name(model, point),
        "seed": int(seed),
        "arch": m["arch"],
        "hparams": m["hparams"],
        "embeddings": m.get("embeddings"),
        "max_len_q": ds["max_len_q"],
        "max_len_a": ds["max_len_a"],
        "eval": ds.get("eval", {}),
        "train": train,
    }
    if m.get("embeddings") in config.get("embeddings", {}).get("word2vec", {}):
        # corpus vectors come with the vocabulary they are aligned to (it may keep their words)
        run["vocab"] = embeddings_path(dataset, m["embeddings"], m["hparams"]["embedding_dim"], ".vocab.json")
    return run


def pretrained_file(config: dict, name: str) -> tuple[str, str]:
    """(the file the vectors ``name`` of ``embeddings.pretrained`` are read from, the input that
    makes it: its source's download manifest, or the file itself when the entry is a path)."""
    entry = config.get("embeddings", {}).get("pretrained", {}).get(name)
    if entry is None:
        raise ConfigError(f"embeddings.pretrained.{name}: not configured (named by a model's `embeddings`)")
    if isinstance(entry, str):
        return entry, entry
    return f"data/raw/{entry['source']}/{entry['file']}", f"data/raw/{entry['source']}/manifest.json"


def embeddings_path(dataset: str, method: str, dim: int, suffix: str = ".npy") -> str:
    """Where the embeddings rules write a dataset's vectors (and, for corpus vectors, their vocabulary)."""
    return f"data/embeddings/{dataset}/{method}-{dim}{suffix}"


def embeddings_file(cfg: dict) -> str | None:
    """The word vectors a run config starts from (the embeddings rule's output), or None: random."""
    if not cfg["embeddings"]:
        return None
    return embeddings_path(cfg["dataset"], cfg["embeddings"], cfg["hparams"]["embedding_dim"])


RUN_KEYS = ("dataset", "model", "seed", "arch", "hparams", "embeddings", "max_len_q", "max_len_a", "eval", "train")
RUN_NAMES = ("dataset", "model", "seed")
# each key's type in a run config (``run_config``'s keys; ``vocab`` only for corpus vectors); its
# ``hparams``, ``eval`` and ``train`` blocks are parsed by the code that reads them
RUN_TYPES: dict[str, Any] = {
    "dataset": str,
    "model": str,
    "seed": int,
    "arch": str,
    "hparams": dict,
    "embeddings": str | None,
    "max_len_q": int,
    "max_len_a": int,
    "eval": dict,
    "train": dict,
    "vocab": str,
}


def check_run(cfg: dict, where: str) -> None:
    """Refuse a run config's unknown keys, and values of the wrong type or range (a hand-edited
    config.json, a whole ``--config``), naming the key: before a job trains or scores on them."""
    for key, value in cfg.items():
        if key not in RUN_TYPES:
            raise ConfigError(f"{where}: {key}: unknown key of a run config; known: {', '.join(RUN_TYPES)}")
        if not fits(value, RUN_TYPES[key]):
            raise ConfigError(f"{where}: {key}: {value!r} is not of type {type_name(RUN_TYPES[key])}")
    if not 0 <= cfg.get("seed", 0) < 2**32:
        raise ConfigError(f"{where}: seed: {cfg['seed']} is not in 0 .. 2**32 - 1 (numpy's seeds)")
    for key in ("max_len_q", "max_len_a"):
        if cfg.get(key, 1) < 1:
            raise ConfigError(f"{where}: {key}: {cfg[key]} is not >= 1")


def require_dataset_folder(processed: Path, dataset: str, where: str, verb: str) -> None:
    """In the pipeline's layout (data/processed/<dataset>) a run reads its own dataset's folder only:
    another's tables would train or score it on other data, or not fit its weights."""
    if (processed.parent.parent.name, processed.parent.name) == ("data", "processed") and processed.name != dataset:
        raise ConfigError(
            f"{where}: a run of dataset {dataset!r}, but {processed} holds {processed.name!r}: "
            f"{verb} it with {processed.parent / dataset}"
        )


def resolve_run(spec: dict, where: str) -> dict:
    """A run config from ``spec``: a whole one (what Snakemake passes; a run's config.json) as is
    once checked (``check_run``), or {dataset, model, seed[, preset]} resolved through the checkout's params.yaml and preset."""
    if not isinstance(spec, dict):
        raise ConfigError(f"{where}: expected a JSON object, got {spec!r}")
    if set(spec) >= set(RUN_KEYS):
        check_run(spec, where)
        return spec
    if set(spec) <= {*RUN_NAMES, "preset"}:
        if missing := [k for k in RUN_NAMES if k not in spec]:
            raise ConfigError(
                f"{where}: missing {', '.join(missing)}: name a run by dataset, model and seed "
                "(and optionally preset), or give a whole run config such as a run's config.json"
            )
        check_run({k: spec[k] for k in RUN_NAMES}, where)
        config = load(**{"preset": spec["preset"]} if "preset" in spec else {})
        try:
            dataset_config(config, spec["dataset"])
        except ConfigError as e:
            raise ConfigError(f"{where}: {e}") from None
        if (model := spec["model"]) not in config["models"]:
            near = difflib.get_close_matches(str(model), config["models"], n=3)
            # an architecture's name, as a researcher may give it: its configured models
            of_arch = [name for name, m in config["models"].items() if isinstance(m, dict) and m.get("arch") == model]
            raise ConfigError(
                f"{where}: model {model!r} is not configured under the preset {config['preset']!r}"
                + (f" (did you mean {', '.join(map(repr, near))}?)" if near else "")
                + (f"; it is an arch, of the models {', '.join(of_arch)}" if of_arch else "")
                + "; the models are the keys of params.yaml's models"
            )
        return run_config(config, spec["dataset"], spec["model"], spec["seed"])
    missing = [k for k in RUN_KEYS if k not in spec]
    raise ConfigError(
        f"{where}: not a whole run config (missing {', '.join(missing)}) nor a run named by "
        f"{', '.join(RUN_NAMES)} (unexpected {', '.join(sorted(set(spec) - {*RUN_NAMES, 'preset'}))})"
    )


@contextlib.contextmanager
def naming_the_preset(spec: Any) -> Iterator[None]:
    """A ConfigError raised inside -- resolving a run named by dataset, model and seed alone
    (``resolve_run``), or checking files against it -- says which preset resolved it: params.yaml's
    default, whose stand-ins (vectors, datasets) a run on real data does not expect."""
    try:
        yield
    except ConfigError as e:
        if not (isinstance(spec, dict) and set(spec) == set(RUN_NAMES)):
            raise
        default = read_yaml(root() / "params.yaml").get("preset", "full")
        others = [p for p in preset_names() if p != default]
        choices = " or ".join(json.dumps({"preset": p})[1:-1] for p in others)
        raise type(e)(
            f"{e} (resolved under preset {default!r}: the run config names none; add {choices} to resolve it under another)"
        ) from None


def _has_categories(ds: dict) -> bool:
    """Whether a dataset's questions carry a category: its reader gives them."""
    from ansel.data.registry import get_source

    return get_source(ds["source"]).categories


def check_reader(name: str, ds: dict, fetch: dict | None) -> None:
    """The dataset's source and read options, and the splits it must produce, refused here rather than
    by a preprocess job (which Snakemake starts by removing the dataset's processed tables). ``fetch``:
    the source's download options (None where not known: a preprocess job's block lacks them)."""
    from ansel.data.preprocess import ReadOptionError
    from ansel.data.registry import get_source

    try:
        reader = get_source(ds.get("source", "(none given)"))
    except KeyError as e:
        raise ConfigError(f"datasets.{name}.source: {e.args[0]}") from None
    read = ds.get("read", {})
    try:
        reader.check(read, fetch)
        produced = reader.splits(read, fetch)
    except KeyError as e:
        raise ConfigError(f"datasets.{name}.read: {e.args[0]}") from None
    except ReadOptionError as e:
        raise ConfigError(f"datasets.{name}.read.{e}") from None
    listed = ds.get("splits", [])
    shares = read.get(reader.fractions, {}) if reader.fractions else {}
    if listed and (unread := [s for s in shares if s not in listed]):  # a misspelt split, or one left out
        raise ConfigError(
            f"datasets.{name}.read.{reader.fractions}.{unread[0]}: not one of the dataset's splits "
            f"({', '.join(listed)}){typo_of(unread[0], listed)}: its fraction would be taken from train and never read"
        )
    # what the dev, monitor and evaluation splits are checked against (validate, run_config)
    if produced and (absent := [s for s in listed if s not in produced]):
        raise ConfigError(
            f"datasets.{name}.splits: {', '.join(map(repr, absent))} not a split the {ds['source']} reader "
            f"produces under this dataset's read and fetch options; it produces {', '.join(produced)}"
        )
    if "train" not in ds.get("splits", ["train"]):  # a preprocess job would fail building the vocabulary
        raise ConfigError(
            f"datasets.{name}.splits: {ds['splits']} has no 'train' split: the vocabulary and the word vectors "
            "are built from its text (a reader's read.splits may map one of its files to train)"
        )


def check_finite(value: Any, where: str, source: str = "") -> None:
    """Refuse an infinite or NaN number anywhere in ``value`` (YAML's .inf / .nan), naming its key path
    (after ``source``, what gave ``value``, where one is named): a range check such as ``lr > 0`` holds
    for infinity, and the run would train on NaN losses."""
    if isinstance(value, dict):
        for key, item in value.items():
            check_finite(item, f"{where}.{key}" if where else str(key), source)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_finite(item, f"{where}[{i}]", source)
    elif isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{source + ': ' if source else ''}{where}: {value} is not a finite number")


@contextlib.contextmanager
def naming_the_source(origin: Callable[..., str] | None) -> Iterator[None]:
    """A ConfigError raised inside starts with the source (``origin``: ``config_origin``) of the value it
    refuses, as the schema's check names it; with no ``origin``, as it is."""
    try:
        yield
    except ConfigError as e:
        if origin is None:
            raise
        raise type(e)(f"{origin(*refused_paths(str(e)))}: {e}") from None


def validate(config: dict, origin: Callable[..., str] | None = None) -> None:
    """Every setting the resolved config alone decides, checked before anything runs: no number
    infinite or NaN, each dataset's evaluation block and splits, each model's hyperparameters and
    training settings, a preset's sweep points. ``origin`` (``config_origin``) names the source of a
    refused value (``naming_the_source``)."""
    with naming_the_source(origin):
        _validate(config)


def _validate(config: dict) -> None:
    check_finite(config, "")
    for name, ds in config["datasets"].items():
        check_reader(name, ds, ds.get("fetch", {}))
        where = f"datasets.{name}.eval"
        ev = parse(EvalConfig, ds.get("eval", {}), where)
        unknown = [s for s in ev.splits if s not in ds["splits"]]
        if unknown:
            raise ConfigError(
                f"{where}.splits: {', '.join(map(repr, unknown))} not among the dataset's "
                f"splits ({', '.join(ds['splits'])})"
            )
    from ansel.models.registry import hparams_fields, registered  # torch-free

    every_hparam = {k for arch in registered() for k in hparams_fields(arch)}
    for key in config.get("scale", {}).get("hparams", {}):  # model_config skips a key a model's arch lacks
        if key not in every_hparam:
            raise ConfigError(
                f"scale.hparams.{key}: no architecture has this hyperparameter{typo_of(key, every_hparam)}; "
                f"known: {', '.join(sorted(every_hparam))}"
            )
    for model in config["models"]:
        parse(TrainConfig, model_config(config, model)["train"], f"models.{model}.train")
    for paper, wanted in config.get("papers", {}).items():
        _check_paper_overrides(config, paper, wanted)
    for name, dataset in config.get("dataset_alias", {}).items():
        if name not in config["datasets"]:  # a misspelt key would leave the dataset it meant un-aliased
            raise ConfigError(f"dataset_alias.{name}: not a dataset of datasets ({', '.join(config['datasets'])})")
        if dataset not in config["datasets"]:
            raise ConfigError(
                f"dataset_alias.{name}: {dataset!r} is not a dataset of datasets{typo_of(dataset, config['datasets'])}; "
                f"known: {', '.join(config['datasets'])}"
            )
    embeddings = config.get("embeddings", {})
    methods = {"word2vec", *embeddings.get("pretrained", {}), *embeddings.get("word2vec", {})}
    known = ", ".join(sorted(methods - {"word2vec"}))
    for name, stand_in in config.get("embeddings_alias", {}).items():
        if name not in methods:
            raise ConfigError(
                f"embeddings_alias.{name}: not a vectors method (word2vec, a key of "
                f"embeddings.pretrained or embeddings.word2vec: {known})"
            )
        if stand_in not in methods:
            raise ConfigError(
                f"embeddings_alias.{name}: {stand_in!r} is no vectors method (word2vec, a key of "
                f"embeddings.pretrained or embeddings.word2vec: {known})"
            )
    for model, m in config["models"].items():  # else a run's embeddings job finds no vectors to make
        if m.get("embeddings") not in (None, *methods):
            raise ConfigError(
                f"models.{model}.embeddings: {m['embeddings']!r} is no vectors method{typo_of(m['embeddings'], methods)}; "
                f"name word2vec, a key of embeddings.pretrained or embeddings.word2vec ({known}), or null (random)"
            )
    for name, entry in embeddings.get("pretrained", {}).items():
        _check_vectors_source(name, entry)
    for name, recipe in embeddings.get("word2vec", {}).items():
        if name == "word2vec" or name in embeddings.get("pretrained", {}):
            raise ConfigError(
                f"embeddings.word2vec.{name}: the name of a vectors method already "
                "(word2vec: each dataset's own; or a key of embeddings.pretrained)"
            )
        if unknown := [
            d for d in recipe["corpus"] if config.get("dataset_alias", {}).get(d, d) not in config["datasets"]
        ]:
            raise ConfigError(f"embeddings.word2vec.{name}.corpus: {', '.join(map(repr, unknown))} not in datasets")


def _check_paper_overrides(config: dict, paper: str, wanted: dict) -> None:
    """A preset's ``papers.<paper>.sweeps`` and ``.questions`` name a figure swept over ``values`` and a
    top_answers table of the paper's spec: a misspelt id would leave the spec's values in place. Each
    sweep point must make a model config (``model_config``), refused naming the point's key."""
    if not wanted.get("sweeps") and not wanted.get("questions"):
        return
    spec = load_paper(paper)
    items = {
        "sweeps": ("figure swept over values", [f["id"] for f in spec.get("figures", []) if "values" in f]),
        "questions": ("top_answers table", [t["id"] for t in spec.get("tables", []) if t.get("kind") == "top_answers"]),
    }
    for key, (what, ids) in items.items():
        for item in wanted.get(key, {}):
            if item not in ids:
                raise ConfigError(
                    f"papers.{paper}.{key}.{item}: not a {what} in {papers_dir() / f'{paper}.yaml'}"
                    f"{typo_of(item, ids)}; those are: {', '.join(ids) or 'none'}"
                )
    figures = {f["id"]: f for f in spec.get("figures", [])}
    for item, values in wanted.get("sweeps", {}).items():
        figure = figures[item]
        for i, value in enumerate(values):
            where = f"papers.{paper}.sweeps.{item}[{i}]"
            if not isinstance(value, (int, float)):  # bool is an int: a boolean hyperparameter's sweep
                raise ConfigError(f"{where}: {value!r} is not a number or boolean (a value of {figure['x']})")
            try:
                model_config(config, figure["base_model"], (figure["x"], value))
            except ConfigError as e:
                raise type(e)(f"{where}: {e}") from None


def load_paper(paper: str) -> dict:
    """A paper spec (workflow/papers/<paper>.yaml), validated against workflow/schemas/paper.schema.yaml."""
    path = papers_dir() / f"{paper}.yaml"
    if not path.exists():
        raise ConfigError(f"papers.{paper}: no spec {path}")
    return copy.deepcopy(_parse_spec(path, path.stat().st_mtime_ns))


@functools.lru_cache(maxsize=None)
def _parse_spec(path: Path, mtime_ns: int) -> dict:
    # Building the DAG asks for each spec ~200 times; parsing once makes every Snakemake start
    # (two per SLURM job) several seconds shorter.
    spec = read_yaml(path)
    check_schema(spec, path.parents[1] / "schemas" / "paper.schema.yaml", str(path))
    return spec


def _check_vectors_source(name: str, entry: str | dict) -> None:
    from ansel.data.download import SOURCES_FILE, load_sources

    if isinstance(entry, str):
        return
    spec = load_sources().get(entry["source"])
    if spec is None or spec.get("kind") != "vectors":
        known = sorted(k for k, v in load_sources().items() if v.get("kind") == "vectors")
        raise ConfigError(
            f"embeddings.pretrained.{name}.source: {entry['source']!r} is no vectors source of "
            f"{SOURCES_FILE} (known: {', '.join(known)})"
        )
    files = [f["name"] for f in spec["files"]]
    if entry["file"] not in files:
        raise ConfigError(
            f"embeddings.pretrained.{name}.file: {entry['file']!r} is not a file of source "
            f"{entry['source']!r} (its files: {', '.join(files)})"
        )
