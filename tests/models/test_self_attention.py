import pytest
import torch

from ansel.models.self_attention import (
    GlobalAttention,
    GlobalInformationGate,
    GroupAttention,
    LocalAttention,
    PositionalEmbedding,
    SelfAttentionEncoder,
    group_index,
    head_offsets,
    sinusoidal_positions,
)

B, L, DIM, HEADS = 3, 11, 12, 3
LENGTHS = torch.tensor([11, 7, 2])


def _mask(lengths, length=L):
    return torch.arange(length)[None, :] < lengths[:, None]


def _encoder(attention, **kw):
    torch.manual_seed(0)
    return SelfAttentionEncoder(DIM, HEADS, attention, ffn_dim=16, **kw).eval()


def _inputs(seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(B, L, DIM, generator=g), _mask(LENGTHS)


def _assert_equal_at_real(a, b, mask):
    torch.testing.assert_close(a[mask], b[mask], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("group_size", [L, L + 5])
def test_one_group_without_offset_is_global_attention(group_size):
    x, mask = _inputs()
    glob = _encoder(GlobalAttention())
    group = _encoder(GroupAttention(group_size, [0] * HEADS))
    group.load_state_dict(glob.state_dict())
    _assert_equal_at_real(group(x, mask)[0], glob(x, mask)[0], mask)
    # gradients too: the real positions' outputs depend on the inputs identically
    grads = []
    for encoder in (group, glob):
        xg = x.clone().requires_grad_()
        (encoder(xg, mask)[0] * mask.unsqueeze(-1)).sum().backward()
        grads.append(xg.grad)
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-4, atol=1e-5)


def test_local_window_of_2l_minus_1_is_global_attention():
    x, mask = _inputs()
    glob = _encoder(GlobalAttention())
    local = _encoder(LocalAttention(2 * L - 1))
    local.load_state_dict(glob.state_dict())
    _assert_equal_at_real(local(x, mask)[0], glob(x, mask)[0], mask)


def test_narrow_local_and_group_attention_differ_from_global():
    x, mask = _inputs()
    glob = _encoder(GlobalAttention())
    for attention in (LocalAttention(3), GroupAttention(3, [0] * HEADS)):
        other = _encoder(attention)
        other.load_state_dict(glob.state_dict())
        assert not torch.allclose(other(x, mask)[0][mask], glob(x, mask)[0][mask], atol=1e-3)


def test_group_index_matches_figure5_offsets():
    # Figure 5: groups of 3; w3 (position 2) is cut off from w4 in an offset-0 head
    # and shares a group with it in a head whose groups start one word later.
    assert group_index(7, 3, 0).tolist() == [0, 0, 0, 1, 1, 1, 2]
    assert group_index(7, 3, 1).tolist() == [0, 1, 1, 1, 2, 2, 2]
    assert group_index(7, 3, 2).tolist() == [0, 0, 1, 1, 1, 2, 2]
    # the paper's setting: groups of 10, offset 5 -> boundaries at 5, 15, ...
    idx = group_index(20, 10, 5)
    assert idx[4] != idx[5] and idx[5] == idx[14] and idx[14] != idx[15]


def _receptive_fields(attention, heads, length, lengths):
    """Which keys each query mixes: equal scores (q = k = 0), one-hot values."""
    zeros = torch.zeros(len(lengths), heads, length, length)
    values = torch.eye(length).expand(len(lengths), heads, length, length)
    return attention(zeros, zeros, values, _mask(lengths, length)) > 0  # [B, heads, query, key]


def test_group_attention_attends_exactly_within_each_heads_groups():
    offsets = [0, 1, 2, 5]
    length, group_size = 13, 3
    lengths = torch.tensor([13, 8])
    fields = _receptive_fields(GroupAttention(group_size, offsets), len(offsets), length, lengths)
    for h, offset in enumerate(offsets):
        idx = group_index(length, group_size, offset)
        same_group = idx[:, None] == idx[None, :]
        for b, n in enumerate(lengths.tolist()):
            expected = same_group & (torch.arange(length) < n)[None, :]
            assert torch.equal(fields[b, h, :n], expected[:n]), (h, offset, b)


@pytest.mark.parametrize("offsets", [[0, 0], [0, 1, 2, 5]])
def test_group_attention_backward_matches_finite_differences(offsets):
    # the backward is written by hand (each gather's gradient is the inverse gather); float64
    # finite differences check every output with padding (groups with no real word among them),
    # offsets and a length that is no multiple of l
    g = torch.Generator().manual_seed(0)
    lengths, length = torch.tensor([9, 4, 1]), 9
    q, k, v = (
        torch.randn(3, len(offsets), length, 3, generator=g, dtype=torch.float64).requires_grad_() for _ in range(3)
    )
    mask = _mask(lengths, length)
    attention = GroupAttention(3, offsets)
    assert torch.autograd.gradcheck(lambda *qkv: attention(*qkv, mask), (q, k, v))


def test_group_attention_gives_padded_words_zeros():
    q, k, v = torch.randn(3, 3, 3, L, 4).unbind(0)
    mask = _mask(torch.tensor([11, 5, 0]))
    out = GroupAttention(4, [0, 2, 1])(q, k, v, mask)
    assert out.transpose(1, 2)[~mask].eq(0).all() and out.transpose(1, 2)[mask].ne(0).all()


def test_head_offsets_of_the_paper():
    assert head_offsets(6, 10, True) == [0, 0, 0, 5, 5, 5]
    assert head_offsets(6, 10, False) == [0] * 6


def test_local_attention_window_is_centred():
    fields = _receptive_fields(LocalAttention(3), 1, 6, torch.tensor([6]))[0, 0]
    assert fields[2].nonzero().flatten().tolist() == [1, 2, 3]  # w3 sees w2, w3, w4 (Figure 4b)
    assert fields[0].nonzero().flatten().tolist() == [0, 1]
    assert fields[5].nonzero().flatten().tolist() == [4, 5]


def test_gate_formula_and_broadcasting():
    torch.manual_seed(0)
    gate = GlobalInformationGate(DIM)
    x, mask = _inputs()
    out = gate(x, mask)
    assert out.shape == x.shape
    for b, n in enumerate(LENGTHS.tolist()):
        real = x[b, :n]
        mean = real.mean(0, keepdim=True)  # [1, D] broadcast over the sentence
        expected = real * torch.sigmoid(gate.linear(real * mean))
        torch.testing.assert_close(out[b, :n], expected)


ENCODERS = {
    "global": lambda: _encoder(GlobalAttention()),
    "local+gate": lambda: _encoder(LocalAttention(4), gate=True, final_norm=False),
    "group+offset+gate": lambda: _encoder(GroupAttention(4, [0, 2, 3]), gate=True, final_norm=False),
}


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_padding_does_not_change_real_positions(name):
    encoder = ENCODERS[name]()
    x, mask = _inputs()
    reference, out_mask = encoder(x, mask)
    assert torch.equal(out_mask, mask)

    noisy = torch.where(mask.unsqueeze(-1), x, torch.randn_like(x) * 100)
    _assert_equal_at_real(encoder(noisy, mask)[0], reference, mask)

    longer = torch.cat([x, torch.randn(B, 9, DIM)], dim=1)
    longer_mask = torch.cat([mask, torch.zeros(B, 9, dtype=torch.bool)], dim=1)
    _assert_equal_at_real(encoder(longer, longer_mask)[0][:, :L], reference, mask)


def test_interaction_uses_the_question_context():
    encoder = _encoder(GroupAttention(4, [0, 2, 2]), gate=True, final_norm=False, interaction=True)
    x, mask = _inputs()
    plain = encoder(x, mask)[0]
    c1, c2 = torch.randn(B, DIM), torch.randn(B, DIM)
    with_c1, with_c2 = encoder(x, mask, context=c1)[0], encoder(x, mask, context=c2)[0]
    assert not torch.allclose(with_c1, plain) and not torch.allclose(with_c1, with_c2)
    with pytest.raises(ValueError, match="interaction"):
        _encoder(GlobalAttention())(x, mask, context=c1)


def test_heads_must_divide_dimension_and_match_offsets():
    with pytest.raises(ValueError, match="divisible"):
        SelfAttentionEncoder(10, 3, GlobalAttention(), 8)
    encoder = SelfAttentionEncoder(DIM, HEADS, GroupAttention(3, [0, 1]), 8)
    with pytest.raises(ValueError, match="2 offsets for 3 heads"):
        encoder(*_inputs())


def test_dropout_applies_before_positions():
    emb = torch.nn.Embedding(20, 8)
    layer = PositionalEmbedding(emb, dropout=1.0).train()  # drops every embedding value
    ids = torch.randint(1, 20, (2, 5))
    torch.testing.assert_close(layer(ids), sinusoidal_positions(5, 8).expand(2, 5, 8))
    table = sinusoidal_positions(3, 4)
    torch.testing.assert_close(
        table[1],
        torch.tensor(
            [
                torch.sin(torch.tensor(1.0)),
                torch.cos(torch.tensor(1.0)),
                torch.sin(torch.tensor(0.01)),
                torch.cos(torch.tensor(0.01)),
            ]
        ),
    )
