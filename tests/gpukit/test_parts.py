"""The kit's parts on their own: vectors cut to a dataset's words, the runner's admission rule, the
archive split into parts the device tool brings back."""

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ansel.data.canonical import Dataset
from ansel.data.vocab import Vocab
from ansel.records import kit_pack
from ansel.records.kit_runner import archive, commands, trainings
from ansel.records.kit_runner.lease import Lease
from ansel.records.kit_unpack import read_archive


@pytest.fixture
def corpus_run(tmp_path, monkeypatch):
    """A processed dataset whose texts hold 'a b c' and corpus vectors that also know 'x', 'y'."""
    monkeypatch.setattr(kit_pack, "root", lambda: tmp_path)
    questions = pd.DataFrame({"qid": ["q1"], "text": ["a b"], "tokens": [["a", "b"]], "category": [None]})
    answers = pd.DataFrame({"aid": ["a1"], "text": ["c"], "tokens": [["c"]]})
    cands = pd.DataFrame({"qid": ["q1"], "aid": ["a1"], "label": [1]})
    Dataset("d", questions, answers, {"train": cands}).save(tmp_path / "data/processed/d")
    (tmp_path / "data/embeddings/d").mkdir(parents=True)
    Vocab(["<pad>", "<unk>", "x", "a", "y", "b", "c"]).save(tmp_path / "data/embeddings/d/v-4.vocab.json")
    vectors = np.arange(28, dtype=np.float32).reshape(7, 4)
    np.save(tmp_path / "data/embeddings/d/v-4.npy", vectors)
    run = {
        "processed": "data/processed/d",
        "embeddings": "data/embeddings/d/v-4.npy",
        "config": {"dataset": "d", "vocab": "data/embeddings/d/v-4.vocab.json"},
    }
    return run, vectors


def test_a_kit_prices_its_runs_on_one_gpus_costs(tmp_path, monkeypatch):
    """A shape the CPU's paper-scale records measured, and no GPU, is unmeasured for a kit (its CPU hours
    would keep the runner from ever starting it). A user's audit: the kit took every GPU's costs, the folder
    read last winning a shape (an H100 speed entry's over the H200's), so its planned minutes and the
    runner's pacing added two GPUs' minutes. One GPU now prices the whole kit: the one whose costs price the
    most of the records' presets' trained runs (as ``ansel plan --device cuda`` picks it)."""
    from ansel import plan
    from ansel.config import load
    from ansel.targets import Run, Variant

    config = load(preset="smoke")
    cnn_en, cnn_zh, lstm_en, lstm_zh = (
        Run(d, Variant(m), 1).config(config) for m in ("qa_cnn", "qa_lstm") for d in ("synthetic_en", "synthetic_zh")
    )
    sources = []
    for name, device, cfgs in (
        ("cpu", "cpu/AVX512", (cnn_en, cnn_zh, lstm_en, lstm_zh)),
        ("h200", "cuda/NVIDIA H200", (cnn_en, cnn_zh, lstm_en)),
        ("h200-later", "cuda/NVIDIA H100", (cnn_en, lstm_zh)),  # read last
    ):
        (tmp_path / name / "costs").mkdir(parents=True)
        (tmp_path / name / "costs/c.json").write_text(
            json.dumps({plan.shape(c): {"device": device, "seconds_per_batch": 1.0, "dev_seconds": 1.0} for c in cfgs})
        )
        sources.append(tmp_path / name)
    monkeypatch.setattr(plan, "default_sources", lambda: sources)
    device, costs = kit_pack.kit_costs([config])
    assert device == "cuda/NVIDIA H200" and {c.device for c in costs.values()} == {device}
    assert set(costs) == {plan.shape(c) for c in (cnn_en, cnn_zh, lstm_en)}  # lstm_zh: the H100's alone


def test_vectors_are_cut_to_the_datasets_words_with_their_rows(tmp_path, corpus_run):
    run, vectors = corpus_run
    note = kit_pack.prune_vectors(run, tmp_path / "kit")
    kept = Vocab.load(tmp_path / "kit" / run["config"]["vocab"])
    cut = np.load(tmp_path / "kit" / run["embeddings"])
    assert kept.tokens == ["<pad>", "<unk>", "a", "b", "c"] and note.startswith("5 of 7 words")
    assert cut.dtype == np.float32 and (cut == vectors[[0, 1, 3, 5, 6]]).all()


