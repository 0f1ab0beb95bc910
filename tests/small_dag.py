"""A copy of the working tree cut down to a small smoke DAG, built once a test session.

The copy keeps every stage, rule and profile; only its smoke preset and smoke paper spec are cut
down (one seed, two epochs, a random and a QA-CNN run, one metrics table, one stats table, one
learning-curve figure), so processed data, embeddings, trained runs, tables and a figure are
built in about a minute (the session fixture `small_dag`, tests/conftest.py)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from filelock import FileLock

from ansel.config import deep_merge

GIT = ["git", "-c", "user.email=test@ansel", "-c", "user.name=test"]
SMALL = {
    "seeds": 1,
    "scale": {"train": {"epochs": 2}},
    "papers": {p: {"tables": [], "figures": []} for p in ("datasets", "apnet", "ggsa", "amvlstm", "matrix")},
}
SMALL_DATA = {"fetch": {"questions": {"train": 150, "dev": 30, "test": 30, "test1": 30, "test2": 30}}}
PAPER = {
    "paper": "smoke",
    "title": "DVC round trip",
    "tables": [
        {
            "id": "synthetic",
            "caption": "runs",
            "rows": [{"label": "Random", "model": "random"}, {"label": "QA-CNN", "model": "qa_cnn"}],
            "columns": [{"dataset": "synthetic_en", "split": "test", "metric": "MAP"}],
        },
        {
            "id": "stats",
            "kind": "dataset_stats",
            "caption": "data",
            "rows": [{"label": "synthetic", "dataset": "synthetic_en", "splits": ["train", "test"]}],
            "columns": ["questions", "pairs"],
        },
    ],
    "figures": [
        {
            "id": "learning_curves",
            "kind": "learning_curves",
            "dataset": "synthetic_en",
            "metric": "MAP",
            "models": ["qa_cnn"],
            "labels": {"qa_cnn": "QA-CNN"},
        }
    ],
}


def copy_worktree(src: Path, dest: Path) -> None:
    """Tracked and untracked (not ignored) files, links kept: the working tree as a user would commit it."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=src,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, listed):
        if os.path.lexists(src / rel):  # a tracked file deleted in the working tree stays deleted
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / rel, dest / rel, follow_symlinks=False)


def sh(args, cwd: Path, env: dict) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(map(str, args))}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def run_env(repo: Path, site_cache: Path) -> dict:
    # The copy's own code (as its editable install would give), the venv's tools first on PATH.
    return {
        **os.environ,
        "PYTHONPATH": str(repo / "src"),
        "DVC_NO_ANALYTICS": "1",
        "DVC_SITE_CACHE_DIR": str(site_cache),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }


def make_small(repo: Path) -> None:
    """Cut the copy's smoke preset and smoke paper down to SMALL, SMALL_DATA and PAPER."""
    smoke = deep_merge(yaml.safe_load((repo / "presets/smoke.yaml").read_text()), SMALL)
    for name in smoke["datasets"]:  # one synthetic source: its datasets must agree on `fetch`
        smoke["datasets"][name] = deep_merge(smoke["datasets"][name], SMALL_DATA)
    (repo / "presets/smoke.yaml").write_text(yaml.safe_dump(smoke))
    (repo / "workflow/papers/smoke.yaml").write_text(yaml.safe_dump(PAPER))


def build(base: Path, repo_root: Path) -> Path:
    """The small smoke DAG of ``repo_root`` built once under ``base`` (`snakemake all`), its copy's
    folder returned; never changed: tests copy it. Processes sharing ``base`` (pytest-xdist's
    workers) share one: the first builds it under a lock, the others wait for it and read the same."""
    home = base / "small-dag"
    repo, built = home / "repo", home / "built"
    with FileLock(base / "small-dag.lock"):
        if not built.exists():
            shutil.rmtree(home, ignore_errors=True)  # what a build that failed left
            copy_worktree(repo_root, repo)
            make_small(repo)
            env = run_env(repo, home / "dvc-site")
            sh([sys.executable, "-m", "snakemake", "--profile", "workflow/profiles/local", "all"], repo, env)
            built.touch()
    return repo
