import pytest
import torch


@pytest.fixture
def padded_pairs():
    """make(vocab, seed) -> (q [4, 5], a [4, 9]) random token ids, some rows right-padded with 0."""

    def make(vocab: int, seed: int = 0, b: int = 4, lq: int = 5, la: int = 9):
        g = torch.Generator().manual_seed(seed)
        q = torch.randint(1, vocab, (b, lq), generator=g)
        a = torch.randint(1, vocab, (b, la), generator=g)
        q[1, 3:] = 0
        a[0, 4:] = 0
        a[2, 7:] = 0
        return q, a

    return make
