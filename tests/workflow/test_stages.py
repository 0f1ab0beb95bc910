"""The DAG's stages: settings refused before anything runs, evaluation as its own rule, the
project root is the working checkout, and `snakemake --lint` clean but for environments."""

import contextlib
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansel import cli
from tests.data.reference_loading import assert_loads_as_reference
from tests.tiny_run import tiny_qa_cnn, train_args
from tests.training.corpus import processed_synthetic

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


@pytest.mark.parametrize(
    "override,message",
    [
        (
            {"datasets": {"synthetic_en": {"eval": {"splits": ["dev", "tset"]}}}},
            "datasets.synthetic_en.eval.splits: 'tset' not among the dataset's splits",
        ),
        (
            {"models": {"qa_cnn": {"train": {"negatives": {"strategy": "sampled_max", "n": 0}}}}},
            "models.qa_cnn.train.negatives.n: 0 is less than the minimum of 1",
        ),  # params.schema.yaml's range
        (
            {"models": {"ggsa_ggsa_max_insuranceqa": {"hparams": {"heads": 0}}}},
            "models.ggsa_ggsa_max_insuranceqa.hparams.heads",
        ),
        (
            {"models": {"ggsa_ggsa_max_insuranceqa": {"hparams": {"heads": -6}}}},
            "models.ggsa_ggsa_max_insuranceqa.hparams.heads",
        ),
        (
            {"models": {"ggsa_ggsa_max_insuranceqa": {"hparams": {"heads": 7}}}},
            "models.ggsa_ggsa_max_insuranceqa.hparams.heads: 7 does not divide",
        ),
        ({"models": {"qa_cnn": {"train": {"dev_split": "valid"}}}}, "models.qa_cnn.train.dev_split: 'valid'"),
        (
            {"models": {"qa_cnn": {"train": {"epochs": -1}}}},
            "models.qa_cnn.train.epochs: -1 is less than the minimum of 0",
        ),
        (
            {"models": {"qa_cnn": {"train": {"monitor_every": 0}}}},
            "models.qa_cnn.train.monitor_every: 0 is less than the minimum of 1",
        ),
        (
            {
                "preset": "cpu",
                "models": {"qa_cnn": {"train": {"monitor_every": 5}}},
            },  # smoke's scale sets every cadence
            "models.qa_cnn.train.monitor_every: scores the monitor splits, and monitor_splits names none",
        ),
        (
            {"models": {"qa_cnn": {"train": {"margin": -1}}}},
            "models.qa_cnn.train.margin: -1 is less than or equal to the minimum of 0",
        ),
    ],
)
def test_a_bad_setting_is_refused_by_a_dry_run_naming_its_key(repo_root, tmp_path, override, message):
    overrides = tmp_path / "bad.yaml"
    overrides.write_text(yaml.safe_dump(override))
    out = _snakemake(repo_root, "-n", "--cores", "1", "--configfile", str(overrides))  # over params.yaml and its preset
    assert out.returncode != 0
    assert message in out.stdout + out.stderr, out.stdout + out.stderr
    assert "Job stats" not in out.stdout  # refused before a DAG was planned


@pytest.mark.parametrize(
    "target,preset,message",
    [
        (
            "data/embeddings/wikqa/word2vec-300.npy",
            "smoke",
            "dataset 'wikqa' is not configured under the preset 'smoke' (typo of 'wikiqa'?); known: synthetic_en,",
        ),
        ("data/raw/wikqa/manifest.json", "smoke", "source 'wikqa' is not configured under the preset 'smoke' (typo of"),
        (
            "results/tables/apnet/datasets.md",
            "cpu",
            "table apnet/datasets: not a table the preset 'cpu' builds (its tables of apnet: wikiqa,",
        ),
        (
            "results/runs/synthetic_en/apnet_qa_cnn_wikiq/seed1/metrics.json",
            "smoke",
            "(typo of 'results/runs/synthetic_en/apnet_qa_cnn_wikiqa/seed1'?)",
        ),
        (
            "results/runs/synthetic_en/apnet_qa_cnn_wikiqa/seed9/metrics.json",
            "smoke",
            "seed9: not a run of the preset's tables or figures: the preset trains seeds [1, 2] of it",
        ),
        (
            "results/runs/wikiqa/matrix_mtas/seed1/metrics.json",
            "cpu",
            "seed1: not a run of the preset's tables or figures: the preset trains matrix_mtas on cmeddialog only; "
            "a pairing no table makes is trained by hand (`ansel train`, docs/running.md)",
        ),
    ],
)
def test_a_target_outside_the_preset_is_refused_by_a_dry_run_naming_it(repo_root, target, preset, message):
    """A misspelt dataset, source or run, or a table the preset does not build: refused while the DAG is
    built, as a run outside the preset is, not planned to fail (a KeyError, a download nowhere)."""
    out = _snakemake(repo_root, "-n", "--cores", "1", target, "--config", f"preset={preset}")
    assert out.returncode != 0
    assert message in out.stdout + out.stderr, out.stdout + out.stderr
    assert "KeyError" not in out.stdout + out.stderr and "Job stats" not in out.stdout


