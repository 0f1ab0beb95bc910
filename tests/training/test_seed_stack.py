"""A row's seeds as one stacked model (``ansel.training.seed_stack``): each seed's batches and
negatives those of its run alone, its losses and gradients equal to 1e-6 over a few steps, its final
metrics as close as measured here; what cannot stack refused by its key with nothing touched."""

import json

import numpy as np
import pandas as pd
import pytest
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

import ansel.training.epoch as epoch_mod
import ansel.training.trainer as train_mod
from ansel.config import ConfigError, load, run_config
from ansel.data.batches import RunData
from ansel.data.vocab import Vocab
from ansel.evaluation.config import EvalConfig
from ansel.evaluation.evaluate import dev_evaluator
from ansel.training.seed_stack import SeedStack, StackError
from tests.training.corpus import processed_synthetic
from tests.training.interrupt import interrupt_after_epoch

SEEDS = [1, 2, 3]
# small models: QA-CNN with sampled_max negatives (scored by each seed's own model), Adam and per-seed
# clipping; AP-CNN's SGD with an inverse-epoch lr and dropout on the word vectors (its mask's shape is the
# seed's own batch width); MatchZoo's ARC-I with dropout before its head; GGSA's global self-attention
# with its dropout 0.3; GGSA's grouped attention (offset heads, the gate) and iGGSA's (the answer encoder
# reads the question) with groups of 4, so a seed's batch width changes its groups' padding
MODELS = {
    "qa_cnn": (
        {"embedding_dim": 16, "filters": 24, "kernel": 3},
        {"optimizer": "adam", "lr": 0.01, "clip_norm": 0.5, "negatives": {"strategy": "sampled_max", "n": 3}},
    ),
    # at AP's lr 1.1 the first step's rounding (1e-7) grows past 1e-6 by the sixth (measured): lr 0.1 here
    "apnet_ap_cnn_wikiqa": ({"embedding_dim": 16, "filters": 24, "kernel": 3, "dropout": 0.3}, {"lr": 0.1}),
    "amv_arc_i_wikiqa": ({"embedding_dim": 16, "kernel_count": 8, "dropout": 0.5}, {}),
    "ggsa_global_sa_max_insuranceqa": ({"embedding_dim": 12, "heads": 2}, {"batch_size": 8}),
    "ggsa_ggsa_max_insuranceqa": ({"embedding_dim": 12, "heads": 2, "group_size": 4}, {}),
    "ggsa_iggsa_attn_insuranceqa": ({"embedding_dim": 12, "heads": 2, "group_size": 4}, {}),
}


@pytest.fixture(scope="module")
def processed(tmp_path_factory):
    return processed_synthetic(
        tmp_path_factory.mktemp("raw"), tmp_path_factory.mktemp("processed"), {"train": 60, "dev": 20, "test": 20}
    )


def cfg(model, seed, epochs=2, **train):
    c = run_config(load(), "synthetic_en", model, seed)
    c["embeddings"] = None
    c["eval"]["splits"] = ["dev", "test"]
    hparams, recipe = MODELS.get(model, ({}, {}))
    c["hparams"].update(hparams)
    c["train"].update({"epochs": epochs, "batch_size": 8, "max_batches": 3, **recipe, **train})
    return c


def _data(c, processed):
    return RunData.load(processed, Vocab.load(processed / "vocab.json"), c["max_len_q"], c["max_len_a"])


def _evaluator(data):
    return dev_evaluator(data, "dev", EvalConfig(["dev"]))


class Recorder:
    """Every batch drawn (by seed), every loss and every gradient an optimizer steps on."""

    def __init__(self, monkeypatch):
        self.batches, self.losses, self.grads = [], [], []
        real_batch = epoch_mod.Feed.batch

        def batch(feed, rows, rng):
            b = real_batch(feed, rows, rng)
            self.batches.append((feed.seed, {k: v.clone() for k, v in b.items()}))
            return b

        monkeypatch.setattr(epoch_mod.Feed, "batch", batch)
        for cls in (epoch_mod.Alone, SeedStack):
            monkeypatch.setattr(cls, "losses", self._losses(cls.losses))
        self.hook = register_optimizer_step_pre_hook(
            lambda opt, args, kwargs: self.grads.append([p.grad.clone() for g in opt.param_groups for p in g["params"]])
        )

    def _losses(self, real):
        def losses(trainee, batches, feeds):
            out = real(trainee, batches, feeds)
            self.losses.append(out[0].detach().clone())
            return out

        return losses


