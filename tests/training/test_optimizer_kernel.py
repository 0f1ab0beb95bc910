"""``train.optimizer_kernel: fused``: torch's one-pass optimizer kernel, an option beside the default loop."""

import pytest
import torch

import ansel.training.trainer as train_mod
from ansel.settings import ConfigError, parse
from ansel.training.config import TrainConfig
from tests.training.test_trainer import _data, _train, _weights, cfg, processed  # noqa: F401 (a fixture)


@pytest.mark.parametrize("optimizer, lr", [("adam", 1e-2), ("sgd", 0.1), ("adagrad", 0.01)])
def test_the_fused_kernel_trains_what_the_loop_trains(processed, tmp_path, optimizer, lr):
    weights = {}
    for kernel in ("loop", "fused"):
        _train(cfg(epochs=2, optimizer=optimizer, lr=lr, optimizer_kernel=kernel), processed, tmp_path / kernel)
        weights[kernel] = _weights(tmp_path / kernel)
    assert weights["loop"].keys() == weights["fused"].keys()
    for k, loop in weights["loop"].items():
        torch.testing.assert_close(weights["fused"][k], loop, rtol=1e-4, atol=1e-5, msg=k)


@pytest.mark.parametrize("kernel", ["loop", "fused"])
def test_torch_is_handed_the_kernel_asked_for(processed, kernel):
    c = cfg(epochs=1, optimizer="adam", lr=1e-3, optimizer_kernel=kernel)
    _, _, optimizer = train_mod._model_and_optimizer(
        c, parse(TrainConfig, c["train"], "t"), _data(c, processed), None, torch.device("cpu")
    )
    assert [bool(g["fused"]) for g in optimizer.param_groups] == [kernel == "fused"] * len(optimizer.param_groups)


@pytest.mark.parametrize(
    "train, says",
    [
        ({"optimizer": "adadelta"}, "fused has no form for optimizer 'adadelta'"),
        ({"optimizer": "rmsprop"}, "fused has no form for optimizer 'rmsprop'"),
        ({"optimizer": "adam", "optimizer_kernel": "foreach"}, "'foreach' is not of type 'loop' | 'fused'"),
    ],
)
def test_an_optimizer_without_a_fused_kernel_is_refused_naming_the_key(train, says):
    values = {
        "epochs": 1,
        "batch_size": 2,
        "lr": 0.1,
        "loss": "hinge",
        "margin": 1.0,
        "select_metric": "MAP",
        "optimizer_kernel": "fused",
        **train,
    }
    with pytest.raises(ConfigError, match=r"models\.m\.train\.optimizer_kernel: .*" + says):
        parse(TrainConfig, values, "models.m.train")