def _planned(dry_run: str) -> set[str]:
    return {line.split()[1].rstrip(":") for line in dry_run.splitlines() if line.startswith("rule ")}


def test_the_small_dags_processed_datasets_load_for_a_run_as_the_per_text_references_give_them(small_dag):
    processed = sorted(p for p in (small_dag / "data/processed").iterdir() if (p / "vocab.json").exists())
    assert processed
    for p in processed:
        assert_loads_as_reference(p)


@pytest.fixture
def built(built_repo, tmp_path, wt):
    """A copy of the working tree cut to the small smoke DAG, built: (repo, env, profile)."""
    env = wt.run_env(built_repo, tmp_path / "dvc-site")
    return built_repo, env, ["--profile", "workflow/profiles/local"]


@pytest.mark.ci  # three Snakemake runs over the small DAG (~1-2 min): CI's, after the suite
def test_evaluation_is_a_stage_of_its_own(built):
    """Metric code changes plan evaluate jobs (and what reads their metrics), never training;
    a failed evaluation keeps the trained weights."""
    repo, env, profile = built
    assert "Nothing to be done" in _snakemake(repo, *profile, "-n", env=env, check=True).stdout

    (repo / "src/ansel/evaluation/metrics.py").write_text((repo / "src/ansel/evaluation/metrics.py").read_text() + "\n")
    planned = _planned(_snakemake(repo, *profile, "-n", env=env, check=True).stdout)
    assert "evaluate" in planned and not planned & {"train", "preprocess", "embeddings", "download"}, planned
    _snakemake(repo, *profile, "all", env=env, check=True)

    run = repo / "results/runs/synthetic_en/qa_cnn/seed1"
    weights = (run / "model.pt").read_bytes()
    (run / "dev_scores.pt").write_bytes(b"")  # an input of the evaluate rules only: its job fails reading it
    failed = _snakemake(repo, *profile, str((run / "metrics.json").relative_to(repo)), env=env)
    assert failed.returncode != 0 and "evaluate" in failed.stdout + failed.stderr
    assert (run / "model.pt").read_bytes() == weights and not (run / "metrics.json").exists()


_reads: list[Path] | None = None  # the files opened for reading while _files_read records


def _record_read(event: str, args: tuple) -> None:
    if event == "open" and _reads is not None and isinstance(args[0], str | os.PathLike):
        path, mode, flags = args
        if (mode is None and not flags & (os.O_WRONLY | os.O_RDWR)) or (mode and not set(mode) & set("wax+")):
            _reads.append(Path(path).resolve())


@functools.cache
def _audit_hook() -> None:
    sys.addaudithook(_record_read)  # once a process: an audit hook cannot be removed


@contextlib.contextmanager
def _files_read():
    """The files (resolved) opened for reading inside the block, by any library."""
    global _reads
    _audit_hook()
    _reads = []
    try:
        yield _reads
    finally:
        _reads = None


def _evaluate_rules_inputs(repo_root, run: str) -> dict[str, set[str]]:
    """{rule: names of its inputs inside ``run``, a run of the DAG} of the evaluate rules, from a dry run of
    their targets."""
    targets = (f"{run}/metrics.json", f"{run}/metrics_last.json")
    dry_run = _snakemake(repo_root, "--profile", "workflow/profiles/local", "-n", *targets, check=True).stdout
    inputs, rule = {}, None
    for line in dry_run.splitlines():
        if line.startswith("rule "):
            rule = line.split()[1].rstrip(":")
        elif rule in ("evaluate", "evaluate_last") and line.strip().startswith("input:"):
            paths = map(Path, line.split("input:")[1].strip().split(", "))
            inputs[rule] = {p.name for p in paths if p.parent == Path(run)}
    return inputs


def test_the_evaluate_rules_list_every_run_file_their_command_reads(repo_root, tmp_path):
    """Snakemake reruns a job when one of its inputs changes and plans the producer of a missing one: each
    file of the run that `ansel evaluate` (rule evaluate) or `ansel evaluate --last` (evaluate_last) reads
    is an input of its rule, but model_last.pt, which training writes beside model.pt (an input) under
    train.keep_last only, so no rule declares it."""
    processed = processed_synthetic(tmp_path / "raw", tmp_path / "processed", {"train": 60, "dev": 20, "test": 20})
    run = tmp_path / "run"
    cli.main(train_args(tiny_qa_cnn(keep_last=True), processed, run))
    inputs = _evaluate_rules_inputs(repo_root, "results/runs/synthetic_en/qa_cnn/seed1")
    for rule, last in (("evaluate", []), ("evaluate_last", ["--last"])):
        with _files_read() as reads:
            cli.main(["evaluate", "--processed", str(processed), "--run-dir", str(run), *last])
        read = {p.name for p in reads if p.parent == run.resolve()}
        assert "config.json" in read and read - {"model_last.pt"} <= inputs[rule], (rule, read, inputs)


def _planned_runs(dry_run: str) -> set[str]:
    """The run directories of the train jobs a dry run plans."""
    runs, rule = set(), None
    for line in dry_run.splitlines():
        if line.startswith("rule "):
            rule = line.split()[1].rstrip(":")
        elif rule == "train" and line.strip().startswith("output:"):
            runs.add(line.split("output:")[1].split(",")[0].strip().rsplit("/", 1)[0])
    return runs


@pytest.mark.ci  # retrains the small DAG's runs twice (~2-3 min): CI's, after the suite
def test_an_edit_of_training_code_retrains_exactly_the_runs_it_trains(built):
    """The train rule takes the digest of its run's code (ansel.code_digest) as a param: an edit of
    one architecture's module plans that architecture's runs only, an edit of the trainer every
    trained run; each run's timings record the digest it trained with."""
    repo, env, profile = built
    qa_cnn, rand = "results/runs/synthetic_en/qa_cnn/seed1", "results/runs/synthetic_en/random/seed1"
    timings = repo / "results/timings/synthetic_en/qa_cnn/seed1.json"
    before = json.loads(timings.read_text())["train"]["code"]
    assert len(before) == 16

    trained = {str(p.parent.relative_to(repo)) for p in repo.glob("results/runs/*/*/seed*/model.pt")}
    arch = repo / "src/ansel/models/archs/random_baseline.py"  # the random ranker's module alone
    arch.write_text(arch.read_text() + "\n# an edit\n")
    planned = _snakemake(repo, *profile, "-n", env=env, check=True).stdout
    assert _planned_runs(planned) == {r for r in trained if "/random/" in r} and rand in trained, planned
    _snakemake(repo, *profile, "all", env=env, check=True)
    # qa_baselines.py: QA-CNN's module, which the AP and MTAS architectures import too
    arch = repo / "src/ansel/models/archs/qa_baselines.py"
    arch.write_text(arch.read_text() + "\n# an edit\n")
    planned = _planned_runs(_snakemake(repo, *profile, "-n", env=env, check=True).stdout)
    assert qa_cnn in planned and rand not in planned, planned
    _snakemake(repo, *profile, "all", env=env, check=True)
    assert json.loads(timings.read_text())["train"]["code"] != before

    losses = repo / "src/ansel/training/losses.py"
    losses.write_text(losses.read_text() + "\n# an edit\n")
    assert _planned_runs(_snakemake(repo, *profile, "-n", env=env, check=True).stdout) == trained


def test_a_non_editable_install_reads_the_checkout_it_runs_in(repo_root, tmp_path, wt):
    """`pip install .` (no editable link back to a checkout): presets, specs and schemas come from
    the working checkout, here a second one with a preset of its own."""
    site, clone = tmp_path / "site", tmp_path / "second"
    wt.copy_worktree(repo_root, clone)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(clone),
        ],
        check=True,
        capture_output=True,
    )
    mine = {**yaml.safe_load((clone / "presets/smoke.yaml").read_text()), "seeds": 1}
    (clone / "presets/mine.yaml").write_text(yaml.safe_dump(mine))  # this clone's alone
    env = {**wt.run_env(clone, tmp_path / "dvc-site"), "PYTHONPATH": str(site)}
    where = subprocess.run(
        [sys.executable, "-c", "import ansel; print(ansel.__file__)"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(site)), where
    out = _snakemake(clone, "-n", "--cores", "1", "--config", "preset=mine", env=env, check=True).stdout
    assert "results/runs/synthetic_en/qa_cnn/seed1" in out and "seed2" not in out
