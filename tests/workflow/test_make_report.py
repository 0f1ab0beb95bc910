"""`make report` shows one preset's outputs: refused, naming what builds it, where that preset's DAG still
plans jobs (the presets' outputs share their paths: the report would show another preset's files)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.small_dag import run_env

pytestmark = pytest.mark.slow  # runs Snakemake


def make_report(repo: Path, preset: str, env: dict) -> subprocess.CompletedProcess:
    venv = Path(sys.executable).parent.parent  # this interpreter's, never reinstalled (-o: its stamp counts as done)
    args = ["make", "report", f"PRESET={preset}", f"VENV={venv}", "-o", f"{venv}/.installed"]
    return subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True)


def test_make_report_refuses_a_preset_whose_dag_is_not_built_and_reports_a_built_one(small_dag, tmp_path):
    """A new user's audit: `make report PRESET=cpu` after only `make smoke` wrote a report of the smoke
    results (exit 0, thousands of "Missing metadata" warnings)."""
    repo = tmp_path / "repo"
    shutil.copytree(small_dag, repo, symlinks=True)
    env = run_env(repo, tmp_path / "dvc-site")
    refused = make_report(repo, "cpu", env)
    assert refused.returncode != 0 and not (repo / "results/report.html").exists()
    said = [line for line in refused.stderr.splitlines() if line.startswith("make report:")]
    assert len(said) == 1 and said[0].startswith("make report: the cpu preset's DAG is not built and up to date")
    assert said[0].endswith("jobs): build it first: make cpu")
    built = make_report(repo, "smoke", env)  # the small smoke DAG, built
    assert built.returncode == 0, built.stderr[-3000:]
    assert (repo / "results/report.html").stat().st_size > 0