def test_vectors_too_large_to_travel_go_as_float16(tmp_path, corpus_run, monkeypatch):
    run, vectors = corpus_run
    monkeypatch.setattr(kit_pack, "HALF_ABOVE_MB", 0)
    assert "float16" in kit_pack.prune_vectors(run, tmp_path / "kit")
    cut = np.load(tmp_path / "kit" / run["embeddings"])
    assert cut.dtype == np.float16 and np.allclose(cut, vectors[[0, 1, 3, 5, 6]], rtol=2**-11)


def test_a_run_is_admitted_only_if_it_should_end_before_the_deadline():
    run = {"planned_minutes": 1.0}
    assert not trainings.fits(run, 1, time.time() + 50)  # 60 s alone, 50 s left
    until = time.time() + 90
    assert trainings.fits(run, 1, until)
    assert not trainings.fits(run, 8, until)  # 8 at once on one GPU: 60 s x 8 / 2.4 = 200 s
    assert trainings.fits({"planned_minutes": None}, 8, until)  # unmeasured: tried


def started_at_once(monkeypatch) -> list[str]:
    """The runner's jobs, as it starts them, each finished at once: the folders of their first runs."""
    started: list[str] = []

    class Done:
        returncode = 0

        def poll(self):
            return 0

    monkeypatch.setattr(trainings, "start_job", lambda job, *_: started.append(job["runs"][0]["dir"]) or Done())
    return started


def test_shorter_runs_start_where_the_longest_would_not_end(tmp_path, monkeypatch):
    """The runs are tried longest first, but one that would not end before the deadline does not keep
    the shorter ones from starting; ``parallel`` is the GPU's sharing figure."""
    started = started_at_once(monkeypatch)
    runs = [
        {"dir": d, "planned_minutes": m, "peak_mb": None, "config": {"model": d, "train": {"epochs": 1}}}
        for d, m in (("long", 10.0), ("short", 1.0), ("blind", None))
    ]
    rec = {"name": "r", "runs": runs}
    out = trainings.run_trainings(rec, Lease(tmp_path, "", time.time() + 120, tmp_path / "log.txt"), "cpu", 1, tmp_path)
    assert started == ["short", "blind"] and out["runs"] == {
        "long": "not started",
        "short": "finished",
        "blind": "finished",
    }
    assert trainings.fits({"planned_minutes": 1.0}, 4, time.time() + 70, parallel=4)
    assert not trainings.fits({"planned_minutes": 1.0}, 4, time.time() + 70)  # 60 s x 4 / 2.4 = 100 s


def test_a_run_is_priced_again_from_the_costs_its_lease_measured(tmp_path, monkeypatch):
    """The kit prices a run from the costs known when it was packed (a speed entry's dev scoring scaled
    from 100 questions, say); the record's own ``measure`` times its shape here first: the training and
    dev-scoring parts follow the new figures, the rest stays, and a run that now fits starts."""
    started = started_at_once(monkeypatch)
    parts = {"training": 1.0, "dev scoring": 2.0, "checkpoints": 0.5}
    was = {"shape": "s", "seconds_per_batch": 0.1, "dev_seconds": 4.0}
    runs = [
        {
            "dir": d,
            "planned_minutes": 3.5,
            "peak_mb": None,
            "planned_parts": parts,
            "priced_from": {**was, "shape": d},
            "config": {"model": d, "train": {"epochs": 1}},
        }
        for d in ("measured", "unmeasured")
    ]
    (tmp_path / "costs").mkdir()
    measured = {"device": "cpu/AVX512", "seconds_per_batch": 0.2, "dev_seconds": 1.0}
    (tmp_path / "costs/cpu-AVX512.json").write_text(json.dumps({"measured": measured}))
    jobs = trainings.training_jobs({"runs": runs}, tmp_path, "cpu")
    assert {j["runs"][0]["dir"]: j["planned_minutes"] for j in jobs} == {
        "measured": pytest.approx(2.0 + 0.5 + 0.5),
        "unmeasured": 3.5,
    }
    on_gpu = trainings.training_jobs({"runs": runs}, tmp_path, "cuda")  # a CPU's cost never prices a GPU's run
    assert [j["planned_minutes"] for j in on_gpu] == [3.5, 3.5]
    lease = Lease(tmp_path, "", time.time() + 200, tmp_path / "log.txt")  # 3 minutes left: 3.5 does not fit
    out = trainings.run_trainings({"name": "r", "runs": runs}, lease, "cpu", 1, tmp_path)
    assert started == ["measured"] and out["runs"] == {"measured": "finished", "unmeasured": "not started"}
    assert (
        "1 runs priced again from the costs measured here: 3.5 planned device-minutes -> 3.0"
        in (tmp_path / "log.txt").read_text()
    )


