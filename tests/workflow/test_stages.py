"""The DAG's stages: settings refused before anything runs, evaluation as its own rule, the
project root is the working checkout, and `snakemake --lint` clean but for environments."""
import subprocess
import sys

import pytest
import yaml

pytestmark = pytest.mark.slow


def _snakemake(repo, *args, env=None, check=False):
    out = subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=repo, env=env, capture_output=True, text=True)
    if check:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


def test_lint_reports_nothing_but_missing_environments(repo_root):
    out = _snakemake(repo_root, "--lint")
    text = out.stdout + out.stderr
    lints = [line.strip() for line in text.splitlines() if line.startswith("    * ")]
    assert lints, text  # the linter ran: every rule lacks an environment (the project's venv runs them)
    assert set(lints) == {"* Specify a conda environment or container for each rule.:"}, text


@pytest.mark.parametrize("override,message", [
    ({"datasets": {"synthetic_en": {"eval": {"splits": ["dev", "tset"]}}}},
     "datasets.synthetic_en.eval.splits: 'tset' not among the dataset's splits"),
    ({"models": {"qa_cnn": {"train": {"negatives": {"strategy": "sampled_max", "n": 0}}}}},
     "models.qa_cnn.train.negatives.n: 0 is less than the minimum of 1"),  # params.schema.yaml's range
    ({"models": {"ggsa_ggsa_max_insuranceqa": {"hparams": {"heads": 0}}}},
     "models.ggsa_ggsa_max_insuranceqa.hparams.heads"),
    ({"models": {"ggsa_ggsa_max_insuranceqa": {"hparams": {"heads": -6}}}},
     "models.ggsa_ggsa_max_insuranceqa.hparams.heads"),
    ({"models": {"ggsa_ggsa_max_insuranceqa": {"hparams": {"heads": 7}}}},
     "models.ggsa_ggsa_max_insuranceqa.hparams.heads: 7 does not divide"),
    ({"models": {"qa_cnn": {"train": {"dev_split": "valid"}}}}, "models.qa_cnn.train.dev_split: 'valid'"),
])
def test_a_bad_setting_is_refused_by_a_dry_run_naming_its_key(repo_root, tmp_path, override, message):
    overrides = tmp_path / "bad.yaml"
    overrides.write_text(yaml.safe_dump(override))
    out = _snakemake(repo_root, "-n", "--cores", "1", "--configfile", str(overrides))  # over params.yaml and its preset
    assert out.returncode != 0
    assert message in out.stdout + out.stderr, out.stdout + out.stderr
    assert "Job stats" not in out.stdout  # refused before a DAG was planned


def _planned(dry_run: str) -> set[str]:
    return {line.split()[1].rstrip(":") for line in dry_run.splitlines() if line.startswith("rule ")}


def test_evaluation_is_a_stage_of_its_own(repo_root, tmp_path, wt):
    """Metric code changes plan evaluate jobs (and what reads their metrics), never training;
    a failed evaluation keeps the trained weights."""
    repo = tmp_path / "repo"
    wt.copy_worktree(repo_root, repo)
    wt.make_small(repo)
    env = wt.run_env(repo, tmp_path / "dvc-site")
    profile = ["--profile", "workflow/profiles/local"]
    _snakemake(repo, *profile, "all", env=env, check=True)
    assert "Nothing to be done" in _snakemake(repo, *profile, "-n", env=env, check=True).stdout

    (repo / "src/ansel/evaluation/metrics.py").write_text((repo / "src/ansel/evaluation/metrics.py").read_text() + "\n")
    planned = _planned(_snakemake(repo, *profile, "-n", env=env, check=True).stdout)
    assert "evaluate" in planned and not planned & {"train", "preprocess", "embeddings", "download"}, planned
    _snakemake(repo, *profile, "all", env=env, check=True)

    run = repo / "results/runs/synthetic_en/qa_cnn/seed1"
    weights = (run / "model.pt").read_bytes()
    (run / "dev_scores.pt").write_bytes(b"")  # an input of evaluate only: its job fails reading it
    failed = _snakemake(repo, *profile, str((run / "metrics.json").relative_to(repo)), env=env)
    assert failed.returncode != 0 and "evaluate" in failed.stdout + failed.stderr
    assert (run / "model.pt").read_bytes() == weights and not (run / "metrics.json").exists()


def test_a_non_editable_install_reads_the_checkout_it_runs_in(repo_root, tmp_path, wt):
    """`pip install .` (no editable link back to a checkout): presets, specs and schemas come from
    the working checkout, here a second one with a preset of its own."""
    site, clone = tmp_path / "site", tmp_path / "second"
    wt.copy_worktree(repo_root, clone)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(clone)], check=True, capture_output=True)
    mine = {**yaml.safe_load((clone / "presets/smoke.yaml").read_text()), "seeds": 1}
    (clone / "presets/mine.yaml").write_text(yaml.safe_dump(mine))  # this clone's alone
    env = {**wt.run_env(clone, tmp_path / "dvc-site"), "PYTHONPATH": str(site)}
    where = subprocess.run([sys.executable, "-c", "import ansel; print(ansel.__file__)"], cwd=clone, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(site)), where
    out = _snakemake(clone, "-n", "--cores", "1", "--config", "preset=mine", env=env, check=True).stdout
    assert "results/runs/synthetic_en/qa_cnn/seed1" in out and "seed2" not in out
