"""Trainer: dev selection, atomic per-epoch state, exact resume after an interruption or a kill;
wall times in a timings file of their own; a training split without a positive pair refused."""

import json
import os
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import ansel.training.epoch as epoch_mod
import ansel.training.trainer as train_mod
from ansel import cli
from ansel.config import load, model_config, run_config
from ansel.data.batches import RunData
from ansel.data.vocab import Vocab
from ansel.evaluation.config import EvalConfig
from ansel.evaluation.evaluate import DEV_SCORES, dev_evaluator, evaluate_run, save_dev_scores
from ansel.models.io import load_model
from ansel.settings import parse
from ansel.training.config import TrainConfig
from tests.data.reference_loading import assert_loads_as_reference
from tests.tiny_run import train_args
from tests.training.corpus import processed_synthetic

SMALL = {"train": 120, "dev": 30, "test": 30}


@pytest.fixture(scope="module")
def processed(tmp_path_factory) -> Path:
    return processed_synthetic(tmp_path_factory.mktemp("raw"), tmp_path_factory.mktemp("processed"), SMALL)


def test_the_corpus_loads_for_a_run_as_the_per_text_references_give_it(processed):
    assert_loads_as_reference(processed)


def cfg(model="qa_cnn", epochs=3, **train):
    c = run_config(load(), "synthetic_en", model, 1)
    c["embeddings"] = None
    c["eval"]["splits"] = ["dev", "test"]  # the fixture corpus has no test1/test2
    c["train"].update(epochs=epochs, batch_size=16, **train)
    return c


def _data(c, processed):
    return RunData.load(processed, Vocab.load(processed / "vocab.json"), c["max_len_q"], c["max_len_a"])


def _train(c, processed, run_dir, timings=None):
    data = _data(c, processed)
    return train_mod.train_run(
        c, data, None, run_dir, dev_evaluator(data, "dev", EvalConfig(["dev"])), progress=False, timings=timings
    )


def _monitored(c, data, run_dir, ev):
    """A run with test as its monitor split (``train.monitor_splits``)."""
    return train_mod.train_run(
        c,
        data,
        None,
        run_dir,
        dev_evaluator(data, "dev", ev),
        progress=False,
        monitors={"test": dev_evaluator(data, "test", ev)},
    )


def _weights(run_dir):
    return torch.load(run_dir / "model.pt", weights_only=True)


def test_outputs_and_dev_selection(processed, tmp_path):
    _train(cfg(), processed, tmp_path)
    log = pd.read_csv(tmp_path / "log.csv")
    assert list(log.epoch) == [1, 2, 3] and not (tmp_path / "state.pt").exists()
    assert not {"seconds", "seconds_per_batch"} & set(log)  # wall time only in the timings file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "dvclive", "log.csv", "model.pt"]
    assert json.loads((tmp_path / "config.json").read_text())["model"] == "qa_cnn"
    # model.pt holds the dev-best epoch's weights: re-scoring dev reproduces the best logged MAP
    from ansel.evaluation.evaluate import evaluate_split

    c = cfg()
    model = load_model(c, len(Vocab.load(processed / "vocab.json")), tmp_path / "model.pt")
    _, dev = evaluate_split(model, _data(c, processed), "dev", EvalConfig(["dev"]))
    assert dev["MAP"] == pytest.approx(log.dev_MAP.max(), abs=1e-9)


def test_the_word_vectors_are_freed_once_the_model_holds_its_copy(processed, tmp_path):
    """No array of the run's vectors lives through the epochs beside the model's own copy."""
    c = cfg(epochs=1)
    data = _data(c, processed)
    vectors = [np.ones((data.vocab_size, c["hparams"]["embedding_dim"]), dtype=np.float32)]
    array = weakref.ref(vectors[0])
    evaluate, alive = dev_evaluator(data, "dev", EvalConfig(["dev"])), []

    def evaluate_dev(model):
        alive.append(array() is not None)
        return evaluate(model)

    train_mod.train_run(c, data, vectors.pop(), tmp_path, evaluate_dev, progress=False)
    assert alive == [False]


