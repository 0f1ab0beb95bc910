from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _deterministic_torch():
    torch.manual_seed(0)
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT

