"""``train.embedding_updates: sparse``: the embedding tables' rows a batch reads, updated alone; the same
arithmetic as the dense update for adadelta, lazy moments for adam, refused where no sparse form is."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import ansel.training.trainer as train_mod
from ansel.evaluation.config import EvalConfig
from ansel.evaluation.evaluate import dev_evaluator
from ansel.settings import ConfigError, parse
from ansel.training.config import TrainConfig
from ansel.training.sparse_updates import LazyAdadelta, SplitOptimizer
from tests.training.test_trainer import _data, _train, _weights, cfg, processed  # noqa: F401 (a fixture)


def test_lazy_adadelta_is_adadelta_on_rows_read_now_and_then():
    torch.manual_seed(0)
    table = torch.randn(50, 4)
    dense, lazy = nn.Parameter(table.clone()), nn.Parameter(table.clone())
    optimizers = [
        torch.optim.Adadelta([dense], lr=1.0, rho=0.95, eps=1e-7),
        LazyAdadelta([lazy], lr=1.0, rho=0.95, eps=1e-7),
    ]
    for _ in range(40):  # 8 reads of 50 rows a step, repeats included: most rows skip many steps
        rows, upstream = torch.randint(1, 50, (8,)), torch.randn(8, 4)
        F.embedding(rows, dense).mul(upstream).sum().backward()
        F.embedding(rows, lazy, sparse=True).mul(upstream).sum().backward()
        assert lazy.grad.is_sparse
        for o in optimizers:
            o.step()
            o.zero_grad(set_to_none=True)
    assert torch.allclose(dense, lazy, rtol=1e-5, atol=1e-6)
    assert torch.equal(lazy[0], table[0])  # never read: untouched
    assert not torch.allclose(lazy, table)


def _trained(processed, tmp_path, name, **train):
    c = cfg(epochs=2, **train)
    _train(c, processed, tmp_path / name)
    return _weights(tmp_path / name)


def test_sparse_adadelta_trains_the_model_the_dense_update_trains(processed, tmp_path):
    dense = _trained(processed, tmp_path, "dense", optimizer="adadelta", lr=1.0)
    sparse = _trained(processed, tmp_path, "sparse", optimizer="adadelta", lr=1.0, embedding_updates="sparse")
    assert dense.keys() == sparse.keys()
    for k in dense:
        assert torch.allclose(dense[k], sparse[k], rtol=1e-4, atol=1e-5), k


def test_sparse_adam_moves_only_the_rows_read(processed, tmp_path):
    """Lazy moments: a row the batch did not read keeps its weights (dense Adam moves every row it ever read)."""
    c = cfg(epochs=1, optimizer="adam", lr=1e-2, embedding_updates="sparse")
    data = _data(c, processed)
    model, _, optimizer = train_mod._model_and_optimizer(
        c, parse(TrainConfig, c["train"], "t"), data, None, torch.device("cpu")
    )
    table = next(m.weight for m in model.modules() if isinstance(m, nn.Embedding))
    first, second = torch.tensor([[3, 4, 5]]), torch.tensor([[6, 7]])
    for ids in (first, second):
        optimizer.zero_grad()
        before = table.detach().clone()
        F.embedding(ids, table, sparse=True).sum().backward()
        optimizer.step()
        moved = (table != before).any(1).nonzero().flatten().tolist()
        assert moved == ids.flatten().tolist()
    assert isinstance(optimizer, SplitOptimizer) and len(optimizer.param_groups) == 2


@pytest.mark.parametrize("schedule", ["constant", "inverse_epoch"])  # the resumed epochs' own learning rates
def test_a_sparse_run_resumes_where_an_uninterrupted_one_ends(processed, tmp_path, schedule):
    c = cfg(epochs=3, optimizer="adadelta", lr=1.0, embedding_updates="sparse", lr_schedule=schedule)
    _train(c, processed, tmp_path / "straight")
    data = _data(c, processed)
    evaluate, calls = dev_evaluator(data, "dev", EvalConfig(["dev"])), []

    def stopped_in_epoch_2(model):  # after epoch 1's state.pt, before epoch 2's
        calls.append(model)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return evaluate(model)

    with pytest.raises(KeyboardInterrupt):
        train_mod.train_run(c, data, None, tmp_path / "resumed", stopped_in_epoch_2, progress=False)
    assert (tmp_path / "resumed/state.pt").exists()
    _train(c, processed, tmp_path / "resumed")
    a, b = _weights(tmp_path / "straight"), _weights(tmp_path / "resumed")
    assert all(torch.equal(a[k], b[k]) for k in a)
    # every epoch's dev metrics, not only the dev-selected weights
    assert (tmp_path / "straight/log.csv").read_bytes() == (tmp_path / "resumed/log.csv").read_bytes()


def test_a_table_read_other_than_by_lookup_is_refused():
    table = nn.Parameter(torch.randn(5, 2))
    optimizer = SplitOptimizer(None, LazyAdadelta([table]))
    (table @ torch.ones(2)).sum().backward()  # a dense gradient
    with pytest.raises(
        RuntimeError, match="embedding_updates: sparse: the model reads an embedding table other than by lookup"
    ):
        optimizer.step()


@pytest.mark.parametrize(
    "train, says",
    [
        ({"optimizer": "rmsprop"}, "sparse has no form for optimizer 'rmsprop'"),
        ({"optimizer": "sgd", "momentum": 0.9}, "sparse has no form for optimizer 'sgd' with momentum"),
        ({"optimizer": "adam", "weight_decay": 1e-4}, "set weight_decay: 0"),
        ({"optimizer": "adam", "clip_norm": 5.0}, "set clip_norm: null"),
        ({"optimizer": "adam", "embedding_updates": "lazy"}, "'lazy' is not of type 'dense' | 'sparse'"),
    ],
)
def test_settings_without_a_sparse_form_are_refused_naming_the_key(train, says):
    values = {
        "epochs": 1,
        "batch_size": 2,
        "lr": 0.1,
        "loss": "hinge",
        "margin": 1.0,
        "select_metric": "MAP",
        "embedding_updates": "sparse",
        **train,
    }
    with pytest.raises(ConfigError, match=r"models\.m\.train\.embedding_updates: .*" + says.replace("(", r"\(")):
        parse(TrainConfig, values, "models.m.train")
