import torch
from torch import nn

from ansel.models.compositions import AttentivePooling, MaxPooling, QuestionAttentionPooling
from ansel.models.encoders import BiLSTMEncoder
from ansel.models.layers import masked_mean
from ansel.models.rankers import PairRanker, PooledRanker, Sides, assemble
from ansel.models.scorers import CosineScorer, MLPScorer

VOCAB, DIM = 30, 6


class ContextEncoder(BiLSTMEncoder):
    """Records the question context it is given."""

    def forward(self, x, mask, context=None):
        self.context = context
        return super().forward(x, mask)


def _parts(encoder=BiLSTMEncoder):
    torch.manual_seed(0)
    return nn.Embedding(VOCAB, DIM, padding_idx=0), encoder(DIM, 3)


def test_pooling_without_question_context_is_siamese(padded_pairs):
    q, a = padded_pairs(VOCAB)
    embed, encoder = _parts()
    ranker = assemble(embed, encoder, MaxPooling(), MLPScorer(6, 4))
    assert isinstance(ranker, PooledRanker) and ranker.siamese
    vq, va = ranker.encode_question(q), ranker.encode_answer(a)
    assert vq.shape == va.shape == (4, 6)
    torch.testing.assert_close(ranker(q, a), ranker.scorer(vq, va))
    # the same parts as a pair ranker score the same
    torch.testing.assert_close(PairRanker(Sides(embed, encoder), ranker.pooling, ranker.scorer)(q, a), ranker(q, a))


def test_compositions_over_both_sides_or_a_question_context_make_a_pair_ranker(padded_pairs):
    q, a = padded_pairs(VOCAB)
    embed, encoder = _parts(ContextEncoder)
    for composition, context in ((QuestionAttentionPooling(6), False), (MaxPooling(), True)):
        ranker = assemble(embed, encoder, composition, CosineScorer(), question_context=context)
        assert isinstance(ranker, PairRanker) and not ranker.siamese
        assert ranker(q, a).shape == (4,)
        hq, mq, _, _ = ranker.states(q, a)
        if context:
            torch.testing.assert_close(encoder.context, masked_mean(hq, mq))
        else:
            assert encoder.context is None


def test_attention_is_the_compositions_weights(padded_pairs):
    q, a = padded_pairs(VOCAB)
    embed, encoder = _parts()
    ranker = assemble(embed, encoder, AttentivePooling(6), CosineScorer())
    sigma_q, sigma_a = ranker.attention(q, a)
    expected = ranker.composition.attention(*ranker.states(q, a))
    torch.testing.assert_close(sigma_q, expected[0])
    torch.testing.assert_close(sigma_a, expected[1])
    assert not sigma_q.requires_grad
