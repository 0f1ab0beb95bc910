"""DVC round trip: `dvc repro` + `dvc push`, then a fresh clone and `make pull`'s step
(`python -m ansel.dvc_pull`) restore every output bit for bit, and Snakemake has nothing to do.

The copy of the repository is the small smoke DAG of conftest.py (`wt.make_small`, built once a
session): processed data, embeddings, trained runs, tables and a figure all make the trip.
"""

import filecmp
import subprocess
import sys

import pytest
import yaml


@pytest.mark.slow
@pytest.mark.ci  # nine `dvc repro` stages, a push, a clone and a pull: CI's, after the suite
def test_push_then_pull_in_a_fresh_clone_restores_everything_and_reruns_nothing(built_repo, tmp_path, wt):
    # The session's small DAG, built by Snakemake: `dvc repro` runs every stage's command over it (each
    # finds its outputs up to date) and records them in dvc.lock, as after a `make smoke`.
    origin, fresh, remote = built_repo, tmp_path / "fresh", tmp_path / "remote"
    env = wt.run_env(origin, tmp_path / "dvc-site")
    python = [sys.executable, "-m"]

    wt.sh([*wt.GIT, "init", "-q"], origin, env)
    wt.sh([*python, "dvc", "remote", "add", "--force", "--default", "local", str(remote)], origin, env)
    wt.sh([*wt.GIT, "add", "-A"], origin, env)
    wt.sh([*wt.GIT, "commit", "-qm", "small smoke"], origin, env)
    wt.sh([*python, "dvc", "repro"], origin, env)
    wt.sh([*wt.GIT, "commit", "-qam", "dvc.lock"], origin, env)
    wt.sh([*python, "dvc", "push"], origin, env)

    wt.sh([*wt.GIT, "clone", "-q", str(origin), str(fresh)], tmp_path, env)
    env = wt.run_env(fresh, tmp_path / "dvc-site")
    wt.sh([*python, "ansel.dvc_pull"], fresh / "src" / "ansel", env)  # from a subdirectory: the checkout is found

    dry = wt.sh([*python, "snakemake", "--profile", "workflow/profiles/local", "-n"], fresh, env)
    assert "Nothing to be done" in dry, dry
    pulled, built = wt.tracked_files(fresh), wt.tracked_files(origin)
    assert sorted(pulled) == sorted(built)
    for rel in (
        "data/processed/synthetic_en/vocab.json",
        "data/embeddings/synthetic_en/word2vec-60.npy",
        "results/runs/synthetic_en/qa_cnn/seed1/model.pt",
        "results/tables/smoke/synthetic.json",
        "figures/smoke/learning_curves.png",
    ):
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