def _monitors(data, train):
    """The monitor splits' evaluators (``train.monitor_splits``), as the train command builds them."""
    splits = train.get("monitor_splits", [])
    return {split: dev_evaluator(data, split, EvalConfig(["dev", *splits])) for split in splits} or None


def _alone_and_stacked(model, processed, tmp_path, monkeypatch, **train):
    """(per seed: what its alone run recorded, its run dir), (what the stack recorded, the run dirs)."""
    alone = {}
    for seed in SEEDS:
        with monkeypatch.context() as m:
            rec = Recorder(m)
            c = cfg(model, seed, **train)
            data = _data(c, processed)
            train_mod.train_run(
                c,
                data,
                None,
                tmp_path / f"alone{seed}",
                _evaluator(data),
                progress=False,
                dvclive=False,
                monitors=_monitors(data, train),
            )
            rec.hook.remove()
        alone[seed] = rec
    with monkeypatch.context() as m:
        rec = Recorder(m)
        cfgs = [cfg(model, seed, **train) for seed in SEEDS]
        data = _data(cfgs[0], processed)
        train_mod.train_seeds(
            cfgs,
            data,
            None,
            [tmp_path / f"stack{s}" for s in SEEDS],
            _evaluator(data),
            progress=False,
            dvclive=False,
            monitors=_monitors(data, train),
        )
        rec.hook.remove()
    # the stack's probe (one step's losses, nothing trained, before any file: SeedStack.probe) first
    rec.batches, rec.losses = rec.batches[len(SEEDS) :], rec.losses[1:]
    return alone, rec


# the MTAS rows' step cadence (``monitor_every``): test scored every 2 steps, mid-epoch too, by each seed's
# model between the same steps as alone; AP-CNN's dropout masks drawn on across the evaluations
MONITORED = {"monitor_splits": ["test"], "monitor_every": 2}


@pytest.mark.parametrize(
    "model, train", [(m, {}) for m in MODELS] + [("apnet_ap_cnn_wikiqa", MONITORED)], ids=[*MODELS, "monitored"]
)
def test_stacked_seeds_draw_their_alone_batches_and_step_on_their_alone_losses_and_gradients(
    model, train, processed, tmp_path, monkeypatch
):
    alone, stack = _alone_and_stacked(model, processed, tmp_path, monkeypatch, **train)
    steps = len(stack.losses)
    assert steps == 6 and all(len(alone[s].losses) == steps for s in SEEDS)  # 2 epochs of 3 batches
    for i, seed in enumerate(SEEDS):
        mine = [b for s, b in stack.batches if s == seed]
        assert len(mine) == len(alone[seed].batches) == steps
        for b, (_, a) in zip(mine, alone[seed].batches):  # the same examples, negatives (model-scored) and labels
            assert b.keys() == a.keys() and all(torch.equal(b[k], a[k]) for k in b)
        for k in range(steps):
            assert abs(float(stack.losses[k][i]) - float(alone[seed].losses[k])) <= 1e-6
            for g_stack, g_alone in zip(stack.grads[k], alone[seed].grads[k], strict=True):
                assert torch.allclose(g_stack[i], g_alone, rtol=0, atol=1e-6)
        for f in ("model.pt", "log.csv", "config.json"):  # each seed's run directory as alone
            assert (tmp_path / f"stack{seed}" / f).exists()
        assert sorted(p.name for p in (tmp_path / f"stack{seed}").iterdir()) == sorted(
            p.name for p in (tmp_path / f"alone{seed}").iterdir()
        )
        assert (tmp_path / f"stack{seed}" / "config.json").read_bytes() == (
            tmp_path / f"alone{seed}" / "config.json"
        ).read_bytes()
        logs = [pd.read_csv(tmp_path / f"{k}{seed}" / "log.csv") for k in ("alone", "stack")]
        monitored = [c for c in logs[0].columns if c.startswith("test_")]
        assert bool(monitored) == bool(train) and list(logs[1].columns) == list(logs[0].columns)
        for col in monitored:  # each epoch's best evaluation: the same step, its metrics to 1e-6
            assert np.abs(logs[0][col] - logs[1][col]).max() <= (0 if col == "test_step" else 1e-6)


