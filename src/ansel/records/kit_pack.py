"""Pack a GPU record kit (CPU, before any lease): ``ansel gpu-kit --record NAME [NAME ...]``.

Records are declared in ``reports/device/records.yaml`` (``declared`` reads and checks it); what the
packed kit holds and costs is printed by ``kit_summary``.

The kit is one folder (default ``gpu-kit/``, ignored by git) that the device tool carries: the
ansel sources, ``run.sh``, ``kit.json`` (per record: its jobs, each run's resolved config and the
files it reads) and the processed datasets, aligned vectors and vocabularies the jobs read, made
by the normal Snakemake rules first. Nothing of the workflow's own packages is needed there.
"""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
from pathlib import Path

from ansel import paper_targets as P
from ansel import targets as T
from ansel.code_digest import checkout_commit
from ansel.config import ConfigError, embeddings_file, root
from ansel.files import write_text_atomic
from ansel.jsonfile import read_json
from ansel.records.declared import RECORDS, declared_records, record_config, record_runs
from ansel.records.layout import DEVICE_DIR, KIT_FILE, copy_path, setting_args
from ansel.table_kinds import kind_of

SOURCES = ("src/ansel",)
HALF_ABOVE_MB = 32  # pruned vectors larger than this travel as float16


SPEED_DEFAULTS = {
    "top": 5,
    "stack_top": 0,
    "precisions": ["torch", "fp32", "tf32", "bf16"],
    "seeds": 5,
    "batches": 5,
    "rounds": 3,
    "dev_questions": None,  # the whole dev split: scoring encodes each distinct text once, not linear in questions
    "compiled": False,
}


def speed_entry(config: dict, spec: dict, costs: dict, where: str) -> dict:
    """The speed entry's settings and its shapes (one seed-1 config each): the preset's ``top`` costliest
    (the planner's minutes over their runs, measured costs), its ``stack_top`` costliest whose rows
    would stack but have no stack measured (``plan.stackless_shapes``) and those of the ``items``' runs."""
    from ansel.models.registry import is_trained
    from ansel.plan import costliest_shapes, shape, stackless_shapes

    chosen = {shape(cfg): cfg for cfg in costliest_shapes(config, costs, spec.get("top", SPEED_DEFAULTS["top"]))}
    if stack_top := spec.get("stack_top", SPEED_DEFAULTS["stack_top"]):
        chosen |= {shape(cfg): cfg for cfg in stackless_shapes(config, costs, stack_top) if shape(cfg) not in chosen}
    runs = record_runs(config, {"items": spec["items"]}, where) if spec.get("items") else []
    counts: dict[str, int] = {}  # the items' shapes, those of the most runs first
    for cfg in (run.config(config) for run in runs):
        if is_trained(cfg["arch"]):
            counts[shape(cfg)] = counts.get(shape(cfg), 0) + 1
            if cfg["seed"] == 1:
                chosen.setdefault(shape(cfg), cfg)
    chosen = dict(sorted(chosen.items(), key=lambda kv: (kv[0] in counts, -counts.get(kv[0], 0))))
    if models := spec.get("models"):  # only these, in this order
        chosen = {k: cfg for m in models for k, cfg in chosen.items() if cfg["model"] == m}
    settings = {k: spec.get(k, v) for k, v in SPEED_DEFAULTS.items() if k not in ("top", "stack_top")}
    return {**settings, "configs": list(chosen.values())}


def run_files(cfg: dict) -> list[str]:
    """What a run reads besides its config: its processed dataset, vectors and vocabulary."""
    files = [T.processed_dir(cfg["dataset"])]
    if vectors := embeddings_file(cfg):
        files.append(vectors)
    if cfg.get("vocab"):
        files.append(cfg["vocab"])
    return files


def make_files(files: list[str], preset: str, overrides: dict) -> None:
    """The files by the workflow's own rules (downloads through the mirror, preprocessing, vectors)."""
    missing = sorted({f for f in files if not (root() / f).exists()})
    if not missing:
        return
    cmd = [
        "snakemake",
        "--profile",
        "workflow/profiles/local",
        "--config",
        *setting_args(preset, overrides),
        "--",
        *missing,
    ]
    print("+", " ".join(cmd), flush=True)
    if subprocess.run(cmd, cwd=root()).returncode:
        raise ConfigError(
            f"the workflow could not make {', '.join(missing)} under preset {preset!r} "
            "(Snakemake's message above: a dataset missing from the mirror, say); nothing was packed"
        )


def kit_costs(configs: list[dict]) -> tuple[str | None, dict]:
    """The GPU that prices a kit's runs and its measured costs: of the GPUs measured, the one whose costs
    price the most of the trained runs of the records' presets (``configs``), as ``ansel plan --device cuda``
    picks it (``plan.device_costs``), so the kit's minutes and its runner's pacing are one device's. A
    CPU's cost of the same shape (the paper-scale CPU records) is hours where the GPU takes minutes: the
    runner would never start the run."""
    from ansel.plan import default_sources, device_costs

    runs = (run.config(config) for config in configs for run in P.paper_runs(config))
    device, costs, _ = device_costs(runs, default_sources(), "cuda")
    return device, costs


