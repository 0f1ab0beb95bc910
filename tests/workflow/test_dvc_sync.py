"""dvc.yaml and the Snakefile must not drift apart: DVC stages call Snakemake's coarse targets,
declare real params, and together cover every output the DAG writes, each made by the target of
the stage whose outs hold it; the metrics and plots DVC shows (workflow/dvc/dvc.yaml) are those of
the current paper specs and preset."""

import ast
import csv
import functools
import io
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


@pytest.fixture(scope="module")
def planned(repo_root):
    """The files Snakemake's DAG for some targets writes (its summary lists every job's outputs,
    whether or not they are up to date); one Snakemake call per set of targets."""

    @functools.cache
    def outputs(*targets: str) -> frozenset[str]:
        summary = subprocess.run(
            [sys.executable, "-m", "snakemake", "--profile", "workflow/profiles/local", "--summary", *targets],
            cwd=repo_root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return frozenset(row["output_file"] for row in csv.DictReader(io.StringIO(summary), delimiter="\t"))

    return outputs


def _owner(dvc, path):
    """The stage whose outs hold ``path``, or None."""
    held = [name for name, s in dvc["stages"].items() for o in _outs(s) if path == o or path.startswith(o + "/")]
    return held[0] if held else None


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


def test_stage_outputs_cover_every_dag_output(dvc, repo_root, planned):
    """Every file the stages' targets write is under some stage's outs: `make pull` restores only those,
    and fails on any other output of the DAG (a table's step times once were in none)."""
    written = planned(*stage_targets(repo_root / "dvc.yaml"))
    assert {"results/runs", "results/tables", "data/processed"} <= {"/".join(f.split("/")[:2]) for f in written}
    assert sorted(f for f in written if _owner(dvc, f) is None) == []


def test_every_file_under_an_upstream_stages_outs_is_made_by_its_target(dvc, repo_root, planned):
    """A file under the outs of a stage that later stages read (data, runs), made only by a later
    stage's target (a last-epoch run_last.trec once was, by paper_amvlstm's), makes dvc.lock record that
    output twice: without it as the stage's out, with it as the later stages' dep; `dvc status` then
    never comes clean after `dvc repro` from scratch."""
    targets = dict(zip(dvc["stages"], stage_targets(repo_root / "dvc.yaml")))
    read = {d for s in dvc["stages"].values() for d in s["deps"]}
    upstream = [name for name, stage in dvc["stages"].items() if _outs(stage) & read]
    assert {"data", "runs"} <= set(upstream)
    written = planned(*targets.values())
    for name in upstream:
        held = {f for f in written if _owner(dvc, f) == name}
        assert held and sorted(held - planned(targets[name])) == [], name


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
