"""Large parameters stepped in row blocks: the same numbers as torch's optimizer over the whole."""

import pytest
import torch

from ansel.training.row_blocks import RowBlocks

OPTIMIZERS = {
    "adadelta": lambda p: torch.optim.Adadelta(p, lr=1.0, rho=0.95, eps=1e-7, weight_decay=0.01),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-3, weight_decay=0.01),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=1e-3, momentum=0.9),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=0.1),
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
}


def _params(seed: int = 0) -> list[torch.Tensor]:
    torch.manual_seed(seed)  # a 103 x 7 table (15 blocks of 7 rows at 50 elements, the last of 5) and a bias
    return [torch.randn(103, 7, requires_grad=True), torch.randn(5, requires_grad=True)]


def _steps(optimizer, params, grads) -> None:
    for step in grads:
        for p, g in zip(params, step):
            p.grad = None if g is None else g.clone()
        optimizer.step()
        optimizer.zero_grad()


def _grads(params, n: int, seed: int = 1) -> list[list]:
    torch.manual_seed(seed)  # step 3: no gradient at all (a parameter the batch did not reach)
    return [[None if s == 3 else torch.randn_like(p) for p in params] for s in range(n)]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_row_blocks_step_exactly_as_the_optimizer_over_whole_parameters(name):
    whole, blocked = _params(), _params()
    plain, rows = OPTIMIZERS[name](whole), RowBlocks(OPTIMIZERS[name], blocked, block=50)
    assert len(rows.param_groups[0]["params"]) == 16  # the table's 15 blocks, the bias whole
    grads = _grads(whole, 6)
    _steps(plain, whole, grads)
    _steps(rows, blocked, grads)
    assert all(torch.equal(a, b) for a, b in zip(whole, blocked))
    assert all(p.grad is None for p in blocked) and all(v.grad is None for v in rows.param_groups[0]["params"])


@pytest.mark.parametrize("name", ["adadelta", "adam"])
def test_a_saved_state_resumes_in_either_layout(name):
    """The blocks' own state, and a whole-parameter one (torch's optimizer over the unsplit table, as
    a run interrupted before row blocks saved it): the resumed steps end where uninterrupted ones do."""
    grads = _grads(_params(), 8)
    reference = _params()
    _steps(OPTIMIZERS[name](reference), reference, grads)
    for make_first in (lambda p: RowBlocks(OPTIMIZERS[name], p, block=50), OPTIMIZERS[name]):
        first = _params()
        saved = make_first(first)
        _steps(saved, first, grads[:4])
        resumed = [p.detach().clone().requires_grad_() for p in first]
        again = RowBlocks(OPTIMIZERS[name], resumed, block=50)
        again.load_state_dict(saved.state_dict())
        _steps(again, resumed, grads[4:])
        assert all(torch.equal(a, b) for a, b in zip(reference, resumed))


def test_small_parameters_are_handed_whole():
    params = [torch.randn(3, 4, requires_grad=True), torch.randn(4, requires_grad=True)]
    rows = RowBlocks(OPTIMIZERS["adam"], params, block=50)
    assert rows.param_groups[0]["params"] == params and rows.split == []