@pytest.mark.parametrize("model", ["qa_cnn", "apnet_ap_cnn_wikiqa", "ggsa_ggsa_max_insuranceqa"])
def test_the_final_metrics_of_a_tiny_run_stacked_and_alone(model, processed, tmp_path, monkeypatch, capsys):
    """How close: every epoch's loss and dev metrics, 3 seeds x 3 epochs of 7 batches, stacked against
    alone (the weights drift apart by float rounding only), and the selected weights."""
    train = {"epochs": 3, "max_batches": 7}
    _alone_and_stacked(model, processed, tmp_path, monkeypatch, **train)
    worst = {}
    for seed in SEEDS:
        a, s = pd.read_csv(tmp_path / f"alone{seed}" / "log.csv"), pd.read_csv(tmp_path / f"stack{seed}" / "log.csv")
        assert list(a.columns) == list(s.columns) and len(a) == 3
        for col in a.columns:
            worst[col] = max(worst.get(col, 0.0), float(np.abs(a[col] - s[col]).max()))
        wa, ws = (torch.load(tmp_path / f"{k}{seed}" / "model.pt", weights_only=True) for k in ("alone", "stack"))
        assert wa.keys() == ws.keys()
        for k in wa:
            diff = (wa[k] - ws[k]).abs()
            if k.endswith("qkv.bias"):  # self-attention's key bias: apart (see below)
                third = diff.numel() // 3
                worst["key_bias"] = max(worst.get("key_bias", 0.0), float(diff[third : 2 * third].max()))
                diff = torch.cat([diff[:third], diff[2 * third :]])
            worst["weights"] = max(worst.get("weights", 0.0), float(diff.max()))
        # one seed's weights, not a view of the whole stack's storage
        assert (tmp_path / f"stack{seed}" / "model.pt").stat().st_size == (
            tmp_path / f"alone{seed}" / "model.pt"
        ).stat().st_size
    with capsys.disabled():
        print(
            f"\n{model} stacked vs alone, largest difference over 3 seeds x 3 epochs:",
            ", ".join(f"{k} {v:.1e}" for k, v in worst.items()),
        )
    assert worst["loss"] <= 1e-6 and worst["weights"] <= 1e-4  # Adam's steps carry the rounding on
    # The key bias adds q.b_k to every score of a query's row, which the softmax cancels: its gradient is
    # rounding alone (measured: every weight else of GGSA's within 1e-6), and RMSProp's normalised step
    # walks it by up to lr a step, alone and stacked apart.
    lr, steps = cfg(model, 1)["train"]["lr"], 3 * train["max_batches"]
    assert worst.get("key_bias", 0.0) <= lr * steps
    assert all(worst[c] <= 1e-6 for c in worst if c.startswith("dev_"))  # the same rankings on dev


def test_a_stacked_state_resumes_stacked_exactly_and_alone_to_1e6(processed, tmp_path, monkeypatch):
    cfgs = [cfg("qa_cnn", s, epochs=3) for s in SEEDS]
    data = _data(cfgs[0], processed)
    dirs = {k: [tmp_path / f"{k}{s}" for s in SEEDS] for k in ("whole", "cut")}
    train_mod.train_seeds(cfgs, data, None, dirs["whole"], _evaluator(data), progress=False, dvclive=False)
    with monkeypatch.context() as m:
        interrupt_after_epoch(m, 2)
        with pytest.raises(KeyboardInterrupt):
            train_mod.train_seeds(cfgs, data, None, dirs["cut"], _evaluator(data), progress=False, dvclive=False)
    assert _state_epochs(dirs["cut"]) == [2, 2, 2]  # saved as one, after every seed's epoch 2
    # seeds at two epochs (seed 3's state deleted) cannot stack: the stack refuses, naming the states
    third = dirs["cut"][2] / "state.pt"
    saved = third.read_bytes()
    third.unlink()
    with pytest.raises(StackError, match=r"state\.pt.*epochs \[2, 2, 0\]"):
        train_mod.train_seeds(cfgs, data, None, dirs["cut"], _evaluator(data), progress=False, dvclive=False)
    third.write_bytes(saved)
    # seed 1's state resumes alone: the stack's remaining epoch as alone, to float rounding
    train_mod.train_run(cfgs[0], data, None, dirs["cut"][0], _evaluator(data), progress=False, dvclive=False)
    a, b = (torch.load(d[0] / "model.pt", weights_only=True) for d in dirs.values())
    assert all(torch.allclose(a[k], b[k], rtol=0, atol=1e-6) for k in a)
    # seeds 2 and 3 (both at epoch 1) resume as a stack: bit for bit the uninterrupted stack's
    train_mod.train_seeds(cfgs[1:], data, None, dirs["cut"][1:], _evaluator(data), progress=False, dvclive=False)
    for whole, resumed in zip(dirs["whole"][1:], dirs["cut"][1:]):
        assert (whole / "log.csv").read_bytes() == (resumed / "log.csv").read_bytes()
        a, b = (torch.load(d / "model.pt", weights_only=True) for d in (whole, resumed))
        assert all(torch.equal(a[k], b[k]) for k in a)


class Killed(BaseException):
    """What kill -9 leaves: no handler runs after it."""


def _state_epochs(dirs):
    return [torch.load(d / "state.pt", weights_only=True)["epoch"] for d in dirs]


def test_a_stack_killed_while_scoring_a_seed_resumes_stacked_to_the_same_bytes(processed, tmp_path):
    """A kill after seed 1's epoch-2 dev scoring, in seed 2's: every seed still stands at epoch 1, so the
    seeds resume as the stack (at two epochs they would resume alone, to other numbers)."""
    cfgs = [cfg("qa_cnn", s, epochs=3) for s in SEEDS]
    data = _data(cfgs[0], processed)
    whole, cut = ([tmp_path / f"{k}{s}" for s in SEEDS] for k in ("whole", "cut"))
    train_mod.train_seeds(cfgs, data, None, whole, _evaluator(data), progress=False, dvclive=False)
    evaluate, calls = _evaluator(data), []

    def killed_in_seed_2s_second_scoring(model):
        calls.append(model)
        if len(calls) == len(SEEDS) + 2:
            raise Killed
        return evaluate(model)

    with pytest.raises(Killed):
        train_mod.train_seeds(cfgs, data, None, cut, killed_in_seed_2s_second_scoring, progress=False, dvclive=False)
    assert _state_epochs(cut) == [1] * len(SEEDS)
    train_mod.train_seeds(cfgs, data, None, cut, _evaluator(data), progress=False, dvclive=False)
    for a, b in zip(whole, cut):
        assert [(a / f).read_bytes() for f in ("log.csv", "model.pt")] == [
            (b / f).read_bytes() for f in ("log.csv", "model.pt")
        ]


def test_a_stack_killed_while_writing_its_runs_keeps_every_seeds_state(processed, tmp_path, monkeypatch):
    """Seed 1's state.pt goes only once seed 2's files are written too: else seed 1 would train again alone."""
    cfgs = [cfg("qa_cnn", s) for s in SEEDS]
    data = _data(cfgs[0], processed)
    dirs = [tmp_path / f"seed{s}" for s in SEEDS]
    real = train_mod._Run.finish

    def killed_at_seed_2(run, *args, **kwargs):
        if run.dir == dirs[1]:
            raise Killed
        return real(run, *args, **kwargs)

    monkeypatch.setattr(train_mod._Run, "finish", killed_at_seed_2)
    with pytest.raises(Killed):
        train_mod.train_seeds(cfgs, data, None, dirs, _evaluator(data), progress=False, dvclive=False)
    assert _state_epochs(dirs) == [2] * len(SEEDS)


@pytest.mark.parametrize(
    "model, train, hparams, key",
    [
        ("qa_lstm", {}, {"embedding_dim": 8, "hidden": 8}, r"models\.qa_lstm: arch 'qa_lstm' has a recurrent layer"),
        (
            "qa_cnn",
            {"embedding_updates": "sparse", "optimizer": "adagrad", "clip_norm": None},
            {},
            r"models\.qa_cnn\.train\.embedding_updates",
        ),
    ],
)
def test_what_cannot_stack_is_refused_by_its_key_before_any_file_is_touched(
    model, train, hparams, key, processed, tmp_path
):
    cfgs = [cfg(model, s, **train) for s in SEEDS]
    for c in cfgs:
        c["hparams"].update(hparams)
    _refused(cfgs, key, processed, tmp_path)


def test_a_model_that_reads_a_tensors_value_is_refused_by_the_probe(processed, tmp_path, monkeypatch):
    """A forward vmap cannot run (here global attention reading its mask's count into Python, as GGSA's
    group attention did before its slots were computed from the shapes) is refused by the stack's probe."""
    from ansel.models.self_attention import GlobalAttention

    real = GlobalAttention.forward
    monkeypatch.setattr(
        GlobalAttention, "forward", lambda self, q, k, v, mask: real(self, q, k, v, mask) * int(mask.sum() > 0)
    )
    model = "ggsa_global_sa_max_insuranceqa"
    cfgs = [cfg(model, s) for s in SEEDS]
    for c in cfgs:
        c["hparams"].update(MODELS[model][0])
    _refused(cfgs, rf"models\.{model}: the model does not run vmapped over seeds \(.*item", processed, tmp_path)


