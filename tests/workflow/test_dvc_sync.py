"""dvc.yaml and the Snakefile must not drift apart: DVC stages call Snakemake's coarse targets,
declare real params, and together cover every output directory the DAG writes."""
import subprocess
import sys

import pytest
import yaml

from ansel.config import apply_preset
from ansel.targets import paper_outputs


@pytest.fixture(scope="module")
def dvc(repo_root):
    return yaml.safe_load((repo_root / "dvc.yaml").read_text())


@pytest.fixture(scope="module")
def target_rules(repo_root):
    out = subprocess.run([sys.executable, "-m", "snakemake", "--list-target-rules"], cwd=repo_root,
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def _outs(stage):
    return {next(iter(o)) if isinstance(o, dict) else o for o in stage.get("outs", [])}


def test_every_stage_calls_an_existing_snakemake_target(dvc, target_rules):
    for name, stage in dvc["stages"].items():
        words = stage["cmd"].split("&&")[0].split()
        assert words[0] == "snakemake", name
        assert words[-1] in target_rules, f"stage {name} calls unknown target {words[-1]}"


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
    produced = paper_outputs(apply_preset(params)) + ["data/raw/x", "data/processed/x", "data/embeddings/x",
                                                      "results/runs/x"]
    for path in produced:
        assert any(path.startswith(o + "/") for o in outs), f"{path} is in no DVC stage's outs"