def pack(names: list[str], out: Path, declared: dict[str, dict] | None = None) -> dict:
    """Build the kit for the named records into ``out`` (replaced); returns kit.json's content."""
    from ansel.models.registry import is_trained
    from ansel.plan import plan_costs, run_parts, shape, unmeasured_shapes

    declared = declared if declared is not None else declared_records()
    if unknown := [n for n in names if n not in declared]:
        raise ConfigError(f"{RECORDS}: no record {', '.join(map(repr, unknown))} (declared: {', '.join(declared)})")
    kit_records, files = [], set()
    configs = {name: record_config(declared[name]) for name in names}
    device, costs = kit_costs(list(configs.values()))
    examples: dict[str, int] = {}  # {dataset: its training examples}, filled by run_parts
    for name in names:
        rec, where, config = declared[name], f"{RECORDS}: {name}", configs[name]
        entry = {
            "name": name,
            "preset": config["preset"],
            "config": rec.get("config", {}),
            "about": rec.get("about", ""),
            "bench": rec.get("bench", []),
            "measure": None,
            "speed": None,
            "runs": [],
            "stacks": [],
            "cpu_runs": [],
            "step_times": [],
            "items": rec.get("runs", {}).get("items", {}),
        }
        for paper, ids in entry["items"].items():  # tables whose seconds per batch are timed as a benchmark
            tables = P.items_by_id(config, paper)[0]
            for item in ids:
                dataset, timed = (
                    kind_of(tables[item]).benchmark_configs(config, tables[item]) if item in tables else (None, {})
                )
                if dataset:
                    entry["step_times"].append(
                        {"file": T.benchmark_file(paper, item), "processed": T.processed_dir(dataset), "configs": timed}
                    )
                    needed = sorted({f for cfg in timed.values() for f in run_files(cfg) if f != embeddings_file(cfg)})
                    make_files(needed, config["preset"], rec.get("config", {}))
                    files.update(needed)
        runs = record_runs(config, rec["runs"], f"{where}.runs") if "runs" in rec else []
        if "runs" in rec and not runs:
            raise ConfigError(f"{where}.runs: selects no run")
        cfgs = [r.config(config) for r in runs]
        if "measure" in rec:
            m = rec["measure"]
            needed = [T.processed_dir(d) for d in m["datasets"]]
            make_files(needed, config["preset"], rec.get("config", {}))
            # a record with runs measures their shapes only (the device minutes go to what it trains next)
            own = {shape(cfg) for cfg in cfgs} if "runs" in rec else None
            # untrained rankers (BM25, random) cost no device time: the CPU records time them
            shapes = [
                cfg
                for cfg in unmeasured_shapes(config, plan_costs(config, [root() / DEVICE_DIR / name])[1], m["datasets"])
                if is_trained(cfg["arch"]) and (own is None or shape(cfg) in own)
            ]
            entry["measure"] = {"batches": m.get("batches", 3), "configs": shapes}  # not what earlier leases did
            files.update(f for cfg in shapes for f in run_files(cfg) if f != embeddings_file(cfg))  # random init
        if "speed" in rec:
            entry["speed"] = speed_entry(config, rec["speed"], costs, f"{where}.speed")
            needed = sorted(
                {f for cfg in entry["speed"]["configs"] for f in run_files(cfg) if f != embeddings_file(cfg)}
            )
            make_files(needed, config["preset"], rec.get("config", {}))  # random initial vectors: timings only
            files.update(needed)
        if "runs" in rec:
            needed = sorted({f for cfg in cfgs for f in run_files(cfg)})
            make_files(needed, config["preset"], rec.get("config", {}))
            files.update(needed)
            for run, cfg in zip(runs, cfgs):
                parts, cost = run_parts(cfg, costs, examples) if is_trained(cfg["arch"]) else ({}, None)
                # untrained rankers (BM25, word counts, random) are scored on the CPU at unpack
                entry["runs" if is_trained(cfg["arch"]) else "cpu_runs"].append(
                    {
                        "dir": f"runs/{run.dataset}/{run.variant.name}/seed{run.seed}",
                        "config": cfg,
                        "processed": T.processed_dir(cfg["dataset"]),
                        "embeddings": embeddings_file(cfg),
                        "planned_minutes": None if parts is None else sum(parts.values()),
                        "peak_mb": cost.peak_mb if cost else None,
                        # what the runner reprices from its own lease's measurement (trainings.repriced)
                        "planned_parts": parts,
                        "priced_from": {
                            "shape": shape(cfg),
                            "seconds_per_batch": cost.seconds_per_batch,
                            "dev_seconds": cost.dev_seconds,
                        }
                        if cost
                        else None,
                    }
                )
            entry["stacks"] = kit_stacks(entry["runs"], costs, examples)
        kit_records.append(entry)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    pruned = {
        f
        for rec in kit_records
        for run in rec["runs"]
        if run["config"].get("vocab")
        for f in (run["embeddings"], run["config"]["vocab"])
    }
    for f in sorted(files - pruned):
        copy_path(root() / f, out / f)
    for rec in kit_records:
        for run in rec["runs"]:
            if run["config"].get("vocab") and not (out / run["embeddings"]).exists():
                rec.setdefault("pruned", {})[run["embeddings"]] = prune_vectors(run, out)
    for src in SOURCES:
        copy_path(root() / src, out / src)
    for rec in kit_records:
        for bench in rec["bench"]:
            copy_path(root() / bench["script"], out / bench["script"])
        _carry_earlier(rec, out / "work" / rec["name"])
    shutil.copy2(Path(__file__).parent / "kit_runner" / "run.sh", out / "run.sh")
    (out / "run.sh").chmod(0o755)
    kit = {
        "records": kit_records,
        "priced_on": device,  # the GPU whose costs gave every planned_minutes (kit_costs)
        "commit": checkout_commit(root()),
        "built": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    write_text_atomic(out / KIT_FILE, json.dumps(kit, indent=1) + "\n")
    return kit


def kit_stacks(runs: list[dict], costs: dict, examples: dict) -> list[dict]:
    """The record's rows whose seeds train as one stacked model (``ansel train --seeds``) where the planner
    prices them so (``plan.row_stack``: a stack of as many seeds measured on the device, cheaper than
    the seeds alone): each its runs' folders, its planned device-minutes and measured peak memory."""
    from ansel.plan import row_stack, shape
    from ansel.plan_stacks import row_key

    rows: dict[str, list[dict]] = {}
    for run in runs:
        rows.setdefault(row_key(run["config"]), []).append(run)
    stacks = []
    for seeds in rows.values():
        cfg = seeds[0]["config"]
        if len(seeds) > 1 and isinstance(parts := row_stack(cfg, len(seeds), costs, examples), dict):
            stacks.append(
                {
                    "dirs": [r["dir"] for r in sorted(seeds, key=lambda r: r["config"]["seed"])],
                    "planned_minutes": sum(parts.values()),
                    "peak_mb": costs[shape(cfg)].stacks[len(seeds)].peak_mb,
                }
            )
    return stacks


def prune_vectors(run: dict, out: Path) -> str:
    """Corpus vectors that keep their own words (``keep_vector_words``: 85k x 300 for TREC-QA, over
    what the device tool carries) cut to the words of the run's dataset: a word no text of it holds
    is never looked up, so every text encodes to the same vectors. The embedding table is smaller,
    so the random draws of the layers initialised after it differ from a run on the whole table
    (another draw of the same seed's distribution); vectors still over ``HALF_ABOVE_MB`` travel as
    float16. The record's README says which runs and how."""
    import numpy as np

    from ansel.data.canonical import Dataset
    from ansel.data.vocab import Vocab

    ds = Dataset.load(root() / run["processed"])
    used = {t for tokens in (*ds.questions.tokens, *ds.answers.tokens) for t in tokens}
    vocab, vectors = Vocab.load(root() / run["config"]["vocab"]), np.load(root() / run["embeddings"])
    keep = [0, 1] + [i for i, t in enumerate(vocab.tokens) if i > 1 and t in used]
    (out / run["embeddings"]).parent.mkdir(parents=True, exist_ok=True)
    Vocab([vocab.tokens[i] for i in keep]).save(out / run["config"]["vocab"])
    cut = vectors[keep]
    note = f"{len(keep)} of {len(vocab)} words (those of {run['config']['dataset']}'s texts)"
    if cut.nbytes > HALF_ABOVE_MB * 2**20:  # still too large to travel: float16 there, float32 in the model
        cut = cut.astype(np.float16)
        note += (
            f", stored as float16 (relative rounding <= 2^-11; the model reads them as float32): "
            f"{cut.nbytes / 2**20:.0f} MiB"
        )
    np.save(out / run["embeddings"], cut)
    return note


def _carry_earlier(rec: dict, work: Path) -> None:
    """What earlier leases of the record left (``reports/device/<record>/``): finished runs are kept,
    unfinished ones resume from their state.pt; measured costs are not measured again."""
    earlier = root() / DEVICE_DIR / rec["name"]
    for run in rec["runs"]:
        for f in (earlier / run["dir"]).glob("*") if (earlier / run["dir"]).is_dir() else []:
            copy_path(f, work / run["dir"] / f.name)
    for f in earlier.glob("costs/*") if rec["measure"] else []:  # the costs and the log they extend
        copy_path(f, work / "costs" / f.name)
    for item in rec["step_times"]:  # a table's steps timed by an earlier lease are not timed again
        if (earlier / item["file"]).exists():
            copy_path(earlier / item["file"], work / item["file"])
    if rec.get("speed"):  # shapes an earlier lease timed in every precision: the runner goes on after them
        timed = {
            key: entry
            for f in sorted(earlier.glob("bench/speed*.json"))
            for key, entry in read_json(f).items()
            if set(rec["speed"]["precisions"]) <= {*entry["variants"], *entry["failed"]}
        }
        if timed:
            (work / "bench").mkdir(parents=True, exist_ok=True)
            write_text_atomic(work / "bench" / "speed.json", json.dumps(timed, indent=1) + "\n")
