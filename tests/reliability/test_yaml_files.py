"""params.yaml, presets, paper specs, sources.yaml and records.yaml read strictly: a syntax error
or a key given twice names the file and the line, before Snakemake or a job runs."""

import subprocess
import sys

import pytest

from ansel.settings import ConfigError
from ansel.yamlfile import read_yaml


def test_a_key_given_twice_is_refused_naming_file_and_lines(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("seeds: 5\ntrain:\n  lr: 0.1\n  epochs: 3\n  lr: 0.2\n")
    with pytest.raises(ConfigError, match=rf"{path}:5: key 'lr' given twice in one mapping \(first on line 3\)"):
        read_yaml(path)


def test_a_merge_may_override_what_it_brings_in(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("a: &a {lr: 1, n: 2}\nb: {<<: *a, lr: 3}\n")
    assert read_yaml(path)["b"] == {"lr": 3, "n": 2}


def test_a_syntax_error_names_file_line_and_column(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("seeds: 5\ntrain: {lr: 0.1\nmodels: {}\n")
    with pytest.raises(ConfigError, match=rf"{path}:3:\d+: not valid YAML"):
        read_yaml(path)


def test_snakemake_names_the_line_of_a_broken_params_yaml(repo_root, tmp_path):
    from tests.small_dag import copy_worktree, run_env

    repo = tmp_path / "repo"
    copy_worktree(repo_root, repo)
    params = repo / "params.yaml"
    params.write_text(params.read_text().replace("seeds:", "seeds: [", 1))
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=run_env(repo, tmp_path / "dvc"),
    )
    assert done.returncode != 0
    assert "params.yaml:" in done.stdout + done.stderr and "not valid YAML" in done.stdout + done.stderr


def test_a_truncated_vectors_array_and_metrics_json_name_their_file(tmp_path, monkeypatch):
    import numpy as np

    from ansel.embeddings import load_matrix, save_matrix
    from ansel.report.tables import run_metric
    from ansel.targets import Run, Variant

    vectors = tmp_path / "data/embeddings/d/word2vec-60.npy"  # the pipeline's own: made again by its target
    vectors.parent.mkdir(parents=True)
    save_matrix(vectors, np.ones((50, 60), dtype=np.float32))
    vectors.write_bytes(vectors.read_bytes()[:500])
    with pytest.raises(ValueError, match=rf"{vectors}: corrupt or cut short .*; delete it and rerun its target"):
        load_matrix(vectors)
    monkeypatch.chdir(tmp_path)
    metrics = tmp_path / "results/runs/d/m/seed1/metrics.json"
    metrics.parent.mkdir(parents=True)
    metrics.write_text('{"test": {"MAP": 0.5')
    with pytest.raises(ValueError, match=r"results/runs/d/m/seed1/metrics.json: not valid JSON"):
        run_metric(Run("d", Variant("m"), 1), "test", "MAP")