def test_pairwise_epochs_log_the_mean_scores_of_positives_and_negatives(processed, tmp_path, monkeypatch):
    """pos_score / neg_score: what the hinge loss saw where the epoch ended, so a loss stuck at its
    margin shows whether the scores collapsed (reports/apnet-training-collapse.md)."""
    seen = []
    real = epoch_mod.pair_loss
    monkeypatch.setattr(
        epoch_mod, "pair_loss", lambda s, n, t: seen.append((s.detach().mean(), n.detach().mean())) or real(s, n, t)
    )
    c = cfg(epochs=1, loss="hinge", margin=0.2)
    c["train"].update(batch_size=4, max_batches=None)  # enough batches for a tenth of them
    _train(c, processed, tmp_path)
    row = pd.read_csv(tmp_path / "log.csv").iloc[0]
    end = seen[-max(1, len(seen) // 10) :]  # the epoch's last tenth of batches
    assert len(seen) >= 10 and len(end) == len(seen) // 10
    assert row.pos_score == pytest.approx(float(np.mean([float(p) for p, _ in end])), abs=1e-6)
    assert row.neg_score == pytest.approx(float(np.mean([float(n) for _, n in end])), abs=1e-6)


def test_evaluation_reuses_the_selected_epochs_dev_scores_and_equals_a_fresh_one(processed, tmp_path, monkeypatch):
    import ansel.evaluation.evaluate as ev

    trained = _train(cfg(), processed, tmp_path)
    save_dev_scores(trained.dev_scores, "dev", tmp_path / DEV_SCORES)
    scored = []
    real = ev.score_split
    monkeypatch.setattr(
        ev, "score_split", lambda model, data, split: (scored.append(split), real(model, data, split))[1]
    )
    reused = evaluate_run(tmp_path, processed)
    assert scored == ["test"]  # dev came from the training's selected epoch
    trec = (tmp_path / "run.trec").read_text()
    assert reused["dev"]["MAP"] == pd.read_csv(tmp_path / "log.csv").dev_MAP.max()
    # other scoring code: the stored dev scores are stale, every split is scored again, same numbers
    monkeypatch.setattr(ev, "scoring_digest", lambda: "changed")
    scored.clear()
    assert evaluate_run(tmp_path, processed) == reused
    assert scored == ["dev", "test"]
    assert (tmp_path / "run.trec").read_text() == trec


def test_evaluation_reuses_the_monitor_splits_scores_by_the_selected_weights(processed, tmp_path, monkeypatch):
    """Beside dev's, the selected epoch's monitor scores are kept where its weights made them: at each
    epoch's end, or at a cadence's evaluation on the epoch's last step (4 steps an epoch: every 2nd
    step does, every 3rd only at step 12). Evaluating the run reuses them, with the same bytes as
    scoring every split again."""
    import ansel.evaluation.evaluate as evaluate

    ev, scored, real, digest = EvalConfig(["dev", "test"]), [], evaluate.score_split, evaluate.scoring_digest
    monkeypatch.setattr(evaluate, "score_split", lambda *a: (scored.append(a[2]), real(*a))[1])
    for name, extra in (("epochs", {}), ("cadence", {"monitor_every": 2}), ("off_cadence", {"monitor_every": 3})):
        c = cfg(epochs=3, monitor_splits=["test"], max_batches=4, **extra)
        data, run = _data(c, processed), tmp_path / name
        trained = _monitored(c, data, run, ev)
        selected = int(pd.read_csv(run / "log.csv").dev_MAP.idxmax()) + 1
        kept = name != "off_cadence" or selected == 3
        assert set(trained.monitor_scores) == ({"test"} if kept else set()), name
        save_dev_scores(trained.dev_scores, "dev", run / DEV_SCORES, monitors=trained.monitor_scores)
        scored.clear()
        reused = evaluate_run(run, processed)
        assert scored == ([] if kept else ["test"]), name
        trec = (run / "run.trec").read_bytes()
        monkeypatch.setattr(evaluate, "scoring_digest", lambda: "changed")  # every split scored again
        assert evaluate_run(run, processed) == reused and (run / "run.trec").read_bytes() == trec
        monkeypatch.setattr(evaluate, "scoring_digest", digest)


def test_an_untrainable_model_keeps_no_dev_scores_and_is_evaluated_from_its_weights(processed, tmp_path):
    trained = _train(cfg(model="random"), processed, tmp_path)
    assert trained.epochs == 0 and trained.dev_scores is None
    save_dev_scores(trained.dev_scores, "dev", tmp_path / DEV_SCORES)
    metrics = evaluate_run(tmp_path, processed)
    assert set(metrics) >= {"dev", "test"} and 0 <= metrics["test"]["MAP"] <= 1


def test_a_run_evaluated_against_another_datasets_tables_is_refused_naming_both(processed, tmp_path):
    import shutil

    run = tmp_path / "run"
    save_dev_scores(_train(cfg(model="random"), processed, run).dev_scores, "dev", run / DEV_SCORES)
    other, own = tmp_path / "data/processed/wikiqa", tmp_path / "data/processed/synthetic_en"
    for d in (other, own):
        shutil.copytree(processed, d)
    with pytest.raises(
        ValueError,
        match=r"a run of dataset 'synthetic_en', but .*wikiqa holds 'wikiqa': "
        r"evaluate it with .*data/processed/synthetic_en",
    ):
        evaluate_run(run, other)
    assert not (run / "metrics.json").exists()
    assert evaluate_run(run, own) == evaluate_run(run, processed)


def test_batch_log_writes_every_steps_loss_and_mean_scores(processed, tmp_path, monkeypatch):
    """train.batch_log: batches.csv holds each training step's loss and its batch's mean s+ / s-
    (the first steps of a hinge loss that comes to sit at its margin), steps counted over the run."""
    seen = []
    real = epoch_mod.pair_loss
    monkeypatch.setattr(
        epoch_mod,
        "pair_loss",
        lambda s, n, t: seen.append((s.detach().mean(), n.detach().mean(), real(s, n, t))) or seen[-1][2],
    )
    c = cfg(epochs=2, loss="hinge", margin=0.2, batch_log=True, max_batches=3)
    _train(c, processed, tmp_path)
    log = pd.read_csv(tmp_path / "batches.csv")
    assert list(log.columns) == ["epoch", "step", "loss", "pos_score", "neg_score"]
    assert list(log.epoch) == [1, 1, 1, 2, 2, 2] and list(log.step) == [1, 2, 3, 4, 5, 6]
    assert log.loss.tolist() == pytest.approx([float(x.detach()) for _, _, x in seen], abs=1e-6)
    assert log.pos_score.tolist() == pytest.approx([float(p) for p, _, _ in seen], abs=1e-6)
    assert log.neg_score.tolist() == pytest.approx([float(n) for _, n, _ in seen], abs=1e-6)
    epochs = pd.read_csv(tmp_path / "log.csv")
    assert epochs.loss.tolist() == pytest.approx(log.groupby("epoch").loss.mean().tolist(), abs=1e-6)
    _train(cfg(epochs=1, max_batches=2), processed, tmp_path)  # without it, none (nor an earlier run's)
    assert not (tmp_path / "batches.csv").exists()


def test_max_batches_cuts_every_epoch_to_that_many_steps(processed, tmp_path, monkeypatch):
    steps = []
    step = torch.optim.RMSprop.step
    monkeypatch.setattr(torch.optim.RMSprop, "step", lambda self, *a, **k: (steps.append(1), step(self, *a, **k))[1])
    _train(cfg(epochs=2, optimizer="rmsprop", max_batches=3), processed, tmp_path / "cut")
    assert len(steps) == 2 * 3  # 120 training questions' positives would take 8+ batches of 16
    steps.clear()
    _train(cfg(epochs=1, optimizer="rmsprop", max_batches=None), processed, tmp_path / "all")
    assert len(steps) > 3


@pytest.mark.parametrize("schedule", ["constant", "inverse_epoch"])  # the resumed epoch's own learning rate
def test_interrupted_run_resumes_to_identical_results(processed, tmp_path, monkeypatch, capsys, schedule):
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    _train(cfg(lr_schedule=schedule, batch_log=True), processed, straight)

    real_log = train_mod._live_log

    def crash_after_epoch_2(live, row):
        if row["epoch"] == 2:
            raise KeyboardInterrupt  # after epoch 2's state was saved
        real_log(live, row)

    monkeypatch.setattr(train_mod, "_live_log", crash_after_epoch_2)
    timings = tmp_path / "timings/seed1.json"
    with pytest.raises(KeyboardInterrupt):
        _train(cfg(lr_schedule=schedule, batch_log=True), processed, resumed, timings)
    assert (resumed / "state.pt").exists() and not (resumed / "model.pt").exists() and not timings.exists()
    monkeypatch.setattr(train_mod, "_live_log", real_log)
    _train(cfg(lr_schedule=schedule, batch_log=True), processed, resumed, timings)
    assert "resuming from epoch 2 of 3" in capsys.readouterr().out

    a, b = _weights(straight), _weights(resumed)
    assert all(torch.equal(a[k], b[k]) for k in a)
    files = sorted(p.relative_to(straight) for p in straight.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(resumed) for p in resumed.rglob("*") if p.is_file())
    assert [f for f in files if (straight / f).read_bytes() != (resumed / f).read_bytes()] == []
    # the epochs timed before the interruption survive it, in state.pt
    epochs = json.loads(timings.read_text())["train"]["epochs"]
    assert [e["epoch"] for e in epochs] == [1, 2, 3] and all(e["seconds"] > 0 and e["batches"] > 0 for e in epochs)


def test_state_from_another_config_is_refused(processed, tmp_path, monkeypatch):
    monkeypatch.setattr(train_mod, "_live_log", lambda live, row: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        _train(cfg(), processed, tmp_path)
    monkeypatch.undo()
    with pytest.raises(RuntimeError, match="different config"):
        _train(cfg(margin=0.5), processed, tmp_path)
    finished = tmp_path / "finished"
    _train(cfg(), processed, finished)
    (tmp_path / "state.pt").write_bytes((finished / "model.pt").read_bytes())  # weights, not a state
    with pytest.raises(RuntimeError, match=r"state.pt: not a training state \(no config fingerprint"):
        _train(cfg(), processed, tmp_path)


@pytest.mark.parametrize("other", ["code", "data", "vectors"])
def test_a_state_saved_from_other_code_data_or_vectors_is_refused_naming_it(processed, tmp_path, monkeypatch, other):
    """Resuming it would mix two trainings: the run's later epochs on another model's weights."""
    from tests.training.interrupt import interrupt_after_epoch

    c = cfg(epochs=2)
    data = _data(c, processed)
    shape = (data.vocab_size, c["hparams"]["embedding_dim"])

    def train(digest="data", vectors=np.ones(shape, dtype=np.float32)):
        train_mod.train_run(
            c,
            data,
            vectors,
            tmp_path,
            dev_evaluator(data, "dev", EvalConfig(["dev"])),
            progress=False,
            trained_on=digest,
        )

    with monkeypatch.context() as m, pytest.raises(KeyboardInterrupt):
        interrupt_after_epoch(m, 1)
        train()
    if other == "code":
        monkeypatch.setattr(train_mod, "train_code_digest", lambda arch: "edited since")
    named = {"code": "training code", "data": "processed data", "vectors": "word vectors"}[other]
    with pytest.raises(train_mod.StateMismatchError, match=f"state.pt: saved by a run of other {named}"):
        train(
            **{"data": {"digest": "preprocessed again"}, "vectors": {"vectors": np.zeros(shape, np.float32)}}.get(
                other, {}
            )
        )
    assert (tmp_path / "state.pt").exists()  # refused, not overwritten


def test_ansel_train_refuses_a_state_of_another_config_in_one_line(processed, tmp_path, monkeypatch):
    from tests.tiny_run import tiny_qa_cnn
    from tests.training.interrupt import interrupt_after_epoch

    with monkeypatch.context() as m, pytest.raises(SystemExit):  # ansel's Ctrl-C exit
        interrupt_after_epoch(m, 1)
        cli.main(train_args(tiny_qa_cnn(), processed, tmp_path, "--no-dvclive"))
    with pytest.raises(SystemExit) as refused:
        cli.main(train_args(tiny_qa_cnn(lr=0.5), processed, tmp_path, "--no-dvclive"))
    assert (
        str(refused.value)
        == f"ansel train: {tmp_path / 'state.pt'}: saved by a run with a different config; delete it to start over"
    )


def test_sampled_max_negative_is_the_highest_scoring(processed):
    import numpy as np

    from ansel.data.batches import RunData
    from ansel.evaluation.scoring import score
    from ansel.models import build_model
    from ansel.training.sampler import NegativeSampler

    c = cfg()
    vocab = Vocab.load(processed / "vocab.json")
    data = RunData.load(processed, vocab, c["max_len_q"], c["max_len_a"])
    cands, qi, ai = data.pairs("train")
    sampler = NegativeSampler(qi, ai, cands.label.to_numpy(), "sampled_max", n=50)
    model = build_model("qa_cnn", {"embedding_dim": 16, "filters": 8}, len(vocab))
    q_batch = np.unique(qi)[:6]
    chosen = sampler.sample(q_batch, np.random.default_rng(7), model, data.q_ids, data.a_ids)
    # replay the same draws: the chosen answer scores highest among its 50 candidates
    rng = np.random.default_rng(7)
    draws = np.stack([sampler._random(int(q), 50, rng) for q in q_batch])
    s = score(model, data.q_ids, data.a_ids, np.repeat(q_batch, 50), draws.reshape(-1)).reshape(6, 50)
    assert np.array_equal(chosen, draws[np.arange(6), s.argmax(1)])
    positives = sampler.positives
    assert all(int(a) not in positives.get(int(q), set()) for q, a in zip(q_batch, chosen))


@pytest.mark.slow
def test_killed_training_process_resumes_from_last_epoch(processed, tmp_path):
    """SIGKILL a real `ansel train` mid-run; the rerun resumes and ends where an uninterrupted run does."""
    c = cfg(model="qa_lstm", epochs=6)
    c["hparams"].update(embedding_dim=16, hidden=16)

    def command(run_dir):
        return [sys.executable, "-m", "ansel.cli", *train_args(c, processed, run_dir)]

    straight, killed = tmp_path / "straight", tmp_path / "killed"
    cli.main(command(straight)[3:])  # uninterrupted, in this process: the same command, no start-up to wait for
    proc = subprocess.Popen(command(killed), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 300
    while not (killed / "state.pt").exists():
        assert proc.poll() is None and time.time() < deadline, "training ended before its first checkpoint"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    saved = torch.load(killed / "state.pt", weights_only=True)["epoch"]
    assert saved < 6
    out = subprocess.run(command(killed), check=True, capture_output=True, text=True).stdout
    assert f"resuming from epoch {saved} of 6" in out
    a, b = _weights(straight), _weights(killed)
    assert all(torch.equal(a[k], b[k]) for k in a)
    for run in (straight, killed):
        cli.main(["evaluate", "--processed", str(processed), "--run-dir", str(run)])
    assert (straight / "metrics.json").read_bytes() == (killed / "metrics.json").read_bytes()


def test_timings_go_to_their_own_file_with_the_mean_seconds_per_batch(processed, tmp_path):
    timings = tmp_path / "timings/syn/qa_cnn/seed1.json"
    _train(cfg(epochs=2), processed, tmp_path / "run", timings)
    train = json.loads(timings.read_text())["train"]
    assert [e["epoch"] for e in train["epochs"]] == [1, 2]
    assert all(e["seconds_per_batch"] == pytest.approx(e["seconds"] / e["batches"], abs=1e-3) for e in train["epochs"])
    assert train["seconds_per_batch"] == pytest.approx(sum(e["seconds_per_batch"] for e in train["epochs"]) / 2)
    # the job's span (GPU-slot tests read it) and device; a peak of device memory only on CUDA
    assert train["started"] < train["finished"] and (train["device"], train["peak_device_mb"]) == ("cpu", None)
    assert train["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert train["vectors_sha256"] is None  # no pretrained vectors read
    # an untrainable model runs no epoch: no mean to report
    _train(cfg(model="random"), processed, tmp_path / "random", tmp_path / "random.json")
    assert json.loads((tmp_path / "random.json").read_text())["train"]["epochs"] == []


def test_the_timings_keep_the_hash_of_the_vectors_the_run_read(processed, tmp_path):
    c = cfg(epochs=1)
    data = _data(c, processed)
    vectors = np.random.default_rng(0).standard_normal(
        (data.vocab_size, c["hparams"]["embedding_dim"]), dtype=np.float32
    )
    train_mod.train_run(
        c,
        data,
        vectors.copy(),
        tmp_path / "run",
        dev_evaluator(data, "dev", EvalConfig(["dev"])),
        progress=False,
        timings=tmp_path / "timings.json",
    )
    recorded = json.loads((tmp_path / "timings.json").read_text())["train"]["vectors_sha256"]
    assert recorded == train_mod.vectors_sha256(vectors)
    assert train_mod.vectors_sha256(np.asfortranarray(vectors)) == recorded  # the values, not their layout
    changed = vectors.copy()
    changed[3, 7] = np.nextafter(changed[3, 7], np.float32(np.inf))
    assert train_mod.vectors_sha256(changed) != recorded  # one value one ulp off
    assert train_mod.vectors_sha256(vectors.astype(np.float64)) != recorded
    assert train_mod.vectors_sha256(vectors.reshape(-1, 2)) != recorded  # the same bytes in another shape


def test_a_training_split_without_a_positive_pair_is_refused_before_anything_is_written(processed, tmp_path):
    c = cfg()
    data = _data(c, processed)
    data.dataset.splits["train"] = data.dataset.splits["train"].assign(label=0)
    run_dir, timings = tmp_path / "run", tmp_path / "timings.json"
    with pytest.raises(
        ValueError, match=rf"^{run_dir}: the train split of dataset 'synthetic_en' has no positive pair"
    ):
        train_mod.train_run(
            c, data, None, run_dir, dev_evaluator(data, "dev", EvalConfig(["dev"])), progress=False, timings=timings
        )
    assert list(tmp_path.iterdir()) == []


def test_a_failed_training_ends_without_dulwich_finalizer_noise(processed, tmp_path, repo_root):
    """dvclive's Live opens the DVC repository (dulwich packs) and never closes it; after a failure
    they were finalised at interpreter exit: 8-14 "Exception ignored ... sys.meta_path is None"."""
    # the loss overflows in the first epoch, with the logger open (a split the data lacks is refused before)
    c = cfg(epochs=1, optimizer="sgd", lr=0.1, margin=3e38)
    out = subprocess.run(
        [sys.executable, "-m", "ansel.cli", *train_args(c, processed, tmp_path / "run")],
        cwd=repo_root,
        capture_output=True,
        text=True,
    )  # inside the DVC repository
    assert out.returncode != 0 and "the run diverged" in out.stderr, out.stderr[-2000:]
    assert "Exception ignored" not in out.stderr, out.stderr[-2000:]


def test_monitored_splits_are_logged_every_epoch_and_never_select(processed, tmp_path, monkeypatch):
    """log.csv carries test_<metric> per epoch; model.pt stays the dev-best epoch even where test disagrees."""
    c = cfg(epochs=4, monitor_splits=["test"])
    data = _data(c, processed)
    ev = EvalConfig(["dev", "test"])
    _monitored(c, data, tmp_path, ev)
    log = pd.read_csv(tmp_path / "log.csv")
    assert {"test_MAP", "test_nDCG@3"} <= set(log) and log.test_MAP.notna().all()
    model = load_model(c, data.vocab_size, tmp_path / "model.pt")
    from ansel.evaluation.evaluate import evaluate_split

    assert evaluate_split(model, data, "dev", ev)[1]["MAP"] == pytest.approx(log.dev_MAP.max(), abs=1e-9)


def test_monitored_splits_at_the_authors_cadence_keep_each_epochs_best_evaluation(processed, tmp_path, monkeypatch):
    """train.monitor_every = N: test is scored every N steps over the run (the MTAS authors'
    evaluate_every), mid-epoch too; each epoch's row holds its evaluation best on test P@1, and
    the training itself (losses, dev, the kept model) is the per-epoch monitoring's, step for step."""
    ev = EvalConfig(["dev", "test"])
    seen = []
    real = train_mod._Cadence.evaluate

    def spy(self, step):
        real(self, step)
        seen.append(dict(self.epoch_rows[-1]))

    monkeypatch.setattr(train_mod._Cadence, "evaluate", spy)
    logs = {}
    for name, extra in (("cadence", {"monitor_every": 3}), ("epochs", {})):
        c = cfg(epochs=3, monitor_splits=["test"], max_batches=4, **extra)
        data = _data(c, processed)
        _monitored(c, data, tmp_path / name, ev)
        logs[name] = pd.read_csv(tmp_path / name / "log.csv")
    assert [e["test_step"] for e in seen] == [3, 6, 9, 12]  # 4 batches an epoch, 12 steps
    by_epoch = {1: seen[:1], 2: seen[1:2], 3: seen[2:4]}  # steps 3 | 6 | 9, 12
    for epoch, evaluations in by_epoch.items():
        best = max(evaluations, key=lambda e: e["test_P@1"])
        row = logs["cadence"].iloc[epoch - 1]
        assert row.test_step == best["test_step"] and row.test_MAP == pytest.approx(best["test_MAP"])
    same = ["epoch", "loss", "dev_MAP", "dev_P@1"]
    pd.testing.assert_frame_equal(logs["cadence"][same], logs["epochs"][same])
    assert (tmp_path / "cadence/model.pt").read_bytes() == (tmp_path / "epochs/model.pt").read_bytes()


def test_classification_trains_every_labelled_pair_with_a_two_way_head(processed, tmp_path):
    """loss classification: BCE on the head's log-odds over all training pairs, accuracy/F1 on dev."""
    from ansel.evaluation.metrics import classification_metrics

    config = load()
    config["datasets"]["synthetic_en"]["eval"]["task"] = "classification"
    c = run_config(config, "synthetic_en", "amv_mv_lstm_quoraqp", 1)
    c["train"].update(epochs=3, batch_size=16, optimizer="adam", lr=0.01, max_batches=None)
    c["hparams"].update(embedding_dim=16, hidden=8, top_k=20, freeze_embeddings=False, normalize_embeddings=False)
    c["embeddings"] = None
    data = _data(c, processed)
    ev = EvalConfig(["dev"], task="classification")
    trained = train_mod.train_run(c, data, None, tmp_path, dev_evaluator(data, "dev", ev), progress=False)
    log = pd.read_csv(tmp_path / "log.csv")
    assert {"dev_accuracy", "dev_F1"} <= set(log) and not {"dev_MAP", "pos_score"} & set(log)
    assert log.loss.iloc[-1] < log.loss.iloc[0]
    scored = trained.dev_scores  # the log-odds of "a match": higher for the corpus's matches
    assert scored[scored.label == 1].score.mean() > scored[scored.label == 0].score.mean()
    assert classification_metrics(trained.dev_scores)["accuracy"] == pytest.approx(log.dev_accuracy.max())


def test_a_classification_dataset_needs_the_classification_loss_a_ranking_one_may_use_it(processed):
    """GGSA's yahooQA (§3.3): the pointwise cross-entropy over every labelled pair of a ranking
    dataset, 1:4 as its pools hold them; a classification dataset trains with nothing else."""
    from ansel.config import ConfigError

    config = load()
    pairs = {
        **config,
        "datasets": {
            **config["datasets"],
            "synthetic_en": {
                **config["datasets"]["synthetic_en"],
                "eval": {**config["datasets"]["synthetic_en"]["eval"], "task": "classification"},
            },
        },
    }
    with pytest.raises(ConfigError, match=r"models\.qa_cnn\.train\.loss: 'hinge' does not fit"):
        run_config(pairs, "synthetic_en", "qa_cnn", 1)
    for model in ("ggsa_ggsa_max_yahooqa", "ggsa_iggsa_attn_yahooqa"):
        assert model_config(config, model)["train"]["loss"] == "classification"
    c = run_config(config, "synthetic_en", "ggsa_ggsa_max_yahooqa", 1)
    data = _data(c, processed)
    t = parse(TrainConfig, c["train"], "train")
    step = epoch_mod.Feed(c, t, data, None, "cpu")
    cands = data.pairs("train")[0]
    assert len(step.pos_q) == len(cands) and step.labels.sum() == (cands.label > 0).sum() < len(cands)


def test_a_sampled_evaluation_scores_the_same_seeded_questions_in_training_and_evaluation(processed, tmp_path):
    """eval.sample_questions (a budget's size): dev selection and the evaluated splits see one seeded
    draw of each split's questions, the same for every run; a split with no more questions keeps them all."""
    from ansel.evaluation.evaluate import eval_data
    from ansel.settings import parse

    c = cfg(epochs=2)
    c["eval"].update(sample_questions=10, sample_seed=3)
    ev = parse(EvalConfig, c["eval"], "eval")
    data = eval_data(_data(c, processed), ev)
    trained = train_mod.train_run(c, data, None, tmp_path, dev_evaluator(data, "dev", ev), progress=False)
    save_dev_scores(trained.dev_scores, "dev", tmp_path / DEV_SCORES)
    metrics = evaluate_run(tmp_path, processed)
    assert metrics["dev"]["n_questions"] == metrics["test"]["n_questions"] == 10
    assert metrics["dev"]["MAP"] == pd.read_csv(tmp_path / "log.csv").dev_MAP.max()  # selected on the same draw
    trec = pd.read_csv(tmp_path / "run.trec", sep=" ", header=None, names=["qid", "q0", "aid", "rank", "score", "tag"])
    full = _data(c, processed)
    for split in ("dev", "test"):
        ranked = trec[trec.qid.str.startswith(split + ":")]
        drawn = set(data.pairs(split)[0].qid.astype(str))
        assert {q.split(":", 1)[1] for q in ranked.qid} == drawn and len(drawn) == 10
        assert drawn == set(full.sample_questions([split], 10, 3).pairs(split)[0].qid.astype(str))
        assert drawn != set(full.sample_questions([split], 10, 4).pairs(split)[0].qid.astype(str))
        kept = full.sample_questions([split], 1000, 3).pairs(split)[0]  # more than the split has: all of it
        assert kept.equals(full.pairs(split)[0])
    assert len(data.pairs("train")[0]) == len(full.pairs("train")[0])  # training data is never cut


def test_a_sample_of_no_questions_is_refused_naming_the_key():
    from ansel.settings import parse

    with pytest.raises(Exception, match="sample_questions"):
        parse(EvalConfig, {"splits": ["dev"], "sample_questions": 0}, "datasets.x.eval")


def test_epochs_0_keeps_and_scores_the_initial_weights_as_epoch_0(processed, tmp_path):
    """``epochs: 0`` (the untrained model of issue 51, E6): no step is taken, model.pt holds the
    seeded initial weights, log.csv has one row, epoch 0, with its dev metrics, and evaluation
    scores those weights (the dev scores it keeps are theirs)."""
    c = cfg(epochs=0)
    trained = _train(c, processed, tmp_path)
    save_dev_scores(trained.dev_scores, "dev", tmp_path / DEV_SCORES)
    log = pd.read_csv(tmp_path / "log.csv")
    assert list(log.epoch) == [0] and "loss" not in log
    torch.manual_seed(c["seed"])
    initial = train_mod.build_model(
        c["arch"], c["hparams"], len(Vocab.load(processed / "vocab.json")), None, "qa_cnn"
    ).state_dict()
    saved = _weights(tmp_path)
    assert saved.keys() == initial.keys() and all(torch.equal(saved[k], initial[k]) for k in saved)
    metrics = evaluate_run(tmp_path, processed)
    assert metrics["dev"]["MAP"] == pytest.approx(log.dev_MAP[0], abs=1e-9)
    # one epoch moves the weights: epoch 0 is not an epoch 1 under another name
    _train(cfg(epochs=1), processed, tmp_path / "one")
    assert not all(torch.equal(saved[k], _weights(tmp_path / "one")[k]) for k in saved)


def test_keep_last_writes_the_last_epochs_run_file_beside_the_dev_selected_one(processed, tmp_path):
    """train.keep_last (a paper reporting its last iteration): model_last.pt holds the last epoch's
    weights and ``evaluate_run(last=True)`` writes their run file and metrics (dev: the log's last row,
    not its best);
    the dev-selected run.trec and metrics.json are unchanged beside them."""
    _train(cfg(epochs=2, keep_last=True), processed, tmp_path)
    assert (tmp_path / "model_last.pt").exists()
    metrics = evaluate_run(tmp_path, processed)
    assert not (tmp_path / "run_last.trec").exists()  # the last epoch is its own evaluation (ansel evaluate --last)
    assert evaluate_run(tmp_path, processed, last=True) == json.loads((tmp_path / "metrics_last.json").read_text())
    last = json.loads((tmp_path / "metrics_last.json").read_text())
    log = pd.read_csv(tmp_path / "log.csv")
    assert log.dev_MAP.iloc[-1] < log.dev_MAP.max()  # this run's last epoch is not the dev-selected one
    assert last["dev"]["MAP"] == pytest.approx(log.dev_MAP.iloc[-1], abs=1e-9)
    assert metrics["dev"]["MAP"] == pytest.approx(log.dev_MAP.max(), abs=1e-9)
    assert json.loads((tmp_path / "metrics.json").read_text()) == metrics
    rows = (tmp_path / "run_last.trec").read_text().splitlines()
    assert rows and {r.split()[0].split(":")[0] for r in rows} == {"dev", "test"}
    # a retrain without keep_last leaves no last-epoch files of the earlier run behind, and --last is refused
    _train(cfg(epochs=1), processed, tmp_path)
    assert not any((tmp_path / name).exists() for name in ("model_last.pt", "run_last.trec", "metrics_last.json"))
    from ansel.config import ConfigError

    with pytest.raises(ConfigError, match="model_last.pt: missing; .* only with train.keep_last: true"):
        evaluate_run(tmp_path, processed, last=True)


def test_each_epochs_line_names_the_split_it_selects_on(processed, tmp_path, capsys):
    """``dev_split: train`` (a dataset with no dev split) prints the selection's metric as train's, not dev's."""
    c = cfg(epochs=1, max_batches=2, dev_split="train")
    data = _data(c, processed)
    train_mod.train_run(
        c, data, None, tmp_path / "run", dev_evaluator(data, "train", EvalConfig(["dev"])), progress=False
    )
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("epoch 1:"))
    assert f" train {c['train']['select_metric']} " in line and " dev " not in line


def test_the_progress_bar_writes_no_frames_into_a_log(processed, tmp_path, capfd):
    """A job's stderr is its log file: a bar there would be a carriage-return frame every 2 s of training."""
    c = cfg(epochs=1, max_batches=2)
    data = _data(c, processed)
    train_mod.train_run(c, data, None, tmp_path / "run", dev_evaluator(data, "dev", EvalConfig(["dev"])), progress=True)
    assert "\r" not in capfd.readouterr().err
