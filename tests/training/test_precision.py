"""``train.precision``: the device's arithmetic. On the CPU torch, fp32 and tf32 are one arithmetic (no
TF32 there) and bf16 autocasts the training steps' forward passes; on CUDA the TF32 switches are set
for the block and restored; the planner keys a shape by its precision."""

import json

import pandas as pd
import pytest
import torch

from ansel.plan import shape
from ansel.settings import ConfigError, parse
from ansel.training.config import TrainConfig
from ansel.training.precision import arithmetic, forward_precision
from tests.training.test_trainer import _train, _weights, cfg, processed  # noqa: F401 (a fixture)


def test_on_the_cpu_torch_fp32_and_tf32_train_the_same_bytes_and_bf16_other_ones(processed, tmp_path):
    weights, logs = {}, {}
    for p in ("torch", "fp32", "tf32", "bf16"):
        _train(cfg(epochs=2, precision=p), processed, tmp_path / p)
        weights[p], logs[p] = _weights(tmp_path / p), pd.read_csv(tmp_path / p / "log.csv")
        assert json.loads((tmp_path / p / "config.json").read_text())["train"]["precision"] == p
    for p in ("fp32", "tf32"):
        assert all(torch.equal(weights[p][k], w) for k, w in weights["torch"].items()), p
    assert not all(torch.equal(weights["bf16"][k], w) for k, w in weights["torch"].items())
    # bf16 trains: its loss falls like fp32's, a few bf16 roundings apart
    assert logs["bf16"].loss.iloc[-1] < logs["bf16"].loss.iloc[0]
    assert logs["bf16"].loss.to_numpy() == pytest.approx(logs["fp32"].loss.to_numpy(), rel=0.05)


def test_bf16_autocasts_the_forward_pass_and_nothing_else():
    layer = torch.nn.Linear(4, 3)
    x = torch.randn(2, 4)
    with forward_precision("bf16", torch.device("cpu")):
        assert layer(x).dtype == torch.bfloat16
    for p in ("torch", "fp32", "tf32"):
        with forward_precision(p, torch.device("cpu")):
            assert layer(x).dtype == torch.float32


@pytest.mark.parametrize(
    "precision, matmul, cudnn",
    [("torch", False, True), ("fp32", False, False), ("tf32", True, True), ("bf16", True, True)],
)
def test_cuda_tf32_switches_for_the_block_then_restored(precision, matmul, cudnn):
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    with arithmetic(precision, torch.device("cuda")):  # the switches need no GPU to be set
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (matmul, cudnn)
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before
    with arithmetic("fp32", torch.device("cpu")):  # the CPU's are never touched
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before


def test_an_unknown_precision_is_refused_naming_the_key():
    values = {"epochs": 1, "batch_size": 2, "optimizer": "sgd", "lr": 0.1, "loss": "pointwise", "select_metric": "MAP"}
    with pytest.raises(ConfigError, match=r"models\.m\.train\.precision: 'fp16' is not of type"):
        parse(TrainConfig, {**values, "precision": "fp16"}, "models.m.train")


def test_a_shape_is_keyed_by_its_precision_torch_when_unsaid():
    c = cfg()
    unsaid = {**c, "train": {k: v for k, v in c["train"].items() if k != "precision"}}
    assert shape(unsaid) == shape(cfg(precision="torch")) != shape(cfg(precision="bf16"))
    assert json.loads(shape(cfg(precision="bf16")))["precision"] == "bf16"
