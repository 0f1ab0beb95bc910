"""Embedding tables' gradients built in kept buffers: the dense backward's gradient bit for bit, one buffer."""

import copy

import torch
import torch.nn.functional as F

from ansel.models.registry import build_model
from ansel.training.gradient_buffers import keep_gradient_buffers

MV_LSTM = {
    "embedding_dim": 8,
    "hidden": 5,
    "text1_maxlen": 6,
    "text2_maxlen": 12,
    "top_k": 10,
    "freeze_embeddings": False,
    "dropout": 0.0,
    "lstm_dropout": 0.0,
}


def _texts(n: int, length: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 12, (n, length), generator=g)  # 11 words: most rows read many times
    ids[:, length - 2 :] = 0  # padding, whose row gets no gradient
    return ids


def _pairwise_step(model, seed: int) -> None:
    """The trainer's pairwise step: the question read twice, a positive and a negative answer."""
    q, pos, neg = _texts(6, 6, seed), _texts(6, 12, seed + 1), _texts(6, 12, seed + 2)
    F.relu(1.0 - model(q, pos) + model(q, neg)).mean().backward()


def _models():
    torch.manual_seed(0)
    dense = build_model("mv_lstm", MV_LSTM, vocab_size=40, embeddings=torch.randn(40, 8).numpy())
    kept = copy.deepcopy(dense)
    assert [w.shape for w in keep_gradient_buffers(kept)] == [(40, 8)]
    return dense, kept


def test_a_table_read_once_gets_the_dense_gradient_bit_for_bit():
    torch.manual_seed(0)
    dense = torch.nn.Embedding(40, 8, padding_idx=0)
    kept = copy.deepcopy(dense)
    keep_gradient_buffers(kept)
    ids, upstream = _texts(20, 9, seed=3), torch.randn(20, 9, 8)
    for module in (dense, kept):
        (module(ids) * upstream).sum().backward()
    assert torch.equal(dense.weight.grad, kept.weight.grad)
    assert not kept.weight.grad[0].any()  # the padding row
    first = kept.weight.grad  # held on to: a fresh gradient would get another address
    kept.zero_grad(set_to_none=True)
    (kept(ids) * upstream).sum().backward()
    assert kept.weight.grad.data_ptr() == first.data_ptr()


def test_a_table_read_four_times_a_step_gets_the_dense_sum_bit_for_bit_in_one_buffer():
    dense, kept = _models()
    held = []  # each step's gradient held on to: only one kept buffer can give them one address
    for step in range(3):
        for model in (dense, kept):
            model.zero_grad(set_to_none=True)
            _pairwise_step(model, seed=10 * step)
        held.append(kept.embedding.weight.grad)
        for (name, a), b in zip(dense.named_parameters(), kept.parameters()):
            assert torch.equal(b.grad, a.grad), name
    assert len({g.data_ptr() for g in held}) == 1


def test_gradients_accumulate_over_backward_passes_without_zeroing():
    dense, kept = _models()
    for model in (dense, kept):
        _pairwise_step(model, seed=1)
        _pairwise_step(model, seed=2)
    torch.testing.assert_close(kept.embedding.weight.grad, dense.embedding.weight.grad, rtol=1e-6, atol=1e-7)


def test_frozen_and_sparse_tables_are_left_alone():
    frozen = build_model("mv_lstm", {**MV_LSTM, "freeze_embeddings": True}, vocab_size=40)
    assert keep_gradient_buffers(frozen) == []
    sparse = torch.nn.Embedding(40, 8, sparse=True)
    assert keep_gradient_buffers(sparse) == []