def test_a_run_that_cannot_end_nor_come_back_is_stopped(tmp_path, monkeypatch):
    """At its pace so far a run ends after the deadline: stopped when its state.pt cannot come back,
    kept running when it can (a later kit resumes it)."""
    clock = [1000.0]
    monkeypatch.setattr(trainings.time, "time", lambda: clock[0])
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    job_log, state = run_dir / "job.log", run_dir / "state.pt"
    pace = trainings.EpochClock("m", epochs=25, state_bytes=100)
    until = 1000.0 + 200  # epochs of 20 s from here: epoch 2 at 1020 ends epoch 25 at 1480
    assert pace.hopeless(run_dir, until) is None  # nothing reported yet
    job_log.write_text("epoch 1: loss 1 dev MAP 0.5 (19.0s)\n")
    state.write_bytes(b"x" * 1000)
    assert pace.hopeless(run_dir, until) is None  # one epoch: no pace yet
    clock[0] += 20
    job_log.write_text(job_log.read_text() + "epoch 2: loss 1 dev MAP 0.5 (19.0s)\n")
    why = pace.hopeless(run_dir, until)
    assert why and "epoch 2 of 25" in why and "cannot come back" in why
    small = trainings.EpochClock("m", epochs=25, state_bytes=100)
    state.write_bytes(b"x" * 10)
    clock[0] = 1000.0
    small.hopeless(run_dir, until)
    clock[0] += 20
    job_log.write_text(job_log.read_text() + "epoch 3: loss 1 dev MAP 0.5 (19.0s)\n")
    assert small.hopeless(run_dir, until) is None  # its state comes back
    quick = trainings.EpochClock("m", epochs=4, state_bytes=100)
    state.write_bytes(b"x" * 1000)
    quick.hopeless(run_dir, until)
    clock[0] += 20
    job_log.write_text(job_log.read_text() + "epoch 4: loss 1 dev MAP 0.5 (19.0s)\n")
    assert quick.hopeless(run_dir, until) is None  # it ends in time
    stack_dir = tmp_path / "stack"  # a stack of 20 seeds: every seed's state must come back to resume it
    stack_dir.mkdir()
    (stack_dir / "state.pt").write_bytes(b"x" * 10)
    stack = trainings.EpochClock("m", epochs=25, state_bytes=100, seeds=20)
    clock[0] = 1000.0
    (stack_dir / "job.log").write_text("seed 1: epoch 1: loss 1\nseed 2: epoch 1: loss 1\n")
    stack.hopeless(stack_dir, until)
    clock[0] += 20
    (stack_dir / "job.log").write_text("seed 1: epoch 2: loss 1\nseed 2: epoch 2: loss 1\n")
    assert "its state (0 MiB) cannot come back" in stack.hopeless(stack_dir, until)


