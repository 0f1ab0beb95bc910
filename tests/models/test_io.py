import pickle

import pytest
import torch

from ansel.models.io import WeightsMismatchError, build_model, load_model, save_torch
from ansel.settings import InputError

CFG = {"model": "ap", "arch": "ap_cnn", "hparams": {"embedding_dim": 8, "filters": 6, "kernel": 3}}


def test_saved_weights_load_into_the_runs_model_in_eval_mode(tmp_path, padded_pairs):
    model = build_model(CFG["arch"], CFG["hparams"], 30)
    save_torch(model.state_dict(), tmp_path / "model.pt")
    assert [p.name for p in tmp_path.iterdir()] == ["model.pt"]
    torch.manual_seed(1)  # another initialisation: every weight must come from the file
    loaded = load_model(CFG, 30, tmp_path / "model.pt")
    assert not loaded.training
    for (name, p), (_, saved) in zip(loaded.state_dict().items(), model.state_dict().items()):
        assert torch.equal(p, saved), name
    q, a = padded_pairs(30)
    with torch.no_grad():
        torch.testing.assert_close(loaded(q, a), model.eval()(q, a))


def test_a_failed_save_leaves_the_previous_file_whole(tmp_path):
    path = tmp_path / "model.pt"
    save_torch({"w": torch.ones(2)}, str(path))
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        save_torch({"w": torch.zeros(2), "bad": lambda: None}, path)
    assert torch.equal(torch.load(path, weights_only=True)["w"], torch.ones(2))
    assert [p.name for p in tmp_path.iterdir()] == ["model.pt"]  # no partial temporary


def test_unknown_arch_names_the_config_key():
    with pytest.raises(ValueError, match=r"^models\.ap: unknown arch 'nope'"):
        load_model({**CFG, "arch": "nope"}, 30, "missing.pt")


def test_weights_of_other_model_code_are_refused_naming_the_file(tmp_path):
    cfg = {"model": "m", "arch": "qa_cnn", "hparams": {"embedding_dim": 8, "filters": 4}}
    save_torch({"embedding.weight": torch.zeros(10, 8)}, tmp_path / "model.pt")  # an older module layout
    with pytest.raises(WeightsMismatchError, match=r"model\.pt: these weights do not fit 'qa_cnn'"):
        load_model(cfg, 10, tmp_path / "model.pt")


def test_weights_of_another_vocabulary_say_so_in_one_line(tmp_path):
    """A dataset preprocessed again since the run trained (by hand: the pipeline retrains it): the
    error names the vocabulary's size, in one line (``ansel evaluate`` prints InputErrors so)."""
    cfg = {"model": "m", "arch": "qa_cnn", "hparams": {"embedding_dim": 8, "filters": 4}}
    save_torch(build_model("qa_cnn", cfg["hparams"], 10, None, "models.m").state_dict(), tmp_path / "model.pt")
    with pytest.raises(WeightsMismatchError, match=r"and a vocabulary of 12 words .*preprocessed again") as e:
        load_model(cfg, 12, tmp_path / "model.pt")
    assert isinstance(e.value, InputError) and "\n" not in str(e.value) and "torch.Size([10, 8])" in str(e.value)
