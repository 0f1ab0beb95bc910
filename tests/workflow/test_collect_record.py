"""`ansel collect-record`: a table trained here in parts becomes a committed record, each part collected as it
finishes, the table rendered by the normal rule once its last run is in; a run trained with other
settings than the preset's is named and left out."""

import gzip
import json
import shutil
import sys

import pytest

pytestmark = pytest.mark.slow

RUNS = {m: f"results/runs/synthetic_en/{m}/seed1" for m in ("random", "qa_cnn")}


def test_a_table_trained_in_parts_is_collected_then_rendered(tmp_path, built_repo, wt):
    repo = built_repo
    env = {**wt.run_env(repo, tmp_path / "dvc-site"), "ANSEL_ROOT": str(repo)}
    # The session's small DAG has both runs: without QA-CNN's, the random run is the first part alone.
    shutil.rmtree(repo / RUNS["qa_cnn"])

    def snakemake(*targets):
        wt.sh(
            [sys.executable, "-m", "snakemake", "--cores", "2", "--config", "preset=smoke", "--", *targets], repo, env
        )

    def record():
        return wt.sh(
            [
                sys.executable,
                "-m",
                "ansel.cli",
                "collect-record",
                "--preset",
                "smoke",
                "--items",
                "smoke/synthetic",
                "--out",
                "reports/rec",
            ],
            repo,
            env,
        )

    out = repo / "reports/rec"
    snakemake(f"{RUNS['random']}/metrics.json")  # the first part
    printed = record()
    assert "1 runs copied from results/runs, 1 not trained yet" in printed
    assert f"smoke/synthetic: waits for 1 runs (e.g. {RUNS['qa_cnn']})" in printed
    kept = out / "runs/synthetic_en/random/seed1"
    assert sorted(p.name for p in kept.iterdir()) == [
        "config.json",
        "log.csv",
        "metrics.json",
        "run.trec.gz",
        "timings.json",
    ]
    assert not (out / "synthetic.md").exists()

    snakemake(f"{RUNS['qa_cnn']}/metrics.json")  # the second part, but as if trained by another preset
    config = repo / RUNS["qa_cnn"] / "config.json"
    right = config.read_text()
    config.write_text(json.dumps({**json.loads(right), "seed": 7}))
    printed = record()
    assert f"1 runs trained with other settings than preset 'smoke' (not copied), e.g. {RUNS['qa_cnn']}" in printed
    assert not (out / "synthetic.md").exists()

    config.write_text(right)
    printed = record()
    assert f"rendered {out / 'synthetic.md'}" in printed and not list(out.glob("*.tex"))
    assert "QA-CNN" in (out / "synthetic.md").read_text()
    trec = out / "runs/synthetic_en/qa_cnn/seed1/run.trec.gz"
    assert gzip.decompress(trec.read_bytes()) == (repo / RUNS["qa_cnn"] / "run.trec").read_bytes()
    cell = json.loads((out / "synthetic.json").read_text())["QA-CNN"]["synthetic_en test MAP"]["mean"]
    assert cell == pytest.approx(json.loads((repo / RUNS["qa_cnn"] / "metrics.json").read_text())["test"]["MAP"])
