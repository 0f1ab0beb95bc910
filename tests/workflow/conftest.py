"""Helpers of the workflow tests: the small smoke DAG (tests/small_dag.py), built once a session
(`small_dag`, tests/conftest.py); a test that needs it built takes its own copy (`built_repo`), file
times and Snakemake's records kept. ``wt`` hands these helpers to the test modules."""

import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.small_dag import GIT, PAPER, copy_worktree, make_small, run_env, sh  # noqa: F401 (wt.*)


def tracked_files(repo: Path) -> dict[str, Path]:
    """Every file inside the DVC stages' outputs."""
    stages = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"].values()
    outs = [next(iter(o)) if isinstance(o, dict) else o for s in stages for o in s["outs"]]
    return {str(p.relative_to(repo)): p for out in outs for p in (repo / out).rglob("*") if p.is_file()}


@pytest.fixture
def built_repo(small_dag, tmp_path) -> Path:
    """This test's copy of the built small DAG, at tmp_path/'repo': with file times and .snakemake/
    kept, Snakemake has nothing to do there until the test changes something."""
    repo = tmp_path / "repo"
    shutil.copytree(small_dag, repo, symlinks=True)  # copy2: modification times kept
    return repo


@pytest.fixture
def wt():
    """These helpers, for the workflow tests (test modules cannot import each other)."""
    return sys.modules[__name__]
