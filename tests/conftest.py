import os
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


@pytest.fixture(scope="session")
def small_dag(tmp_path_factory, repo_root) -> Path:
    """The small smoke DAG (tests/small_dag.py), built once a session; never changed: tests copy it.
    Under pytest-xdist (`make test`) the workers share one, in their common base folder."""
    from tests.small_dag import build

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's folder, above each worker's
    return build(base, repo_root)