def test_an_earlier_leases_epochs_in_the_job_log_are_not_the_runs_pace(tmp_path, monkeypatch):
    """A kit carries a cut run's job.log from its earlier lease and the new training appends to it:
    its pace is read from where this training started (epochs 1-10 above it once made the pace
    one epoch per 3 minutes and stopped 5 runs that would have ended in time)."""
    clock = [1000.0]
    monkeypatch.setattr(trainings.time, "time", lambda: clock[0])
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    job_log = run_dir / "job.log"
    job_log.write_text("".join(f"epoch {e}: loss 1 dev MAP 0.5 (17.0s)\n" for e in range(1, 11)))
    (run_dir / "state.pt").write_bytes(b"x" * 1000)
    pace = trainings.EpochClock("m", epochs=25, since=job_log.stat().st_size, state_bytes=100)
    assert pace.hopeless(run_dir, 1000.0 + 500) is None
    for epoch in (1, 2, 3):
        clock[0] += 17
        job_log.write_text(job_log.read_text() + f"epoch {epoch}: loss 1 dev MAP 0.5 (17.0s)\n")
        assert pace.hopeless(run_dir, 1000.0 + 500) is None  # 25 epochs of 17 s end at 1425 + margin


def test_a_large_archive_comes_back_in_parts_that_join(tmp_path):
    kit = {"records": [{"name": "r", "runs": [{"dir": "runs/d/m/seed1"}]}]}
    (tmp_path / "kit.json").write_text(json.dumps(kit))
    run = tmp_path / "work/r/runs/d/m/seed1"
    run.mkdir(parents=True)
    (run / "metrics.json").write_text("{}")
    (run / "run.trec").write_bytes(np.random.default_rng(0).bytes(5000))  # incompressible
    parts = archive.archive(kit, tmp_path, tmp_path / "out", 0, part_bytes=1000)
    assert len(parts) > 1 and all(p.stat().st_size <= 1000 for p in parts)
    assert all(set(p.name) <= set("abcdefghijklmnopqrstuvwxyz0123456789._-TZ") for p in parts)
    with read_archive(parts) as tar:
        assert "r/runs/d/m/seed1/run.trec.gz" in tar.getnames()


def test_unpack_refuses_a_cut_or_foreign_archive_naming_it(tmp_path):
    import tarfile

    from ansel.records.kit_unpack import unpack

    cut = tmp_path / "record-r-1.tar.gz.part00"
    cut.write_bytes(b"\x1f\x8b\x08\x00" + b"0" * 50)
    with pytest.raises(SystemExit, match="part00: not a whole kit archive"):
        unpack([cut], dest=tmp_path / "out")
    foreign = tmp_path / "other.tar.gz"
    with tarfile.open(foreign, "w:gz") as tar:
        tar.add(cut, arcname="x")
    with pytest.raises(SystemExit, match="other.tar.gz: no kit.json"):
        unpack([foreign], dest=tmp_path / "out")
    with pytest.raises(SystemExit, match="no such file: .*missing"):
        unpack([tmp_path / "missing.tar.gz"], dest=tmp_path / "out")


def test_a_figure_of_a_models_weights_takes_the_checkouts_weights_of_that_same_run(tmp_path, monkeypatch):
    """Attention maps read model.pt, which no record keeps: ``ansel collect-record`` links the checkout's weights
    into the staged run where the checkout trained that run (same config), and names them otherwise."""
    from ansel.records.render import link_weights
    from ansel.targets import Run, Variant

    checkout, stage, run = tmp_path / "checkout", tmp_path / "stage", Run("wikiqa", Variant("m"), 1)
    monkeypatch.setenv("ANSEL_ROOT", str(checkout))
    for d in (checkout, stage):
        (d / run.dir).mkdir(parents=True)
        (d / run.dir / "config.json").write_text(json.dumps({"seed": 1, "lr": 0.1}))
    named = f"{run.dir}/model.pt (weights: a record keeps none"
    assert link_weights(run, stage).startswith(named)  # the checkout has no weights of it
    (checkout / run.dir / "model.pt").write_bytes(b"weights")
    (checkout / run.dir / "config.json").write_text(json.dumps({"lr": 0.1, "seed": 1}, indent=2))  # same config
    assert link_weights(run, stage) is None and (stage / run.dir / "model.pt").read_bytes() == b"weights"
    assert link_weights(run, stage) is None  # a second figure of the run
    other = tmp_path / "other"
    (other / run.dir).mkdir(parents=True)
    (other / run.dir / "config.json").write_text(json.dumps({"seed": 1, "lr": 0.2}))  # trained otherwise
    assert link_weights(run, other).startswith(named) and not (other / run.dir / "model.pt").exists()
    assert link_weights(run, tmp_path / "empty") is None  # the run itself missing: named as a run already


def test_a_run_keeping_its_last_epoch_is_evaluated_at_it_too_and_carries_its_files(tmp_path):
    """train.keep_last (aMV-LSTM's WikiQA runs): the kit evaluates the last epoch after the selected one
    (ansel evaluate --last); a run without it is not."""
    run = {"processed": "data/processed/d", "embeddings": None, "config": {"train": {"keep_last": True}}}
    lines = commands.run_commands(run, tmp_path / "r", tmp_path, threads=1)
    assert [c[c.index("ansel.cli") + 1 : c.index("ansel.cli") + 2] for c in lines] == [
        ["train"],
        ["evaluate"],
        ["evaluate"],
    ]
    assert lines[2][-1] == "--last" and "--last" not in lines[1]
    assert len(commands.run_commands({**run, "config": {"train": {}}}, tmp_path / "r", tmp_path, threads=1)) == 2


def test_a_rows_seeds_priced_as_a_stack_run_as_one_job_while_none_has_finished(tmp_path, monkeypatch):
    """A stack of the kit (``kit_pack.kit_stacks``) is one job at its own planned minutes, admitted like
    a run; once one of its seeds finished (an earlier lease), the others go alone."""
    started = []

    class Done:
        returncode = 0

        def poll(self):
            return 0

    monkeypatch.setattr(
        trainings, "start_job", lambda job, *_: started.append([r["dir"] for r in job["runs"]]) or Done()
    )
    runs = [
        {"dir": f"runs/d/m/seed{k}", "planned_minutes": 1.0, "peak_mb": 10.0, "config": {"model": "m", "seed": k}}
        for k in (1, 2, 3)
    ]
    for run in runs:
        run["config"]["train"] = {"epochs": 1}
    rec = {
        "name": "r",
        "runs": runs,
        "stacks": [{"dirs": [r["dir"] for r in runs], "planned_minutes": 1.5, "peak_mb": 25.0}],
    }
    (job,) = trainings.training_jobs(rec, tmp_path)
    assert (len(job["runs"]), job["planned_minutes"], job["peak_mb"]) == (3, 1.5, 25.0)
    lease = Lease(tmp_path, "", time.time() + 80, tmp_path / "log.txt")
    assert not trainings.fits(job, 1, time.time() + 80)  # 90 s stacked, 80 s left: three 60 s runs would have fitted
    assert trainings.run_trainings(rec, lease, "cpu", 1, tmp_path)["runs"] == dict.fromkeys(
        (r["dir"] for r in runs), "not started"
    )
    lease.until = time.time() + 120
    out = trainings.run_trainings(rec, lease, "cpu", 1, tmp_path)
    assert started == [[r["dir"] for r in runs]] and set(out["runs"].values()) == {"finished"}
    assert "3 of 3 runs to train (3 in 1 stacks of seeds)" in (tmp_path / "log.txt").read_text()

    (tmp_path / "runs/d/m/seed2").mkdir(parents=True)
    monkeypatch.setattr(trainings, "finished", lambda d: d.name == "seed2")
    assert [[r["dir"] for r in j["runs"]] for j in trainings.training_jobs(rec, tmp_path)] == [
        ["runs/d/m/seed1"],
        ["runs/d/m/seed3"],
    ]


def test_a_stack_is_one_training_of_its_seeds_then_each_seeds_evaluation(tmp_path):
    run = {"processed": "data/processed/d", "embeddings": "v.npy", "config": {"train": {}}}
    train, *evaluations = commands.run_commands(run, tmp_path / "seed{seed}", tmp_path, threads=2, seeds=[1, 2])
    assert train[train.index("--seeds") + 1] == "1,2" and train[train.index("--config") + 1] == str(
        tmp_path / "seed1" / "config.json"
    )
    assert train[train.index("--run-dir") + 1] == str(tmp_path / "seed{seed}")
    assert train[train.index("--timings") + 1] == str(tmp_path / "seed{seed}" / "timings.json")
    assert [e[e.index("--run-dir") + 1] for e in evaluations] == [str(tmp_path / "seed1"), str(tmp_path / "seed2")]


def test_a_stacks_pace_is_read_from_its_seeds_epoch_lines(tmp_path):
    (tmp_path / "job.log").write_text("seed 1: epoch 3: loss 1\nseed 2: epoch 4: loss 1\n")
    assert trainings.last_epoch(tmp_path / "job.log") == 4


def test_the_speed_entry_times_the_costliest_shapes_that_would_stack_but_have_no_stack_measured():
    from ansel.config import load
    from ansel.plan import Cost, shape
    from ansel.plan_stacks import Stack
    from ansel.targets import Run, Variant

    papers = {paper: {"tables": [], "figures": []} for paper in load()["papers"]}
    config = load(preset="smoke", papers={**papers, "smoke": {"tables": ["synthetic"], "figures": []}})
    cnn_en, cnn_zh, lstm_en = (
        Run(d, Variant(m), 1).config(config)
        for d, m in [("synthetic_en", "qa_cnn"), ("synthetic_zh", "qa_cnn"), ("synthetic_en", "qa_lstm")]
    )
    costs = {
        shape(cnn_en): Cost(1.0, 1.0, "cuda/X", "t", batches=10),
        shape(lstm_en): Cost(2.0, 1.0, "cuda/X", "t", batches=10),  # costlier, but LSTMs do not stack
        shape(cnn_zh): Cost(3.0, 1.0, "cuda/X", "t", batches=10, stacks={2: Stack(2, 1.0, "cuda/X", "t")}),
    }
    entry = kit_pack.speed_entry(config, {"top": 0, "stack_top": 5}, costs, "here")
    assert [(c["dataset"], c["model"]) for c in entry["configs"]] == [("synthetic_en", "qa_cnn")]
    assert "stack_top" not in entry and entry["seeds"] == 5


def test_the_kits_summary_prices_a_stack_as_one_job():
    from ansel.records.kit_summary import summary

    runs = [{"dir": f"runs/d/m/seed{k}", "planned_minutes": 2.0, "peak_mb": None} for k in (1, 2, 3)]
    stack = {"dirs": [r["dir"] for r in runs[:2]], "planned_minutes": 2.5, "peak_mb": None}
    rec = {"name": "r", "bench": [], "measure": None, "runs": runs, "stacks": [stack]}
    text = summary({"records": [rec], "priced_on": "cuda/X"}, Path("/nonexistent-kit"))
    assert (
        "the 3 left (2 in 1 stacks of seeds): 4.5 device-minutes on cuda/X one run or stack at a time for the 3" in text
    )


def test_a_speed_kit_carries_the_shapes_an_earlier_lease_timed_in_every_precision(tmp_path, monkeypatch):
    """The speed runner goes on after what its bench/speed.json holds: the kit gives it the shapes an
    earlier lease of the record timed in each of the entry's precisions (a failure counts as timed),
    from any of the record's bench/speed*.json; a shape timed in fewer precisions is timed again."""
    from ansel.records import kit_pack

    bench = tmp_path / "reports/device/sp/bench"
    bench.mkdir(parents=True)
    whole = {"variants": {"torch": {}, "bf16": {}}, "failed": {"fp32": "RuntimeError: ..."}}
    fewer = {"variants": {"fp32": {}, "bf16": {}}, "failed": {}}
    (bench / "speed.json").write_text(json.dumps({"a": fewer, "b": fewer}))
    (bench / "speed-20261128T162118Z.json").write_text(json.dumps({"a": whole}))
    monkeypatch.setattr(kit_pack, "root", lambda: tmp_path)
    rec = {
        "name": "sp",
        "runs": [],
        "measure": None,
        "step_times": [],
        "speed": {"precisions": ["torch", "fp32", "bf16"]},
    }
    kit_pack._carry_earlier(rec, tmp_path / "work")
    assert json.loads((tmp_path / "work/bench/speed.json").read_text()) == {"a": whole}
