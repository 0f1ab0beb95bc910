"""The tiny-overfit checks every architecture's tests run: Adam on a handful of examples until
the model fits them, then a check in eval mode."""

import torch
import torch.nn.functional as F


def fit(model, loss_fn, steps: int, lr: float) -> None:
    """``steps`` Adam steps on ``loss_fn()`` in train mode; the model is left in eval mode."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        loss = loss_fn()
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


def assert_ranks_positives_first(model, q, pos, neg, margin: float = 1.0, steps: int = 200, lr: float = 0.01):
    """After fitting the hinge loss max(0, margin - s+ + s-), every positive scores above its negative."""
    fit(model, lambda: F.relu(margin - model(q, pos) + model(q, neg)).mean(), steps, lr)
    with torch.no_grad():
        assert bool((model(q, pos) > model(q, neg)).all())


def assert_classifies(model, q, a, labels, steps: int = 200, lr: float = 0.01, accuracy: float = 0.97):
    """After fitting BCE on the score as the match logit (a two-way softmax head's log-odds), the
    sign of the score predicts ``labels`` with at least ``accuracy``."""
    fit(model, lambda: F.binary_cross_entropy_with_logits(model(q, a), labels), steps, lr)
    with torch.no_grad():
        assert ((model(q, a) > 0).float() == labels).float().mean() >= accuracy
