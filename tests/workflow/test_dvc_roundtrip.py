"""DVC round trip: `dvc repro` + `dvc push`, then a fresh clone and `make pull`'s step
(`python -m ansel.dvc_pull`) restore every output bit for bit, and Snakemake has nothing to do.

The copy of the repository keeps every stage, rule and profile; only its smoke preset and smoke
paper spec are cut down (one seed, two epochs, a random and a QA-CNN run, one metrics table, one
stats table, one learning-curve figure), so processed data, embeddings, a trained run, tables and
a figure all make the trip in about a minute.
"""
import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansel.config import deep_merge

GIT = ["git", "-c", "user.email=test@ansel", "-c", "user.name=test"]
SMALL = {
    "seeds": 1,
    "scale": {"train": {"epochs": 2}},
    "papers": {p: {"tables": [], "figures": []} for p in ("datasets", "apnet", "ggsa")},
}
SMALL_DATA = {"fetch": {"questions": {"train": 150, "dev": 30, "test": 30, "test1": 30, "test2": 30}}}
PAPER = {
    "paper": "smoke",
    "title": "DVC round trip",
    "tables": [
        {"id": "synthetic", "caption": "runs", "rows": [{"label": "Random", "model": "random"},
                                                        {"label": "QA-CNN", "model": "qa_cnn"}],
         "columns": [{"dataset": "synthetic_en", "split": "test", "metric": "MAP"}]},
        {"id": "stats", "kind": "dataset_stats", "caption": "data",
         "rows": [{"label": "synthetic", "dataset": "synthetic_en", "splits": ["train", "test"]}],
         "columns": ["questions", "pairs"]},
    ],
    "figures": [{"id": "learning_curves", "kind": "learning_curves", "dataset": "synthetic_en",
                 "metric": "MAP", "models": ["qa_cnn"], "labels": {"qa_cnn": "QA-CNN"}}],
}


def _copy_worktree(src: Path, dest: Path) -> None:
    """Tracked and untracked (not ignored) files, links kept: the working tree as a user would commit it."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=src, capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if os.path.lexists(src / rel):  # a tracked file deleted in the working tree stays deleted
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / rel, dest / rel, follow_symlinks=False)


def _sh(args, cwd: Path, env: dict) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(map(str, args))}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def _env(repo: Path, site_cache: Path) -> dict:
    # The copy's own code (as its editable install would give), the venv's tools first on PATH.
    return {**os.environ, "PYTHONPATH": str(repo / "src"), "DVC_NO_ANALYTICS": "1",
            "DVC_SITE_CACHE_DIR": str(site_cache),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def _tracked_files(repo: Path) -> dict[str, Path]:
    """Every file inside the DVC stages' outputs."""
    stages = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"].values()
    outs = [next(iter(o)) if isinstance(o, dict) else o for s in stages for o in s["outs"]]
    return {str(p.relative_to(repo)): p for out in outs for p in (repo / out).rglob("*") if p.is_file()}


@pytest.mark.slow
def test_push_then_pull_in_a_fresh_clone_restores_everything_and_reruns_nothing(repo_root, tmp_path):
    origin, fresh, remote = tmp_path / "origin", tmp_path / "fresh", tmp_path / "remote"
    _copy_worktree(repo_root, origin)
    smoke = deep_merge(yaml.safe_load((origin / "presets/smoke.yaml").read_text()), SMALL)
    for name in ("synthetic_en", "synthetic_zh"):  # one synthetic source: both must agree on `fetch`
        smoke["datasets"][name] = deep_merge(smoke["datasets"][name], SMALL_DATA)
    (origin / "presets/smoke.yaml").write_text(yaml.safe_dump(smoke))
    (origin / "workflow/papers/smoke.yaml").write_text(yaml.safe_dump(PAPER))
    env = _env(origin, tmp_path / "dvc-site")
    python = [sys.executable, "-m"]

    _sh([*GIT, "init", "-q"], origin, env)
    _sh([*python, "dvc", "remote", "add", "--force", "--default", "local", str(remote)], origin, env)
    _sh([*GIT, "add", "-A"], origin, env)
    _sh([*GIT, "commit", "-qm", "small smoke"], origin, env)
    _sh([*python, "dvc", "repro"], origin, env)
    _sh([*GIT, "commit", "-qam", "dvc.lock"], origin, env)
    _sh([*python, "dvc", "push"], origin, env)

    _sh([*GIT, "clone", "-q", str(origin), str(fresh)], tmp_path, env)
    env = _env(fresh, tmp_path / "dvc-site")
    _sh([*python, "ansel.dvc_pull"], fresh, env)

    dry = _sh([*python, "snakemake", "--profile", "workflow/profiles/local", "-n"], fresh, env)
    assert "Nothing to be done" in dry, dry
    pulled, built = _tracked_files(fresh), _tracked_files(origin)
    assert sorted(pulled) == sorted(built)
    for rel in ("data/processed/synthetic_en/vocab.json", "data/embeddings/synthetic_en/word2vec-60.npy",
                "results/runs/synthetic_en/qa_cnn/seed1/model.pt", "results/tables/smoke/synthetic.json",
                "figures/smoke/learning_curves.png"):
        assert rel in built, rel
    differ = [rel for rel in built if not filecmp.cmp(built[rel], pulled[rel], shallow=False)]
    assert differ == []

    # A workspace that no longer matches dvc.lock (here a param) keeps its file times: nothing is touched.
    params = yaml.safe_load((fresh / "params.yaml").read_text())
    (fresh / "params.yaml").write_text(yaml.safe_dump({**params, "seeds": params["seeds"] + 1}, sort_keys=False))
    mtimes = {rel: p.stat().st_mtime_ns for rel, p in pulled.items()}
    refused = subprocess.run([*python, "ansel.dvc_pull"], cwd=fresh, env=env, capture_output=True, text=True)
    assert refused.returncode != 0 and "dvc status" in refused.stderr and "seeds" in refused.stderr
    assert {rel: p.stat().st_mtime_ns for rel, p in pulled.items()} == mtimes
