"""A record of runs trained in this checkout (``ansel collect-record``): the finished runs of a preset's
tables and figures copied from ``results/`` into ``reports/<name>/`` in every record's layout, and those
items rendered from them by the normal rules (``render``) once all their runs are there.

A long table can so be trained in parts (a model, some seeds), each part collected and committed as it
finishes: the record keeps what earlier parts collected, and renders when the last part is in. A run
is collected only if its ``config.json`` is the preset's resolved config for it: a run left in
``results/runs/`` by another preset (same path, other epochs) is named, never mixed in; and the record
as a whole holds one setting (``placing``): runs it holds of another are refused, never mixed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ansel import paper_targets as P
from ansel import targets as T
from ansel.config import ConfigError, load, root
from ansel.files import locked, replace_tree
from ansel.jsonfile import read_json
from ansel.records.items import item_runs
from ansel.records.layout import FINISHED_FILES, RecordRefused, copy_path, gzip_file
from ansel.records.placing import (
    check_finished,
    check_same_setting,
    check_setting,
    settings,
    staged_record,
    write_setting,
)
from ansel.records.render import render_items

# Of the formats the rules write, what a CPU record keeps: the table, its data, its cells' provenance, the figure.
KEPT = (".md", ".csv", ".json", ".png")


def collect(preset: str, items: dict[str, list[str]], out: Path, report=print) -> dict[str, list[str]]:
    """Copy the finished runs of ``items`` ({paper: [table or figure id]}) under ``preset`` into ``out``,
    render the items whose runs are all in ``out``, and return {item: its runs still missing}.

    The record is staged and placed whole (``placing``): runs of another setting than the record's
    (another preset; a run of it trained before params.yaml changed) are refused naming both, a copied
    run replaces its old self wholly, and a half-written run or a full disk places nothing."""
    config = load(preset=preset)
    runs: set[T.Run] = set()
    for paper, ids in items.items():
        for item in ids:
            runs.update(item_runs(config, paper, item)[1])
    out = out.absolute()
    try:
        with locked(out.parent), staged_record(out) as stage:
            check_setting(stage, preset, {}, f"ansel collect-record --preset {preset}")
            waiting = _collect(config, preset, items, sorted(runs), stage, out, report)
            replace_tree(stage, out)
    except RecordRefused as e:
        raise ConfigError(f"{out}: {e}") from None
    except OSError as e:  # a full disk, say: the staging is removed, the record is as it was
        where = f"{e.filename}: " if e.filename else ""
        raise ConfigError(f"{out}: {where}{e.strerror or e}; nothing was placed") from None
    return waiting


def _collect(
    config: dict, preset: str, items: dict[str, list[str]], runs: list[T.Run], stage: Path, out: Path, report
) -> dict[str, list[str]]:
    """``collect`` into the staging copy ``stage`` of the record ``out``."""
    copied, other, missing = 0, [], 0
    for run in runs:
        src, dst = root() / run.dir, stage / run.dir.removeprefix("results/")
        if not (src / "metrics.json").exists():
            missing += not (dst / "metrics.json").exists()
            continue
        try:
            trained = read_json(src / "config.json")
        except (ValueError, FileNotFoundError) as e:
            raise RecordRefused(f"{e}: a finished run (metrics.json) half written; nothing was placed") from None
        if settings(trained) != settings(json.loads(json.dumps(run.config(config)))):
            other.append(run.dir)
            continue
        check_finished(src, "run.trec", root() / T.processed_dir(run.dataset))
        shutil.rmtree(dst, ignore_errors=True)  # the run replaces its old self wholly
        for name in FINISHED_FILES:
            copy_path(src / name, dst / name)
        timings = root() / f"results/timings/{run.dataset}/{run.variant.name}/seed{run.seed}.json"
        if timings.exists():
            copy_path(timings, dst / "timings.json")
        gzip_file(src / "run.trec", dst / "run.trec.gz")
        if (src / "run_last.trec").exists():  # train.keep_last: the last epoch's evaluation too
            copy_path(src / "metrics_last.json", dst / "metrics_last.json")
            gzip_file(src / "run_last.trec", dst / "run_last.trec.gz")
        copied += 1
    _check_held(config, preset, {r.dir.removeprefix("results/"): r for r in runs}, stage, out)
    write_setting(stage, {"preset": preset, "config": {}})
    report(f"{out}: {copied} runs copied from results/runs, {missing} not trained yet")
    if other:
        report(f"{len(other)} runs trained with other settings than preset {preset!r} (not copied), e.g. {other[0]}")
    placed, waiting = render_items({"items": items, "preset": preset}, stage)
    for f in placed:
        if f.suffix in KEPT:
            report(f"rendered {out / f.name}")
        else:
            f.unlink()
    for item, runs_left in waiting.items():
        report(f"{item}: waits for {len(runs_left)} runs (e.g. {runs_left[0]})")
    return waiting


def _check_held(config: dict, preset: str, collected: dict[str, T.Run], stage: Path, out: Path) -> None:
    """Every run the record holds is the run ``preset`` resolves now at its directory: a record of another
    preset, or runs trained before a change of params.yaml, are refused naming the run and the key."""
    held = sorted(stage.glob("runs/*/*/*/config.json"))
    known = dict(collected)
    if any(str(p.parent.relative_to(stage)) not in known for p in held):  # runs of other items of the preset
        known |= {r.dir.removeprefix("results/"): r for r in P.paper_runs(config)}
    for path in held:
        name = str(path.parent.relative_to(stage))
        if name not in known:
            raise RecordRefused(
                f"{out / name}: not a run of preset {preset!r}: the record holds another setting's "
                "runs; collect into another record"
            )
        check_same_setting(
            read_json(path),
            json.loads(json.dumps(known[name].config(config))),
            f"{out / name}/config.json",
            f"preset {preset!r} resolves now",
        )