def _refused(cfgs, key, processed, tmp_path):
    """``train_seeds`` of ``cfgs`` refused matching ``key``, an earlier model of every seed untouched."""
    dirs = [tmp_path / f"seed{s}" for s in SEEDS]
    for d in dirs:
        d.mkdir()
        (d / "model.pt").write_text("an earlier model")
    data = _data(cfgs[0], processed)
    with pytest.raises(StackError, match=key):
        train_mod.train_seeds(cfgs, data, None, dirs, _evaluator(data), progress=False, dvclive=False)
    assert all((d / "model.pt").read_text() == "an earlier model" for d in dirs)


def test_only_one_rows_seeds_stack(processed, tmp_path):
    cfgs = [cfg("qa_cnn", 1), cfg("qa_cnn", 2, lr=0.5)]
    data = _data(cfgs[0], processed)
    with pytest.raises(StackError, match="differ in more than their seed"):
        train_mod.train_seeds(cfgs, data, None, [tmp_path / "a", tmp_path / "b"], _evaluator(data), progress=False)


def test_ansel_train_seeds_stacks_a_row_or_trains_its_seeds_one_after_another(processed, tmp_path, capsys):
    """``ansel train --seeds``: each seed's run directory (dev scores for the evaluate stage included) and
    timings, stacked where the model stacks; a model that does not, trained seed after seed, saying why."""
    from ansel.training.command import train_command

    for model in ("qa_cnn", "qa_lstm"):
        c = cfg(model, 1, epochs=1)
        c["hparams"].update({"embedding_dim": 8, "hidden": 8} if model == "qa_lstm" else {})
        train_command(
            c,
            processed,
            tmp_path / model / "seed{seed}",
            None,
            progress=False,
            dvclive=False,
            timings=tmp_path / model / "t{seed}.json",
            seeds=[1, 2],
        )
        for seed in (1, 2):
            assert {"model.pt", "log.csv", "config.json", "dev_scores.pt"} <= {
                p.name for p in (tmp_path / model / f"seed{seed}").iterdir()
            }
            assert json.loads((tmp_path / model / f"seed{seed}" / "config.json").read_text())["seed"] == seed
            timings = json.loads((tmp_path / model / f"t{seed}.json").read_text())["train"]
            assert timings.get("stacked_seeds") == (2 if model == "qa_cnn" else None)
    assert "the seeds do not stack (models.qa_lstm: arch 'qa_lstm' has a recurrent layer" in capsys.readouterr().out
    with pytest.raises(ConfigError, match=r"--run-dir .*: with --seeds it names each seed's path with \{seed\}"):
        train_command(cfg("qa_cnn", 1), processed, tmp_path / "one", None, seeds=[1, 2])


def test_frozen_vectors_equal_in_every_seed_are_held_once_and_train_as_alone(processed, tmp_path):
    data = _data(cfg("qa_cnn", 1), processed)
    vectors = np.random.default_rng(0).normal(size=(data.vocab_size, 16)).astype(np.float32)
    cfgs = [cfg("qa_cnn", s) for s in SEEDS]
    for c in cfgs:
        c["hparams"]["freeze_embeddings"] = True
    models = [train_mod._model(c, data, vectors, "cpu") for c in cfgs]
    stack = SeedStack(models, None)
    (frozen,) = [k for k, p in models[0].named_parameters() if not p.requires_grad]
    assert frozen in stack.shared and frozen not in stack.stacked
    tables = {dict(m.named_parameters())[frozen].data_ptr() for m in models}
    assert tables == {stack.shared[frozen].data_ptr()}  # one table for every seed
    train_mod.train_seeds(
        cfgs, data, vectors, [tmp_path / f"stack{s}" for s in SEEDS], _evaluator(data), progress=False, dvclive=False
    )
    train_mod.train_run(cfgs[1], data, vectors, tmp_path / "alone", _evaluator(data), progress=False, dvclive=False)
    a, b = (torch.load(d / "model.pt", weights_only=True) for d in (tmp_path / "alone", tmp_path / "stack2"))
    assert torch.equal(b[frozen], a[frozen])  # the vectors as alone (the padding row zeroed)
    assert all(torch.allclose(a[k], b[k], rtol=0, atol=1e-5) for k in a)
