import pytest
import torch

from ansel.models.layers import masked_max, masked_mean, masked_softmax


def test_masked_softmax_is_the_softmax_of_the_real_positions():
    scores = torch.randn(3, 5)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False], [False, True, False, True, False]])
    weights = masked_softmax(scores, mask)
    assert weights[~mask].eq(0).all()
    for row, real in enumerate(mask):
        torch.testing.assert_close(weights[row, real], scores[row, real].softmax(-1))


def test_masked_softmax_changes_no_real_row_and_zeroes_an_empty_one():
    # A padded score underflows to exactly 0 beside a real one, so the mask's product changes
    # no bit of a real row; a row without a real position gets zeros, not a spread over padding.
    scores = torch.randn(4, 6, dtype=torch.float64)
    mask = torch.rand(4, 6) > 0.4
    mask[:3, 0] = True
    mask[3] = False
    plain = scores.masked_fill(~mask, torch.finfo(scores.dtype).min).softmax(-1)
    weights = masked_softmax(scores, mask)
    assert torch.equal(weights[:3], plain[:3])
    assert weights[3].eq(0).all()


def test_masked_softmax_broadcasts_the_mask():
    scores, mask = torch.randn(2, 3, 4, 5), torch.rand(2, 1, 4, 5) > 0.5
    assert masked_softmax(scores, mask)[~mask.expand(2, 3, 4, 5)].eq(0).all()


def test_masked_pooling_ignores_padding_and_empty_text_pools_to_zeros():
    h = torch.tensor([[[1.0], [5.0], [9.0]], [[2.0], [3.0], [9.0]]])
    mask = torch.tensor([[True, True, False], [False, False, False]])
    assert masked_max(h, mask).flatten().tolist() == [5.0, 0.0]
    assert masked_mean(h, mask).flatten().tolist() == pytest.approx([3.0, 0.0])


def test_masked_pooling_in_place_pools_alike_and_passes_gradients():
    """``overwrite``: a temporary is masked in place; the pool, and the gradients through a product
    (which saves its factors, not itself), are those of the copying path, to the bit."""
    torch.manual_seed(0)
    a, b = torch.randn(3, 5, 4, requires_grad=True), torch.randn(3, 5, 4)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False], [False] * 5])
    pooled, grads = [], []
    for overwrite in (False, True):
        product = a * b
        out = masked_max(product, mask, overwrite=overwrite)
        (grad,) = torch.autograd.grad(out.square().sum(), a)
        pooled.append(out)
        grads.append(grad)
        assert product[1, 2:].eq(torch.finfo(product.dtype).min).all() == overwrite  # filled in place, or left
    assert torch.equal(pooled[0], pooled[1]) and torch.equal(grads[0], grads[1])
    assert pooled[1][2].eq(0).all()  # an empty text still pools to zeros


def test_masked_pooling_of_every_step_read_is_the_plain_max_to_the_bit():
    """``every_step`` (fixed-width inputs read whole): a plain max, values and gradients the bits the
    fill would give, h left unfilled even with ``overwrite``."""
    torch.manual_seed(1)
    a = torch.randn(4, 6, 3, requires_grad=True)
    every = torch.ones(4, 6, dtype=torch.bool)
    h = torch.relu(a)  # relu saves its output: a fill in place would break its backward
    out = masked_max(h, every, overwrite=True, every_step=True)
    (grad,) = torch.autograd.grad(out.square().sum(), a)
    plain = torch.relu(a).max(dim=1).values
    (plain_grad,) = torch.autograd.grad(plain.square().sum(), a)
    assert torch.equal(out, plain) and torch.equal(grad, plain_grad)
