"""A record's tables and figures, by the workflow's own table and figure rules (CPU: at unpack for a
device record, at ``ansel collect-record`` for a record of runs trained here).

Snakemake runs in a staging directory that links the checkout's workflow, sources and data, and each
run's files where the rules read them (``results/runs/...``, each run's timings under
``results/timings/...``) as the record keeps them (run files gzipped: the rules read either form,
``ansel.run_files``), with only the ``table`` and ``figure`` rules allowed: a run's files are
inputs there, never retrained. The runs are the record's and those of the other device records of
the same preset (a table split over two leases renders once both are in). An item whose runs are
not all there yet is left for a later record, and named; so is a figure drawn from a model's weights
(attention maps), which no record keeps, unless the checkout trained that run (``ansel collect-record``). The record's untrained rows (BM25, word
counts, random: no device time, and their packages are not on the device) are scored here first
by ``ansel train`` and ``ansel evaluate`` and kept in the record like the others.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

from ansel import paper_targets as P
from ansel import targets as T
from ansel.config import root
from ansel.figure_kinds import kind_of as figure_kind_of
from ansel.records.items import item_runs
from ansel.records.kit_runner.commands import run_commands
from ansel.records.layout import LAST_RUN_FILES, RUN_FILES, copy_path, gzip_file, run_name, setting_args
from ansel.table_kinds import kind_of

LINKED = ("Snakefile", "params.yaml", "presets", "workflow", "src", "data")


def render_items(rec: dict, dst: Path, siblings: Sequence[Path] = ()) -> tuple[list[Path], dict[str, list[str]]]:
    """The record's items rendered into ``dst`` from its runs and ``siblings``' (records of the same
    preset); returns the files placed and {item: its runs not in any record yet}."""
    items = rec.get("items") or {}
    if not items:
        return [], {}
    with tempfile.TemporaryDirectory(prefix="ansel-record-") as tmp:
        stage = Path(tmp)
        for name in LINKED:
            (stage / name).symlink_to(root() / name)
        for record in [*siblings, dst]:  # this record's own runs last: they win
            for metrics in sorted(record.glob("runs/*/*/seed*/metrics.json")):
                link_run(metrics.parent, stage)
        for record in [*siblings, dst]:  # tables' step times (``ansel step-times``), timed on the device
            for f in sorted(record.glob("results/benchmarks/*/*.json")):
                copy_path(f, stage / f.relative_to(record))
        _score_cpu_runs(rec, dst, stage)
        targets, waiting = _targets(rec, stage)
        if not targets:
            return [], waiting
        cmd = [
            "snakemake",
            "--snakefile",
            str(stage / "Snakefile"),
            "--directory",
            str(stage),
            "--cores",
            "1",
            "--allowed-rules",
            "table",
            "figure",
            "--config",
            *setting_args(rec["preset"], rec.get("config", {})),
            "--",
            *targets,
        ]
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, env={**os.environ, "ANSEL_ROOT": str(stage), "ANSEL_FORKSERVER": "off"})
        placed = []
        for target in targets:
            for f in sorted((stage / target).parent.glob(Path(target).stem + ".*")):
                shutil.copy2(f, dst / f.name)
                placed.append(dst / f.name)
        return placed, waiting


def link_run(src: Path, stage: Path) -> None:
    """A record run's files linked where the rules read them (``results/runs/...``; its timings under
    ``results/timings/...``) as the record keeps them, run files gzipped: nothing copied or unpacked."""
    cfg = json.loads((src / "config.json").read_text())
    name = run_name(cfg, f"{src / 'config.json'}")
    into = stage / "results" / name
    shutil.rmtree(into, ignore_errors=True)  # a run wholly of the last record staging it
    into.mkdir(parents=True)
    for f in sorted(src.iterdir()):
        link = (
            stage / "results/timings" / f"{name.removeprefix('runs/')}.json"
            if f.name == "timings.json"
            else into / f.name
        )
        link.parent.mkdir(parents=True, exist_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(f.absolute())


def _score_cpu_runs(rec: dict, dst: Path, stage: Path) -> None:
    """The record's untrained runs, scored on this CPU (as the kit's runs are on the device) and kept
    in the record."""
    for run in rec.get("cpu_runs", []):
        out = dst / run["dir"]
        if not (out / "metrics.json").exists():
            work = stage / "cpu_runs" / run["dir"]
            work.mkdir(parents=True, exist_ok=True)
            (work / "config.json").write_text(json.dumps(run["config"], indent=2, sort_keys=True) + "\n")
            for cmd in run_commands(run, work, root(), threads=1):
                subprocess.run(cmd, check=True, cwd=stage)
            for trec in ("run.trec", "run_last.trec"):
                if (work / trec).exists():
                    gzip_file(work / trec, work / f"{trec}.gz")
            out.mkdir(parents=True, exist_ok=True)
            for name in RUN_FILES:
                shutil.copy2(work / name, out / name)
            for name in LAST_RUN_FILES:
                if (work / name).exists():
                    shutil.copy2(work / name, out / name)
            link_run(out, stage)  # an earlier unpack's are staged with the record's other runs


def _targets(rec: dict, stage: Path) -> tuple[list[str], dict[str, list[str]]]:
    """The record's tables (.md; the rule writes every format) and figures (.png) whose runs are all
    staged, and {item: the runs it still waits for}; a figure drawn from weights gets them linked into
    the stage here (``link_weights``) or waits for them."""
    from ansel.config import load

    config = load(preset=rec["preset"], **rec.get("config", {}))
    targets, waiting = [], {}
    for paper, ids in rec["items"].items():
        tables, figures = P.items_by_id(config, paper)
        for item in ids:
            target, runs = item_runs(config, paper, item)
            missing = [r.dir for r in runs if not (stage / r.dir / "metrics.json").exists()]
            if item in tables and kind_of(tables[item]).benchmark_configs(config, tables[item])[0]:  # its step times
                missing += [f] if not (stage / (f := T.benchmark_file(paper, item))).exists() else []
            if item in figures and "model.pt" in figure_kind_of(figures[item]).run_files:
                missing += [w for r in runs if (w := link_weights(r, stage))]
            if missing:
                waiting[f"{paper}/{item}"] = missing
            else:
                targets.append(target)
    return targets, waiting


def link_weights(run: T.Run, stage: Path) -> str | None:
    """A figure drawn from a model's weights (attention maps): a record keeps no weights, so the staged
    run takes the checkout's ``model.pt`` where the checkout trained that same run (``ansel collect-record``);
    else (a device record at home) the weights it waits for, named."""
    staged, trained = stage / run.dir, root() / run.dir
    if not (staged / "config.json").exists() or (staged / "model.pt").exists():
        return None  # the run itself is missing (named already), or its weights are linked (another figure's)
    if (
        (trained / "model.pt").exists()
        and (trained / "config.json").exists()
        and json.loads((trained / "config.json").read_text()) == json.loads((staged / "config.json").read_text())
    ):
        (staged / "model.pt").symlink_to(trained / "model.pt")
        return None
    return f"{run.dir}/model.pt (weights: a record keeps none, so this figure renders where the run was trained)"
