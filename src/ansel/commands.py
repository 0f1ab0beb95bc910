"""`ansel <verb>`'s verbs, parsed and run here (``ansel.cli`` is the console script in front of them):
what each Snakemake rule calls; usable by hand too.

Rules pass resolved configs as JSON (``--config``) so a job needs no access to params.yaml.
Each command imports what it needs: torch alone takes ~2 s, and the data, table and figure
jobs never touch it.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import sys
from pathlib import Path


def _seeds(text: str) -> list[int]:
    """``--seeds 1,2,3``: distinct integers."""
    try:
        seeds = [int(s) for s in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected seeds as integers separated by commas (1,2,3)") from None
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"{text!r}: a seed given twice")
    return seeds


class ConfigArg(dict):
    """A ``--config`` value: its JSON object, and ``where``, what a refusal of a value in it names:
    ``--config``, or ``--config <file>`` for one read from a file."""

    where = "--config"

    def entry(self, key: str) -> str:
        """What a refusal of its entry ``key`` names: ``--config <key>``, or ``--config <file>: <key>``."""
        return f"--config {key}" if self.where == "--config" else f"{self.where}: {key}"

    def naming_the_file(self) -> contextlib.AbstractContextManager:
        """A ConfigError raised inside names the file the value came from, where one did (given inline,
        as a rule passes it, the error's key path is the pipeline config's and names it)."""
        from ansel.config import naming_the_source

        return naming_the_source(None if self.where == "--config" else lambda *paths: self.where)


def _json(text: str) -> ConfigArg:
    """A JSON object given inline, or the path of a JSON file (a run's config.json), which a fault
    in it names."""
    source = ""
    if not text.lstrip().startswith("{"):
        try:
            source, text = f"{text}: ", Path(text).read_text()
        except OSError as e:
            raise argparse.ArgumentTypeError(f"neither a JSON object ({{...}}) nor a readable file: {e}") from None
    try:
        value = json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{source}not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{source}expected a JSON object ({{...}}), got {type(value).__name__}")
    config = ConfigArg(value)
    if source:
        config.where = f"--config {source[:-2]}"
    return config


def _positive(kind):
    """An argparse type: a number of ``kind`` above 0."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def cmd_download(a) -> None:
    from ansel.data.download import TEMP_PREFIX, FetchOptionError, remove_stale_temporaries, resolve_mirror
    from ansel.data.manifest import write_manifest
    from ansel.data.registry import get_source
    from ansel.settings import ConfigError

    out = Path(a.out)
    try:
        source = get_source(a.source)
    except KeyError as e:  # the pipeline's own config is refused as its datasets are read (config.check_reader)
        raise ConfigError(f"--source: {e.args[0]}") from None
    remove_stale_temporaries(out.parent)
    try:
        source.fetch(out.parent, resolve_mirror(), a.config)
    except FetchOptionError as e:
        raise ConfigError(f"{a.config.where}: {e.args[0]}") from None
    write_manifest(out, TEMP_PREFIX)


def cmd_preprocess(a) -> None:
    from ansel.config import check_reader
    from ansel.data.manifest import MANIFEST, check_manifest
    from ansel.data.preprocess import check_splits, recorded_steps
    from ansel.data.readers.common import MissingRawFile
    from ansel.data.registry import get_source
    from ansel.data.vocab import Vocab, training_texts
    from ansel.settings import ConfigError, InputError

    ds_cfg, raw, out = a.config, Path(a.raw), Path(a.out)
    with a.config.naming_the_file():  # its source, read options and splits, before any file is read
        check_reader(a.dataset, ds_cfg, None)
        if not isinstance(ds_cfg.get("splits"), list):
            raise ConfigError(f"datasets.{a.dataset}.splits: missing: the splits to write, e.g. [train, dev, test]")
    try:
        check_manifest(raw)  # a raw file changed since its download is never read
        with recorded_steps() as steps:
            ds = get_source(ds_cfg["source"]).read(raw, {**ds_cfg.get("read", {}), "name": a.dataset})
        missing = [s for s in ds_cfg["splits"] if s not in ds.splits]
        if missing:
            raise InputError(f"datasets.{a.dataset}.splits: reader produced {sorted(ds.splits)}, missing {missing}")
        check_splits(ds, ds_cfg["splits"], steps, f"datasets.{a.dataset}")  # before anything is written
    except MissingRawFile as e:  # the download fetched what the dataset's `fetch` or its source lists
        fetched = sorted(json.loads((raw / MANIFEST).read_text())) if (raw / MANIFEST).is_file() else []
        fetch = ds_cfg.get("fetch", {}).get("files")
        raise InputError(
            f"datasets.{a.dataset}: {e.path}: raw file missing; the download fetched "
            f"{', '.join(fetched) or 'nothing'}"
            + (f" (datasets.{a.dataset}.fetch.files: {', '.join(fetch)})" if fetch else "")
            + f"; the {ds_cfg['source']} reader needs it too (a file in no mirror: see the mirror's SOURCE.md)"
        ) from None
    v = ds_cfg.get("vocab", {})
    out.mkdir(parents=True, exist_ok=True)
    Vocab.build(training_texts(ds), v.get("min_count", 1), v.get("max_size"), v.get("min_df", 1)).save(
        out / "vocab.json"
    )
    ds.save(out)  # last: its manifest lists the vocabulary too


def cmd_corpus_vectors(a) -> None:
    """word2vec on the training splits of several datasets (never their dev or test text)."""

    from ansel.data.canonical import Dataset
    from ansel.data.vocab import training_texts
    from ansel.embeddings import WORD2VEC_KEYS, save_matrix, word2vec_vectors
    from ansel.files import write_text_atomic

    recipe, texts, tokens = a.config, [], {}
    for processed in a.processed:
        ds_texts = training_texts(Dataset.load(Path(processed)))
        texts += ds_texts
        tokens[Path(processed).name] = sum(map(len, ds_texts))
    words, vectors = word2vec_vectors(texts, a.dim, **{k: recipe[k] for k in WORD2VEC_KEYS if k in recipe})
    out = Path(a.out)
    save_matrix(out, vectors)
    write_text_atomic(out.with_suffix(".words.json"), json.dumps(words, ensure_ascii=False))
    write_text_atomic(
        out.with_suffix(".json"),
        json.dumps({"recipe": recipe, "dim": a.dim, "training_tokens": tokens, "words": len(words)}, indent=2) + "\n",
    )


def cmd_embeddings(a) -> None:

    from ansel.data.canonical import Dataset
    from ansel.data.manifest import check_processed
    from ansel.data.vocab import Vocab, training_texts
    from ansel.embeddings import (
        PROBE_WORDS,
        align,
        all_but_the_top,
        isotropy,
        load_corpus_vectors,
        neighbours,
        save_matrix,
        train_word2vec,
    )
    from ansel.files import write_text_atomic
    from ansel.pretrained import load_pretrained
    from ansel.settings import ConfigError

    cfg, processed, out = a.config, Path(a.processed), Path(a.out)
    known = ["word2vec", *cfg.get("recipes", {}), *cfg.get("pretrained", {})]
    if a.method not in known:
        raise ConfigError(
            f"--method {a.method}: unknown; known here: {', '.join(known)} ({a.config.where}'s recipes and pretrained files)"
        )
    if a.method in cfg.get("recipes", {}) and not a.vectors:
        raise ConfigError(f"--vectors: required by --method {a.method}, a recipe (the corpus vectors it aligns)")
    out.parent.mkdir(parents=True, exist_ok=True)
    check_processed(processed)  # the vocabulary as preprocessing wrote it (pretrained vectors read no table)
    vocab = Vocab.load(processed / "vocab.json")
    info = {"method": a.method, "dim": a.dim}
    if a.method == "word2vec":
        texts = training_texts(Dataset.load(processed))
        matrix, coverage = train_word2vec(texts, vocab, a.dim, **cfg.get("word2vec", {}))
    elif a.method in cfg.get("recipes", {}):
        recipe = cfg["recipes"][a.method]
        words, trained = load_corpus_vectors(a.vectors)
        if recipe.get("all_but_the_top") is not None:  # over every word of the corpus, as the method does
            trained = all_but_the_top(trained, recipe["all_but_the_top"])
        matrix, coverage, run_vocab = align(
            words, trained, vocab, recipe.get("seed", 1), recipe.get("keep_vector_words", False)
        )
        run_vocab.save(out.with_suffix(".vocab.json"))
        info |= {"vocabulary": len(run_vocab), "training_vocabulary": len(vocab)}
        vocab = run_vocab  # the rows of the matrix
    else:
        path = Path(cfg["pretrained"][a.method])
        if (path.parent / "manifest.json").exists():  # a vectors source's download: unchanged since verified
            from ansel.data.manifest import check_manifest

            check_manifest(path.parent)
        matrix, coverage, report = load_pretrained(path, vocab, a.dim)
        info |= {
            "file": str(path),
            "file_words": report.words,
            "malformed_lines": report.malformed,
            "malformed_first": report.places,
        }
        print(
            f"{path}: {report.words} words read, {report.found} of {len(vocab) - 2} vocabulary words found; "
            f"{report.malformed} malformed lines" + (f" ({'; '.join(report.places)})" if report.places else "")
        )
    save_matrix(out, matrix)
    info |= {
        "coverage": coverage,
        "isotropy_top_2000": isotropy(matrix[2:2002]),  # training words come first
        "neighbours": neighbours(matrix, vocab, PROBE_WORDS),
    }
    write_text_atomic(out.with_suffix(".json"), json.dumps(info, indent=2) + "\n")


def cmd_train(a) -> None:
    from ansel.training.command import train_command  # the training code's digest starts there

    train_command(
        a.config,
        Path(a.processed),
        Path(a.run_dir),
        a.embeddings,
        a.threads,
        progress=not a.no_progress,
        timings=Path(a.timings) if a.timings else None,
        dvclive=not a.no_dvclive,
        seeds=a.seeds,
        checkpoint_minutes=a.checkpoint_minutes,
        where=a.config.where,
    )


def cmd_evaluate(a) -> None:
    from ansel.device import start_torch
    from ansel.evaluation.evaluate import evaluate_run

    start_torch(a.threads)
    evaluate_run(Path(a.run_dir), Path(a.processed), last=a.last)


def cmd_step_times(a) -> None:
    from ansel.config import naming_the_preset, require_dataset_folder, resolve_run
    from ansel.data.manifest import require_processed
    from ansel.device import start_torch
    from ansel.files import write_text_atomic
    from ansel.settings import ConfigError
    from ansel.training.step_times import measure

    if not isinstance(a.config, dict) or not a.config:
        raise ConfigError(f"{a.config.where}: expected {{model: run config, ...}} naming at least one model")
    configs = {}
    for model, spec in a.config.items():
        with naming_the_preset(spec):
            configs[model] = resolve_run(spec, a.config.entry(model))
            require_dataset_folder(Path(a.processed), configs[model]["dataset"], a.config.entry(model), "time")
    require_processed(Path(a.processed))
    start_torch(a.threads)
    result = measure(configs, Path(a.processed), a.batches, a.rounds)
    write_text_atomic(Path(a.out), json.dumps(result, indent=2) + "\n")


def cmd_front_page(a) -> None:
    from ansel.files import write_text_atomic
    from ansel.records.front_page import check_readme, results_table, splice
    from ansel.settings import ConfigError

    table = results_table()
    if not a.write and not a.check:
        print(table, end="")
        return
    path = Path(a.write or a.check)
    if not path.is_file():
        raise ConfigError(f"{path}: no such file (the page whose results table this prints)")
    text = path.read_text()
    if a.write:
        write_text_atomic(path, splice(text, table, str(path)))
    elif broken := check_readme(text, str(path)):
        sys.exit(
            "ansel front-page: what may be printed as a result (ansel.report.printable) is broken:\n"
            + "\n".join(broken)
        )
    elif splice(text, table, str(path)) != text:
        sys.exit(
            f"ansel front-page: {path}'s results table differs from the records; update it: "
            f"ansel front-page --write {path}"
        )


def cmd_collect_record(a) -> None:
    from ansel.records.collect import collect
    from ansel.records.items import parse_items

    collect(a.preset, parse_items(a.items), Path(a.out))


def cmd_table(a) -> None:
    """One table job: its config (``--config``) is the slice of the resolved config the table depends
    on (``TableKind.job_config``); the notes every table starts with, then its kind's rendering."""
    from ansel.evaluation.agreement import check_runs
    from ansel.table_kinds import kind_of, spec_table

    table = spec_table(a.config, a.paper, a.table)
    kind = kind_of(table)
    check_runs(kind.metrics_runs(a.config, table))  # only what the run files give
    alias = a.config.get("dataset_alias", {})
    aliases = {d: alias[d] for d in kind.datasets(table) if d in alias}
    notes = [kind.preset_note(a.config, table)]
    if aliases:
        notes.append(
            "datasets replaced by the preset (ours only; published values are the paper's): "
            + ", ".join(f"{k} → {v}" for k, v in sorted(aliases.items()))
        )
    kind.render(a.config, table, Path(a.published), notes, Path(a.out_prefix))


def cmd_stats(a) -> None:
    from ansel.data.canonical import Dataset
    from ansel.data.stats import dataset_stats
    from ansel.files import save_atomic
    from ansel.settings import ConfigError

    out = Path(a.out)
    writers = {
        ".csv": lambda tmp: stats.to_csv(tmp, index=False),
        ".json": lambda tmp: stats.to_json(tmp, orient="records", indent=1),
        ".md": lambda tmp: Path(tmp).write_text(stats.to_markdown(index=False) + "\n"),
    }
    if out.suffix not in writers:  # refused before the dataset is read
        raise ConfigError(f"--out {out}: the table is written as {', '.join(writers)}; name the file so")
    stats = dataset_stats(Dataset.load(Path(a.processed)))
    save_atomic(out, writers[out.suffix])


def cmd_figure(a) -> None:
    from ansel.evaluation.agreement import check_runs
    from ansel.figure_kinds import kind_of
    from ansel.paper_targets import spec_figure
    from ansel.report.figures import render_figure

    figure = spec_figure(a.config, a.paper, a.figure)
    check_runs(kind_of(figure).metrics_runs(a.config, figure))  # only what the run files give
    render_figure(a.config, figure, Path(a.out_prefix))


def cmd_plan(a) -> None:
    from ansel.config import ConfigError, load, root
    from ansel.plan import default_sources, plan, plan_costs, reproduction

    sources = [Path(s) for s in a.costs] if a.costs else default_sources()
    missing = [str(s) for s in sources if not s.is_dir()]
    if missing:
        raise ConfigError(f"--costs: no such directory: {', '.join(missing)}")
    # every trained run at this precision: priced by the costs measured at it (the GPU speed entry's)
    precision = {"scale": {"train": {"precision": a.precision}}} if a.precision else {}
    config = load(**({"preset": a.preset} if a.preset else {}), **precision)
    if a.papers:
        unknown = sorted(set(a.papers) - set(config["papers"]))
        if unknown:
            raise ConfigError(
                f"--papers: {', '.join(unknown)}: not a paper of the preset; known: {', '.join(config['papers'])}"
            )
        config["papers"] = {p: config["papers"][p] for p in a.papers}
    wanted = a.device  # the device the plan prices on (a prefix of its name), or None: the one pricing most runs
    if a.measure:
        from ansel.device import resolve_device, start_torch
        from ansel.plan import measure, unmeasured_shapes
        from ansel.training.trainer import device_label

        start_torch(a.threads)
        train = {**config["train"], **config.get("scale", {}).get("train", {})}
        here = device_label(resolve_device(train.get("device", "auto")))  # the device the costs will name
        if a.device and not here.startswith(a.device):
            raise ConfigError(
                f"--device {a.device} with --measure: the shapes are timed here, on {here}; "
                f"leave --device out or name this device (--device {here})"
            )
        known = plan_costs(config, sources, here)[1]
        measure(unmeasured_shapes(config, known), root() / "results/costs", a.measure)
        sources.append(root())  # what was just measured
        wanted = here  # the plan prices on what was measured, not on a device that prices more runs
    if a.budget_hours and not a.cores:
        raise ConfigError("--budget-hours: give --cores too (the jobs run one thread each, --cores at a time)")
    device, costs, priced = plan_costs(config, sources, wanted)
    if wanted and not a.measure and device is None:
        raise ConfigError(
            f"--device {wanted}: no cost measured on it in the {len(sources)} sources read; "
            f"measured: {', '.join(sorted(priced)) or 'none'} (or measure it: --measure)"
        )
    table = plan(config, costs, a.cores, a.budget_hours)
    print(table.to_markdown(index=False))
    print(
        "\ndevice-minutes: training steps, each epoch's dev scoring, checkpoints and start-up, for the runs of "
        "a measured shape (same dataset, architecture, hyperparameters that change the arithmetic, batch, "
        f"negatives, truncation); costs from: {', '.join(map(str, sources))}"
    )
    if device:
        others = ", ".join(f"{d} ({n} runs)" for d, n in sorted(priced.items()) if n and d != device)
        named = f" named {wanted}" if wanted == device else f" whose name starts with {wanted}" if wanted else ""
        print(
            f"priced on {device} alone (a total never adds two devices' minutes): of the devices measured{named}, "
            f"the one whose costs price the most of the preset's trained runs ({priced[device]})"
            + (f"; the others measured (--device picks one by its name or a prefix): {others}" if others else "")
        )
    if a.cores:
        print(f"wall hours: device-minutes over {a.cores} one-thread jobs at a time, perfectly packed (a lower bound)")
    if a.budget_hours:
        chosen = [f"{p}/{i}" for p, i, c in zip(table.paper, table["item"], table.chosen) if c]
        print(
            f"chosen for {a.budget_hours:g} h of {a.cores} cores (cheapest first, a run read twice counted once, "
            f"only fully measured items): {', '.join(chosen) or 'none'}"
        )
    print_reproduction(reproduction(config, costs), device)


def print_reproduction(r: dict, device: str | None) -> None:
    """``ansel plan``'s last lines: the whole preset once, and each shape no cost prices."""
    from ansel.plan import COMMAND_MINUTES, LEASE_MINUTES

    parts = " + ".join(f"{name} {m:.1f}" for name, m in r["parts"].items())
    unpriced = sum(n for _, n, _ in r["unpriced"].values())
    print(
        f"\nthe whole preset, each trained run once, one at a time{f' on {device}' if device else ''}: "
        f"{r['minutes']:.1f} device-minutes ({parts}) for {r['priced']} runs; {unpriced} runs unpriced"
    )
    for dev, o in sorted(r["overheads"].items()):
        print(
            f"checkpoints and start-up on {dev}: "
            + (
                f"{o.epoch_seconds:.2f} s an epoch and {o.start_seconds:.1f} s a run (fitted over the time outside the "
                f"epochs of {o.runs} timed runs)"
                if o
                else "not counted (no runs timed on it to fit them)"
            )
        )
    if r["overheads"] and all(dev.startswith("cuda") for dev in r["overheads"]):  # what a lent GPU takes
        print(
            f"fifteen-minute leases ({LEASE_MINUTES} device-minutes of each used): {r['leases']} one run at a time, "
            f"{r['packed leases']} at the kit's packing ({r['packing']:g} runs' worth at a time)"
        )
        print(
            f"runs over one command's {COMMAND_MINUTES} minutes alone: {len(r['long runs'])} "
            f"({sum(r['long runs']):.1f} minutes)"
        )
    s = r["stacked"]
    parts = " + ".join(f"{name} {m:.1f}" for name, m in s["parts"].items())
    print(
        f"the same {r['priced']} runs with a row's seeds as one stacked model where a measured stack prices it "
        f"(ansel.plan_stacks): {s['minutes']:.1f} device-minutes ({parts}): {s['stacks']} stacks of {s['runs']} "
        f"runs, {r['priced'] - s['runs']} runs alone"
    )
    if r["overheads"] and all(dev.startswith("cuda") for dev in r["overheads"]):
        print(
            f"stacked: {s['leases']} fifteen-minute leases one stack or run at a time; stacks or runs over one "
            f"command's {COMMAND_MINUTES} minutes: {len(s['long'])} ({sum(s['long']):.1f} minutes)"
        )
    for title, shapes, measured_by in (
        ("unpriced", r["unpriced"], "`ansel plan --measure` on the device"),
        (
            "priced alone, their seeds stackable but no stack measured",
            s["lacking"],
            "a speed entry's `stack_top` on the device (record gpu-stacks), the costliest first",
        ),
    ):
        if shapes:
            print(
                f"{title}: {len(shapes)} shapes, {sum(n for _, n, _ in shapes.values())} runs "
                f"(what measures them: {measured_by})"
            )
        for key, (cfg, n, why) in sorted(shapes.items(), key=lambda kv: (kv[1][0]["dataset"], kv[1][0]["arch"], kv[0])):
            print(f"- {n:3d} runs, {cfg['dataset']} {cfg['arch']} (e.g. {cfg['model']}), {why}: {key}")


def cmd_gpu_kit(a) -> None:
    from ansel.config import root
    from ansel.records.kit_pack import pack
    from ansel.records.kit_summary import SIZE_LIMIT_MB, size_mb, summary

    out = Path(a.out) if a.out else root() / "gpu-kit"
    kit = pack(a.record, out)
    print(summary(kit, out))
    if size_mb(out) > SIZE_LIMIT_MB:
        sys.exit(f"ansel gpu-kit: {out} is over {SIZE_LIMIT_MB} MiB: split the record")


def cmd_gpu_unpack(a) -> None:
    from ansel.records.kit_unpack import unpack

    unpack([Path(f) for f in a.file], a.device_minutes, render=not a.no_render)


# What `ansel --help` says first: for a user, not a maintainer (the module docstring is theirs).
DESCRIPTION = """\
ansel regenerates, from raw data, the tables and figures of four answer-selection papers
(GGSA/iGGSA, Attentive Pooling Networks, MTAS, aMV-LSTM), each cell beside its published value.

The pipeline runs these verbs for you, one job each: `snakemake --profile workflow/profiles/local all`
(or `dvc repro`) downloads, preprocesses, trains, evaluates and renders. Run a verb by hand to train
or evaluate a run of your own, to price a preset before it runs (ansel plan), or to pack and unpack
a GPU record kit; `ansel VERB --help` says what a verb reads and writes.

Docs: docs/running.md (every way to run, a run by hand, the cost planner); README.md links the rest.
"""


@functools.cache
def parser() -> argparse.ArgumentParser:
    """Every verb's parser, built once a process (the warm-job server builds it for its jobs)."""
    p = argparse.ArgumentParser(
        prog="ansel", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="verb", required=True, metavar="VERB", title="verbs")

    # What the verbs' common options name: the paths are the pipeline's, as its rules pass them.
    helps = {
        "source": "a source of src/ansel/data/sources.yaml (e.g. wikiqa)",
        # a label only: the pipeline passes a key of the preset's datasets, but --config holds all its settings
        "dataset": "the dataset's name in messages and in the processed tables (the pipeline's: a key of params.yaml's "
        "datasets; nothing is looked up by it: --config holds its settings)",
        "raw": "the source's downloaded folder (data/raw/<source>, with the manifest.json `ansel download` wrote)",
        "processed": "a processed dataset (data/processed/<dataset>, what `ansel preprocess` writes)",
        "method": "the vectors: word2vec (trained here on the dataset's training splits), or a key of --config's "
        "pretrained (a vectors file) or recipes (corpus vectors, read from --vectors)",
        "run-dir": "the run's folder (results/runs/<dataset>/<model>/seed<k>)",
        "embeddings": "the run's starting word vectors (data/embeddings/<dataset>/<method>-<dim>.npy); required "
        "when the run config names vectors, refused when it names none",
        "preset": "the preset the runs were trained under (full, or a preset of presets/)",
        "paper": "a paper of params.yaml's papers (its spec: workflow/papers/<paper>.yaml)",
        "table": "a table id of the paper's spec",
        "figure": "a figure id of the paper's spec",
        "published": "the published values shown beside ours (workflow/papers/published_results.csv; "
        "dataset_stats_published.csv for a table of dataset statistics)",
        "out-prefix": "the output files' path without their suffixes (results/tables/<paper>/<table> or "
        "figures/<paper>/<figure>)",
    }

    def verb(name, fn, line, about, *args, config=None, out=None):
        """A verb's parser: ``line`` is its entry in `ansel --help`, ``about`` follows it in `ansel <verb> --help`."""
        s = sub.add_parser(name, help=line, description=f"{line[0].upper()}{line[1:]}. {about}")
        s.set_defaults(fn=fn)
        if config:  # _json: inline or a file
            s.add_argument(
                "--config",
                type=_json,
                required=True,
                help=f"{config}; given inline as JSON or as the path of a JSON file",
            )
        for arg in args:
            s.add_argument(f"--{arg}", required=arg not in ("embeddings",), help=helps[arg])
        if out:
            s.add_argument("--out", required=True, help=out)
        return s

    threads = "torch's threads (default 1: the DAG runs one-thread jobs side by side)"
    verb(
        "download",
        cmd_download,
        "fetch a source's raw files and verify their checksums",
        "Files come from the mirror in $ANSEL_DATA_MIRROR when set (the pipeline sets it from params.yaml's "
        "data.mirror), else from the source's upstream URLs (src/ansel/data/sources.yaml), into the folder of "
        "--out; a failed fetch or a checksum mismatch names the file and leaves nothing under its name. Writes "
        "manifest.json (each file's size and sha256) last.",
        "source",
        config="the source's fetch options (a dataset's fetch block in params.yaml, e.g. "
        '{"files": ["dev.tsv"]}; {} for none)',
        out="the source's manifest (data/raw/<source>/manifest.json); the raw files go beside it",
    )
    verb(
        "preprocess",
        cmd_preprocess,
        "read a source's raw files into a dataset's canonical tables and vocabulary",
        "Checks --raw against its manifest, reads it with the source's reader and --config's read options, "
        "and refuses a split that is missing, empty or without a positive answer before anything is written; then writes the splits' tables, "
        "vocab.json (from the training splits) and a manifest into --out.",
        "dataset",
        "raw",
        config="the dataset's block of params.yaml (source, fetch, read, splits, vocab)",
        out="the processed dataset's folder (data/processed/<dataset>)",
    )
    c = verb(
        "corpus-vectors",
        cmd_corpus_vectors,
        "train word2vec on the training splits of several datasets",
        "Never their dev or test text. Writes the vectors (--out), their words (.words.json beside it) and a "
        ".json of the recipe, the dimension and the tokens read from each dataset; `ansel embeddings "
        "--method <recipe> --vectors <out>` aligns them to a dataset's vocabulary.",
        config="a recipe of params.yaml's embeddings.word2vec (its corpus, and gensim's window, min_count, epochs, "
        "sg and seed)",
        out="the vectors (data/vectors/<recipe>-<dim>.npy)",
    )
    c.add_argument("--processed", nargs="+", required=True, help="the corpus: these datasets' training splits")
    e = verb(
        "embeddings",
        cmd_embeddings,
        "write a dataset's starting word vectors, a row per vocabulary word",
        "From word2vec trained on its training splits, a pretrained vectors file, or corpus vectors (ansel "
        "corpus-vectors) aligned to its vocabulary. Reads --processed's vocab.json (and its training text for "
        "word2vec); writes the matrix (--out), a .json beside it (coverage, isotropy, the neighbours of probe "
        "words) and, for a recipe, the run's vocabulary (.vocab.json).",
        "processed",
        "method",
        config='the vectors\' settings: {"word2vec": the dataset\'s word2vec settings, "pretrained": {method: file}, '
        '"recipes": {method: recipe of embeddings.word2vec}}, each part optional',
        out="the dataset's vectors (data/embeddings/<dataset>/<method>-<dim>.npy)",
    )
    e.add_argument(
        "--vectors",
        help="the corpus vectors (.npy, .words.json beside it) a recipe aligns; required when --method is one",
    )
    for s in (c, e):
        s.add_argument("--dim", type=_positive(int), required=True, help="the vectors' dimension (e.g. 300)")
    t = verb(
        "train",
        cmd_train,
        "train one run (or a row's seeds), keeping the weights best on dev",
        "Reads the processed dataset and, where the run starts from word vectors, --embeddings; the test split "
        "is never looked at. Writes into --run-dir model.pt, log.csv, config.json and dev_scores.pt (and "
        "dvclive/), keeping state.pt while it trains: a run cut short resumes from it when run again. "
        "`ansel evaluate` scores the run next.",
        "processed",
        "run-dir",
        "embeddings",
        config="the run: its resolved config (as the train rule passes it), a run's config.json, "
        'or {"dataset": ..., "model": ..., "seed": ...} resolved through params.yaml and its preset',
    )
    t.add_argument("--no-progress", action="store_true", help="show no progress bar")
    t.add_argument(
        "--no-dvclive", action="store_true", help="write no dvclive/ folder (where dvclive is not installed)"
    )
    t.add_argument("--timings", help="write the epochs' wall times here (JSON; outside the run directory)")
    t.add_argument(
        "--seeds",
        type=_seeds,
        help="train the run at each of these seeds (1,2,3), as one stacked model "
        "where the model stacks (ansel.training.seed_stack), else one after another; {seed} in --run-dir "
        "(and in --timings, when given) stands for each seed",
    )
    t.add_argument(
        "--checkpoint-minutes",
        type=float,
        help="save the training state (state.pt) after an epoch only "
        "once this many minutes have passed since the last save (default: after every epoch); a restart "
        "resumes from the last saved epoch, exactly",
    )
    e = verb(
        "evaluate",
        cmd_evaluate,
        "score a trained run on its eval splits",
        "Reads --run-dir's config.json, dev_scores.pt (the training's dev scores, reused; with --last only its "
        "digest of the data trained on) and the weights chosen on dev (model.pt), and the processed dataset; "
        "writes metrics.json and the run file run.trec into --run-dir (with --last: the last epoch's).",
        "processed",
        "run-dir",
    )
    for s in (t, e):
        s.add_argument("--threads", type=_positive(int), default=1, help=threads)
    e.add_argument(
        "--last",
        action="store_true",
        help="score the last epoch's weights (model_last.pt, train.keep_last) into run_last.trec and metrics_last.json",
    )
    st = verb(
        "step-times",
        cmd_step_times,
        "time the training steps of a table's benchmark rows",
        "Each model of --config at its run's batch size, every text filled to the run's maximum lengths, after "
        "a warm-up step: --rounds rounds of --batches steps, the models taking turns. Writes each round's "
        "seconds per step as JSON (--out); the pipeline runs it alone, on every core.",
        "processed",
        config="{model: run config} (the rows of a table's benchmark column; each resolved as train's --config)",
        out="the step times (JSON)",
    )
    st.add_argument(
        "--batches", type=_positive(int), default=3, help="timed training steps per model and round (default 3)"
    )
    st.add_argument(
        "--rounds", type=_positive(int), default=3, help="rounds, the models taking turns in each (default 3)"
    )
    st.add_argument(
        "--threads",
        type=_positive(int),
        default=1,
        help="torch's threads (default 1; the pipeline gives it every core)",
    )
    r = verb(
        "front-page",
        cmd_front_page,
        "print the README's results table from the committed records",
        "A headline cell per paper, read from the records under reports/ (reports/headlines.yaml names them) "
        "and printed through the rule of ansel.report.printable; --write puts it into a page, --check "
        "compares a page with it.",
    )
    r.add_argument("--write", metavar="FILE", help="put it between FILE's results markers (README.md)")
    r.add_argument(
        "--check",
        metavar="FILE",
        help="fail where a row of FILE's results table breaks the rule of "
        "ansel.report.printable or the table differs from the records",
    )
    rc = verb(
        "collect-record",
        cmd_collect_record,
        "copy runs trained here into a record and render its items",
        "The finished runs of --items under --preset are copied from results/runs into --out in every "
        "record's layout, and each item whose runs are all there is rendered; runs of another setting than "
        "the record's are refused, and the record is placed whole or not at all.",
        "preset",
        out="the record's folder (reports/<name>)",
    )
    rc.add_argument("--items", nargs="+", required=True, help="paper/item of the preset (e.g. amvlstm/table3)")
    job_config = (
        "the slice of the resolved pipeline config the {0} reads (the rule passes logs/{0}/<paper>/<{0}>.config.json)"
    )
    verb(
        "table",
        cmd_table,
        "render a table of a paper from its runs",
        "Reads the files of the runs its rows name and the published values; writes <out-prefix>.csv, .md, "
        ".tex, .html and .json (the table's DVC metrics), each headed by the preset's notes.",
        "paper",
        "table",
        "published",
        "out-prefix",
        config=job_config.format("table"),
    )
    verb(
        "figure",
        cmd_figure,
        "render a figure of a paper from its runs",
        "Reads the files of the runs it names (and the published values it shows); writes <out-prefix>.png and .pdf.",
        "paper",
        "figure",
        "out-prefix",
        config=job_config.format("figure"),
    )
    verb(
        "stats",
        cmd_stats,
        "write a processed dataset's statistics table",
        "Questions, pairs, positives, candidates and mean lengths per split and over all splits (ansel.data.stats), "
        "in the format --out's suffix names.",
        "processed",
        out="the table's file: .csv, .json (a record per split) or .md",
    )
    pl = verb(
        "plan",
        cmd_plan,
        "estimate what a preset's runs will cost before they run",
        "Prints, per table and figure of the preset, its runs and device-minutes from the costs measured in "
        "this checkout and the committed records, then the whole preset's; with --cores, wall hours too. "
        "Writes nothing but what --measure times (results/costs/).",
    )
    pl.add_argument("--preset", help="a preset: full, or one of presets/ (default: params.yaml's)")
    pl.add_argument(
        "--costs",
        nargs="*",
        help="checkouts or records holding measured runs (default: this checkout and every record under reports/)",
    )
    pl.add_argument(
        "--device",
        help="price on the device of this name (cpu, cuda/NVIDIA H200) or else, of those whose name starts with "
        "this (cuda, cpu/), the one that prices the most runs (default: of every device measured); a plan never "
        "adds two devices' minutes",
    )
    pl.add_argument(
        "--measure",
        type=int,
        metavar="BATCHES",
        nargs="?",
        const=3,
        help="first time BATCHES training batches (default 3) and one dev scoring of every shape this "
        "machine's device (cpu/AVX2, cuda/NVIDIA H200: train.device's) has not measured, here (into "
        "results/costs/), then price on that device",
    )
    pl.add_argument("--threads", type=_positive(int), default=1, help="torch's threads for --measure (default 1)")
    pl.add_argument("--papers", nargs="+", help="only these papers of the preset (measured and planned)")
    pl.add_argument(
        "--precision",
        choices=("torch", "fp32", "tf32", "bf16"),
        help="every trained run at this train.precision (priced by the costs measured at it)",
    )
    pl.add_argument(
        "--cores",
        type=_positive(int),
        help="also each item's wall hours on this many cores (one-thread jobs, perfectly packed: a lower bound)",
    )
    pl.add_argument(
        "--budget-hours",
        type=_positive(float),
        help="with --cores: choose the items that fit these hours, cheapest first",
    )
    k = verb(
        "gpu-kit",
        cmd_gpu_kit,
        "pack a GPU record kit before a GPU lease",
        "For the records named: the processed data and vectors their jobs read (made by the normal rules), "
        "each run's resolved config, the ansel sources and run.sh, in one folder; prints its size and planned "
        "device-minutes, and fails when it is over the size limit. See docs/records.md.",
    )
    k.add_argument("--record", nargs="+", required=True, help="records declared in reports/device/records.yaml")
    k.add_argument("--out", help="the kit's folder (default: gpu-kit/ in the checkout)")
    u = verb(
        "gpu-unpack",
        cmd_gpu_unpack,
        "place a GPU kit's archive as records under reports/device",
        "Each record of the archive run.sh wrote is checked whole and placed in reports/device/<record>/, "
        "keeping what an earlier lease left that this one has nothing newer for; then its README is written and "
        "its tables and figures rendered from its finished runs. A refusal names the archive's file and places nothing.",
    )
    u.add_argument("file", nargs="+", help="the archive run.sh wrote (or its .partNN files, in order)")
    u.add_argument("--device-minutes", type=_positive(float), help="the lease's device time, for the record's README")
    u.add_argument("--no-render", action="store_true", help="place the records; render no table or figure")
    return p


def main(argv: list[str] | None = None) -> None:
    a = parser().parse_args(argv)
    from ansel.settings import InputError

    try:
        a.fn(a)
    except InputError as e:  # a setting's or a file's fault: its key or file and the fix
        sys.exit(f"ansel {a.verb}: {e}")
    except KeyboardInterrupt:  # Ctrl-C: what it stopped (a training's state.pt) is kept; a traceback adds nothing
        print(f"ansel {a.verb}: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:  # its reader went away (`| head`): stop quietly, as a Unix tool does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush would raise again
        sys.exit(141)
