from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _deterministic_torch():
    # one thread: tiny models train faster without hand-offs on a contended 2-core machine
    torch.manual_seed(0)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT
