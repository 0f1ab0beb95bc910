"""dvc.yaml and the Snakefile must not drift apart: DVC stages call Snakemake's coarse targets,
declare real params, and together cover every output directory the DAG writes; the metrics and
plots DVC shows (workflow/dvc/dvc.yaml) are those of the current paper specs and preset."""

import ast
import os
import subprocess
import sys

import pytest
import yaml

from ansel import dvc_show
from ansel.config import apply_preset, load
from ansel.dvc_pull import PullError, stage_targets
from ansel.models.registry import is_trained
from ansel.paper_targets import paper_outputs


@pytest.fixture(scope="module")
def dvc(repo_root):
    return yaml.safe_load((repo_root / "dvc.yaml").read_text())


@pytest.fixture(scope="module")
def target_rules(repo_root):
    out = subprocess.run(
        [sys.executable, "-m", "snakemake", "--list-target-rules"],
        cwd=repo_root,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.split())


def _outs(stage):
    return {next(iter(o)) if isinstance(o, dict) else o for o in stage.get("outs", [])}


def test_every_stage_calls_an_existing_snakemake_target(dvc, target_rules, repo_root):
    targets = stage_targets(repo_root / "dvc.yaml")  # what `make pull` touches
    assert len(targets) == len(dvc["stages"])
    for name, target in zip(dvc["stages"], targets):
        assert target in target_rules, f"stage {name} calls unknown target {target}"
    with pytest.raises(PullError, match="no stage nope"):
        stage_targets(repo_root / "dvc.yaml", ["data", "nope"])


def test_one_stage_per_configured_paper(dvc, repo_root):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    papers = set(apply_preset(params)["papers"])
    stages = {n.removeprefix("paper_") for n in dvc["stages"] if n.startswith("paper_")}
    assert stages == papers
    outputs = paper_outputs(apply_preset(params))
    for paper in papers:
        expected = {o.split("/" + paper + "/")[0] + "/" + paper for o in outputs if f"/{paper}/" in o}
        assert expected == _outs(dvc["stages"][f"paper_{paper}"]) & expected, paper


def test_params_exist_in_params_yaml(dvc, repo_root):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    for name, stage in dvc["stages"].items():
        for key in stage.get("params", []):
            node = params
            for part in key.split("."):
                assert part in node, f"stage {name}: param {key} is not in params.yaml"
                node = node[part]


def test_stage_outputs_cover_every_dag_output(dvc, repo_root):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    outs = set().union(*(_outs(s) for s in dvc["stages"].values()))
    produced = paper_outputs(apply_preset(params)) + [
        "data/raw/x",
        "data/processed/x",
        "data/embeddings/x",
        "results/runs/x",
        "results/timings/x",
    ]
    for path in produced:
        assert any(path.startswith(o + "/") for o in outs), f"{path} is in no DVC stage's outs"


def test_metrics_and_plots_file_is_generated_from_the_current_specs(repo_root):
    committed = (repo_root / dvc_show.PATH).read_text()
    assert committed == dvc_show.render(load(repo_root / "params.yaml")), (
        f"{dvc_show.PATH} is stale: run `python -m ansel.dvc_show`"
    )
    views = yaml.safe_load(committed)
    tables = [o for o in paper_outputs(load(repo_root / "params.yaml")) if o.endswith(".json")]
    assert tables and [os.path.normpath(dvc_show.PATH.parent / m) for m in views["metrics"]] == tables
    curves = [p for p in views["plots"] if isinstance(p, dict)]
    assert curves and all(next(iter(p.values()))["x"] == "epoch" for p in curves)
    # random and lexical rankers train no epoch: their empty log.csv would be an empty plot
    config = load(repo_root / "params.yaml")
    plotted = {key.split("/")[2] for p in curves for key in p}
    untrained = {m for m in plotted if not is_trained(config["models"][m.split("@")[0]]["arch"])}  # sweep points
    assert plotted and not untrained, untrained


def test_a_stage_that_depends_on_the_targets_code_depends_on_what_it_imports(dvc, repo_root):
    """What the papers ask for is derived by ansel.paper_targets from the modules it imports (the
    table and figure kinds, the specs, the runs): a change to any of them changes the DAG, so a stage
    listing paper_targets.py lists them too (else `dvc repro` calls the stage up to date)."""
    tree = ast.parse((repo_root / "src/ansel/paper_targets.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module.startswith("ansel.")}
    files = sorted(
        f"src/{m.replace('.', '/')}" + ("" if (repo_root / "src" / m.replace(".", "/")).is_dir() else ".py")
        for m in imported
    )
    assert "src/ansel/figure_kinds.py" in files and "src/ansel/table_kinds" in files
    for name, stage in dvc["stages"].items():
        if "src/ansel/paper_targets.py" in stage["deps"]:
            assert [f for f in files if f not in stage["deps"]] == [], name
