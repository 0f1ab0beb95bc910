import os
import subprocess
from pathlib import Path

import pytest
import torch

from tests.small_dag import build

ROOT = Path(__file__).resolve().parents[1]


# The longest test files (seconds of their tests in a fresh clone's `make test`, 2026-11-29: 326, 123, 70, 68,
# 52, 45; 1,097 in all) are handed to pytest-xdist's workers first: `make test` gives each worker a file at a
# time in collection order (`--dist loadfile --no-loadscope-reorder`), so no long file starts last and leaves
# the other core idle at the end.
LONGEST_FIRST = (
    "tests/test_docs_commands.py",
    "tests/workflow/test_stages.py",
    "tests/gpukit/test_rehearsal.py",
    "tests/reliability/test_forkserver.py",
    "tests/training/test_trainer.py",
    "tests/workflow/test_collect_record.py",
)


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: the rest as collected


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
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's folder, above each worker's
    return build(base, repo_root)


# The suite leaves its checkout's data and records as it found them: a test writes into a copy
# (tests/small_dag.py, a checkout of links under ANSEL_ROOT) or tmp_path, never into the checkout,
# but where it is asked to (CI's screenshot of the HTML report, ANSEL_REPORT_SCREENSHOT).
WATCHED = ("data", "results", "reports")
_STATE = pytest.StashKey[str]()


def _checkout_state() -> str:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--untracked-files=all", "--", *WATCHED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},  # a status that never rewrites the index
    )
    if done.returncode:
        return ""  # not a git checkout: nothing to compare
    asked = os.environ.get("ANSEL_REPORT_SCREENSHOT")
    lines = done.stdout.splitlines()
    return "\n".join(line for line in lines if not asked or (ROOT / line[3:]).resolve() != Path(asked).resolve())


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):  # pytest-xdist's controller, or a run without it
        session.config.stash[_STATE] = _checkout_state()


def pytest_sessionfinish(session, exitstatus):
    before = session.config.stash.get(_STATE, None)
    if before is None:
        return
    changed = set(_checkout_state().splitlines()) ^ set(before.splitlines())
    if changed:
        session.config.pluginmanager.get_plugin("terminalreporter").write_line(
            f"\nthe tests changed the checkout's {', '.join(WATCHED)}: {sorted(changed)[:10]}", red=True
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
