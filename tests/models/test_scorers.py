import pytest
import torch
import torch.nn.functional as F

from ansel.models.hparams import SCORERS
from ansel.models.scorers import MLPScorer, SumOverHops, make_scorer


def test_mlp_score_is_positive_class_log_odds():
    torch.manual_seed(0)
    scorer = MLPScorer(5, 7)
    vq, va = torch.randn(3, 5), torch.randn(3, 5)
    p = scorer.mlp(torch.cat([vq, va], -1)).softmax(-1)
    torch.testing.assert_close(torch.sigmoid(scorer(vq, va)), p[:, 1])


@pytest.mark.parametrize("name", SCORERS)
def test_every_configurable_scorer_gives_one_score_per_pair_and_sums_over_hops(name):
    scorer = make_scorer(name, 4)
    vq, va = torch.randn(3, 2, 4), torch.randn(3, 2, 4)
    assert scorer(vq[:, 0], va[:, 0]).shape == (3,)
    torch.testing.assert_close(SumOverHops(scorer)(vq, va), scorer(vq[:, 0], va[:, 0]) + scorer(vq[:, 1], va[:, 1]))
    with pytest.raises(ValueError, match="unknown scorer"):
        make_scorer("nope", 4)


def test_cosine_scorer_is_the_cosine():
    vq, va = torch.randn(3, 4), torch.randn(3, 4)
    torch.testing.assert_close(make_scorer("cosine", 4)(vq, va), F.cosine_similarity(vq, va, dim=-1))
