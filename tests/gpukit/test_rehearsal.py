"""The GPU record kit rehearsed without a GPU: kit -> run.sh on the CPU under a Python that cannot
import the workflow's packages -> a stop mid-way and a resume to the same bytes -> unpack -> table."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from ansel.code_digest import checkout_commit
from ansel.records.kit_pack import pack
from ansel.records.kit_unpack import read_archive, unpack

pytestmark = pytest.mark.slow

# What the device image lacks (device tool's KINDS.md): any import of these fails under run.sh.
NOT_ON_DEVICE = ("snakemake", "dvc", "dvclive", "gensim", "jieba", "jsonschema", "bm25s", "nltk", "ranx")
BLOCKER = f"""import sys
class _NotOnDevice:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {NOT_ON_DEVICE!r}:
            raise ImportError(name + ": not on the GPU image")
sys.meta_path.insert(0, _NotOnDevice())
"""
RECORD = {
    "rehearsal": {
        "preset": "smoke",
        "config": {"seeds": 1, "scale": {"train": {"epochs": 12}}},
        "runs": {"items": {"smoke": ["synthetic", "learning_curves"]}},
    }
}


@pytest.fixture(scope="module", autouse=True)
def checkout(tmp_path_factory, repo_root):
    """This module's checkout (``ANSEL_ROOT``): links to the specs and sources of the one under test,
    so what `pack` makes by the workflow's rules (the synthetic corpora, their vectors) lands here and
    the suite leaves its own checkout as it found it. Not a git checkout: the kit's commit is the
    one under test's (``ANSEL_KIT_COMMIT``, as the kit's runner gives it to its jobs)."""
    home = tmp_path_factory.mktemp("checkout")
    for name in ("Snakefile", "params.yaml", "presets", "workflow", "src", "reports", "tests"):
        (home / name).symlink_to(repo_root / name)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANSEL_ROOT", str(home))
        mp.setenv("ANSEL_KIT_COMMIT", checkout_commit(repo_root) or "")
        yield home


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kit") / "gpu-kit"
    built = pack(["rehearsal"], out, RECORD)
    rec = built["records"][0]
    assert sorted(r["config"]["arch"] for r in rec["runs"]) == ["qa_cnn"] * 2 + ["qa_lstm"] * 2  # 2 datasets
    assert len(rec["cpu_runs"]) == 2  # random: scored on the CPU at unpack
    return out


def run_sh(kit: Path, out: Path, tmp: Path, *args: str, background: bool = False):
    (tmp / "blocker").mkdir(exist_ok=True)
    (tmp / "blocker" / "sitecustomize.py").write_text(BLOCKER)
    env = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(tmp / "blocker")}
    env.pop("ANSEL_ROOT", None)
    env.pop("ANSEL_KIT_COMMIT", None)  # the runner gives its jobs kit.json's
    cmd = ["bash", str(kit / "run.sh"), "--device", "cpu", "--jobs", "1", "--out", str(out), *args]
    if background:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def members(archive: Path) -> dict[str, bytes]:
    with read_archive([archive]) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def test_blocker_refuses_the_workflow_packages(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    done = subprocess.run(
        [sys.executable, "-c", "import snakemake"],
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "not on the GPU image" in done.stderr


@pytest.mark.ci  # run.sh's whole course, trainings and all: CI's, after the suite
def test_cut_resume_unpack_render(kit, tmp_path):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    shutil.copytree(kit, whole)
    shutil.copytree(kit, cut)
    printed = run_sh(whole, tmp_path / "out-whole", tmp_path)
    assert "4 of 4 runs to train" in printed
    (reference,) = (tmp_path / "out-whole").glob("record-rehearsal-*.tar.gz")
    expected = members(reference)
    runs = sorted({str(Path(n).parent) for n in expected if n.endswith("metrics.json")})

    # a stop once the first run has a finished epoch: as at the deadline, its state comes back
    proc = run_sh(cut, tmp_path / "out-cut", tmp_path, background=True)
    deadline = time.time() + 300
    while time.time() < deadline and not list((cut / "work").glob("rehearsal/runs/*/*/seed*/state.pt")):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    printed = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0, printed
    assert "cut" in printed
    (first,) = (tmp_path / "out-cut").glob("record-rehearsal-*.tar.gz")
    got = members(first)
    assert any(n.endswith("/state.pt") for n in got), sorted(got)
    done = sum(n.endswith("metrics.json") for n in got)
    assert done < 4

    # the second run.sh keeps what finished and resumes the cut run to the same bytes
    printed = run_sh(cut, tmp_path / "out-resume", tmp_path)
    assert f"{4 - done} of 4 runs to train" in printed
    (second,) = (tmp_path / "out-resume").glob("record-rehearsal-*.tar.gz")
    resumed = members(second)
    assert len(runs) == 4
    for run in runs:
        for name in ("metrics.json", "log.csv", "run.trec.gz", "config.json"):
            assert resumed[f"{run}/{name}"] == expected[f"{run}/{name}"], f"{run}/{name}"
    assert not any(n.endswith("/state.pt") for n in resumed)
    timings = json.loads(resumed[f"{runs[0]}/timings.json"])["train"]
    assert timings["device"] == "cpu" and timings["commit"]

    # unpacked as a record and rendered by the normal table rule
    dest = tmp_path / "reports-device"
    unpack([first], device_minutes=2.0, dest=dest, render=False)
    unpack([second], device_minutes=1.0, dest=dest)
    (placed,) = unpack([second], device_minutes=1.0, dest=dest)  # again: the same lease, not a third
    assert len(list(placed.glob("runs/*/*/seed1/metrics.json"))) == 6
    assert (placed / "runs/synthetic_en/random/seed1/metrics.json").exists()  # scored here
    table = (placed / "synthetic.md").read_text()
    assert "QA-CNN" in table and "Random" in table
    assert (placed / "learning_curves.png").exists()
    qa_cnn = json.loads((placed / "synthetic.json").read_text())["QA-CNN"]
    test_map = json.loads(resumed["rehearsal/runs/synthetic_en/qa_cnn/seed1/metrics.json"])["test"]["MAP"]
    assert qa_cnn["synthetic_en test MAP"]["mean"] == pytest.approx(test_map)
    assert {r["commit"] for r in qa_cnn["synthetic_en test MAP"]["provenance"]["runs"]} == {timings["commit"]}
    readme = (placed / "README.md").read_text()
    assert "leases: 2; device-minutes: 3.0" in readme and "(1 at a time: " in readme
    # the resumed kit carries the cut session's phases too: listed once, under the first lease
    assert readme.count("- train: ") == 2, readme
    assert readme.count(f", {torch.backends.cpu.get_cpu_capability()}), torch ") == 2, readme  # CPU (model, ISA)
    leases = json.loads((placed / "leases.json").read_text())
    assert [lease["device_minutes"] for lease in leases] == [2.0, 1.0]
    assert all((placed / "logs" / lease["archive"].replace(".tar.gz", ".txt")).exists() for lease in leases)


def test_unknown_record_and_key_named(tmp_path):
    from ansel.config import ConfigError
    from ansel.records.declared import declared_records

    with pytest.raises(ConfigError, match="no record 'nope'"):
        pack(["nope"], tmp_path / "kit", RECORD)
    bad = tmp_path / "records.yaml"
    bad.write_text("r: {preset: smoke, runz: {}}\n")
    with pytest.raises(
        ConfigError, match=r"records.yaml: r: unknown key .runz. \(typo of .runs.\?\); allowed: about, preset"
    ):
        declared_records(bad)


def test_a_record_with_runs_measures_only_their_shapes(tmp_path):
    """Without runs, `measure` takes every shape of the named datasets; with runs, only theirs (a lease's
    minutes go to pricing what the record trains next, not the other papers' shapes on that dataset)."""
    from ansel.plan import shape

    def measured(record):
        rec = pack(
            ["r"],
            tmp_path / "kit",
            {"r": {"preset": "smoke", "config": {"seeds": 1}, "measure": {"datasets": ["synthetic_en"]}, **record}},
        )["records"][0]
        return {(c["arch"], c["dataset"]) for c in rec["measure"]["configs"]}, rec

    everything, _ = measured({})
    assert {("qa_cnn", "synthetic_en"), ("qa_lstm", "synthetic_en")} <= everything
    own, rec = measured({"runs": {"items": {"smoke": ["synthetic"]}, "models": ["qa_lstm"]}})
    assert own == {("qa_lstm", "synthetic_en")}  # not qa_cnn's shape, nor the runs on synthetic_zh
    assert {shape(c) for c in rec["measure"]["configs"]} <= {shape(r["config"]) for r in rec["runs"]}


@pytest.mark.ci  # run.sh's whole course, trainings and all: CI's, after the suite
def test_a_tables_step_times_are_timed_with_its_runs_and_render_its_benchmark_column(tmp_path):
    """GGSA Table 3's seconds per batch: the kit times the rows' steps alone (before the trainings),
    the archive brings the file back, and the record's table reads it."""
    record = {"steps": {"preset": "smoke", "config": {"seeds": 1}, "runs": {"items": {"ggsa": ["table3"]}}}}
    kit = tmp_path / "gpu-kit"
    rec = pack(["steps"], kit, record)["records"][0]
    (item,) = rec["step_times"]
    assert item["file"] == "results/benchmarks/ggsa/table3.json" and len(item["configs"]) == 3
    printed = run_sh(kit, tmp_path / "out", tmp_path)
    assert "step-times results/benchmarks/ggsa/table3.json ok" in printed, printed
    (archive,) = (tmp_path / "out").glob("record-steps-*.tar.gz")
    timed = json.loads(members(archive)["steps/results/benchmarks/ggsa/table3.json"])
    assert timed["device"].startswith("cpu/") and sorted(timed["models"]) == sorted(item["configs"])
    (placed,) = unpack([archive], device_minutes=1.0, dest=tmp_path / "reports-device")
    cells = json.loads((placed / "table3.json").read_text())
    column = next(c for c in cells["GGSA"] if c.endswith("seconds_per_batch (benchmark)"))
    assert cells["GGSA"][column]["mean"] == pytest.approx(
        sum(timed["models"]["ggsa_ggsa_max_insuranceqa"]["seconds_per_batch"]) / timed["rounds"]
    )
    assert timed["device"] in (placed / "table3.md").read_text()


def test_the_speed_entry_times_each_precision_and_stack_and_the_planner_reads_its_costs(tmp_path):
    """The GPU speed entry rehearsed on the CPU: every shape of the items' runs (the models named, in
    their order) timed in each precision alone and stacked; its costs come back keyed by precision and
    are read by ``ansel plan``."""
    from ansel.plan import costs_by_device, shape

    spec = {"items": {"smoke": ["synthetic"]}, "models": ["qa_cnn"], "precisions": ["fp32", "bf16"]}
    record = {"sp": {"preset": "smoke", "config": {"seeds": 1}, "speed": {**spec, "top": 0, "seeds": 2}}}
    record["sp"]["speed"] |= {"batches": 1, "rounds": 2}  # dev scoring timed on the whole split: the default
    kit = tmp_path / "gpu-kit"
    entry = pack(["sp"], kit, record)["records"][0]["speed"]
    assert entry["dev_questions"] is None  # a draw scaled to the split overstates a scorer that encodes texts once
    assert [(c["model"], c["dataset"]) for c in entry["configs"]] == [
        ("qa_cnn", "synthetic_en"),
        ("qa_cnn", "synthetic_zh"),
    ]
    assert not any((kit / "data/embeddings").rglob("*.npy"))  # random initial vectors: timings only
    printed = run_sh(kit, tmp_path / "out", tmp_path)
    assert "sp: speed ok" in printed, printed
    (archive,) = (tmp_path / "out").glob("record-sp-*.tar.gz")
    speed = json.loads(members(archive)["sp/bench/speed.json"])
    for cfg in entry["configs"]:
        variants = speed[shape(cfg)]["variants"]
        assert speed[shape(cfg)]["dev_scale"] == 1.0
        assert sorted(variants) == ["bf16", "bf16 stacked x2", "fp32", "fp32 stacked x2"]
        assert len(variants["fp32"]["step_seconds"]) == 2 and variants["fp32"]["speedup"] == 1.0
        assert variants["fp32 stacked x2"]["seeds"] == 2 and "dev_seconds" not in variants["fp32 stacked x2"]
    (placed,) = unpack([archive], device_minutes=1.0, dest=tmp_path / "reports-device")
    (costs,) = costs_by_device([placed]).values()  # this CPU's
    for cfg in entry["configs"]:
        for p in ("fp32", "bf16"):
            at = {**cfg, "train": {**cfg["train"], "precision": p}}
            assert costs[shape(at)].seconds_per_batch == pytest.approx(
                speed[shape(cfg)]["variants"][p]["seconds_per_batch"]
            )
            assert costs[shape(at)].device.startswith("cpu/") and costs[shape(at)].batches >= 1
            # the stack timed beside it prices the shape's rows of 2 seeds
            stacked = speed[shape(cfg)]["variants"][f"{p} stacked x2"]["seconds_per_batch"]
            assert costs[shape(at)].stacks[2].seconds_per_batch == pytest.approx(stacked)


@pytest.mark.ci  # run.sh's whole course, trainings and all: CI's, after the suite
def test_a_rows_seeds_priced_as_a_stack_train_as_one_stacked_command(tmp_path, monkeypatch):
    """Where the device's costs price a row's seeds as one stack (a stack measured beside its alone cost,
    cheaper than the seeds alone), the kit trains them in one ``ansel train --seeds`` and writes each
    seed's run as alone; a row with no measured stack trains its seeds alone, as before."""
    from ansel.plan import Cost, shape
    from ansel.plan_stacks import Stack
    from ansel.records import kit_pack
    from ansel.targets import Run, Variant

    record = {
        "st": {
            "preset": "smoke",
            "config": {"seeds": 2, "scale": {"train": {"epochs": 3}}},
            "runs": {"items": {"smoke": ["synthetic"]}, "models": ["qa_cnn"]},
        }
    }

    def costs(configs):  # a stack of 2 measured for synthetic_en's QA-CNN only (a rehearsal's figures, not a device's)
        cfg = Run("synthetic_en", Variant("qa_cnn"), 1).config(configs[0])
        stack = Stack(2, 0.012, "cuda/rehearsal", "test")
        return "cuda/rehearsal", {shape(cfg): Cost(0.01, 0.1, "cuda/rehearsal", "test", batches=10, stacks={2: stack})}

    monkeypatch.setattr(kit_pack, "kit_costs", costs)
    kit = tmp_path / "gpu-kit"
    rec = pack(["st"], kit, record)["records"][0]
    en = [r["dir"] for r in rec["runs"] if r["config"]["dataset"] == "synthetic_en"]
    assert [s["dirs"] for s in rec["stacks"]] == [sorted(en)] and len(rec["runs"]) == 4
    printed = run_sh(kit, tmp_path / "out", tmp_path)
    assert "4 of 4 runs to train (2 in 1 stacks of seeds)" in printed, printed
    assert "and 1 more seeds, stacked: finished" in printed
    (archive,) = (tmp_path / "out").glob("record-st-*.tar.gz")
    got = members(archive)
    for run in rec["runs"]:
        timings = json.loads(got[f"st/{run['dir']}/timings.json"])["train"]
        assert timings.get("stacked_seeds") == (2 if run["dir"] in en else None), run["dir"]
        assert f"st/{run['dir']}/metrics.json" in got and f"st/{run['dir']}/run.trec.gz" in got
    log = (kit / "work/st" / sorted(en)[0] / "job.log").read_text()  # the stack's output: its first seed's
    assert "seed 1: epoch 3:" in log and "seed 2: epoch 3:" in log
    (placed,) = unpack([archive], device_minutes=1.0, dest=tmp_path / "reports-device")
    assert len(list(placed.glob("runs/synthetic_en/qa_cnn/seed*/metrics.json"))) == 2
