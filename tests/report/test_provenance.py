import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from ansel import code_digest
from ansel.code_digest import checkout_commit, serve_checkout
from ansel.report.provenance import cell_provenance, provenance_note
from ansel.targets import Run, Variant, provenance_inputs, timings_file

CONFIG = {"datasets": {"wikiqa": {"source": "wikiqa"}}}


def _run(seed: int, commit: str | None, cfg: dict, vectors: str | None = None) -> Run:
    run = Run("wikiqa", Variant("m"), seed)
    Path(run.dir).mkdir(parents=True)
    Path(run.dir, "config.json").write_text(json.dumps(cfg, indent=2))
    Path(timings_file(run)).parent.mkdir(parents=True, exist_ok=True)
    train = {"commit": commit, **({"vectors_sha256": vectors} if vectors else {})}  # older runs have no hash
    Path(timings_file(run)).write_text(json.dumps({"train": train}))
    return run


@pytest.fixture
def runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("data/raw/wikiqa").mkdir(parents=True)
    Path("data/raw/wikiqa/manifest.json").write_text(
        json.dumps(
            {"WikiQA-test.tsv": {"size": 3, "sha256": "ab" * 32}, "WikiQA-train.tsv": {"size": 4, "sha256": "cd" * 32}}
        )
    )
    return [_run(1, "1" * 40, {"seed": 1, "lr": 0.1}, vectors="ef" * 32), _run(2, None, {"lr": 0.1, "seed": 2})]


def test_a_cell_names_its_runs_commits_config_hashes_and_raw_files(runs):
    cell = cell_provenance(CONFIG, runs)
    assert [r["run"] for r in cell["runs"]] == ["results/runs/wikiqa/m/seed1", "results/runs/wikiqa/m/seed2"]
    assert [r["commit"] for r in cell["runs"]] == ["1" * 40, None]
    # the hash is of the config's content, whatever its key order or indentation
    assert cell["runs"][0]["config_sha256"] == hashlib.sha256(b'{"lr":0.1,"seed":1}').hexdigest()
    assert [r["vectors_sha256"] for r in cell["runs"]] == ["ef" * 32, None]
    assert cell["raw_sha256"] == [
        {"dataset": "wikiqa", "file": "WikiQA-test.tsv", "sha256": "ab" * 32},
        {"dataset": "wikiqa", "file": "WikiQA-train.tsv", "sha256": "cd" * 32},
    ]
    assert set(provenance_inputs(CONFIG, runs)) == {
        "results/timings/wikiqa/m/seed1.json",
        "results/timings/wikiqa/m/seed2.json",
        "results/runs/wikiqa/m/seed1/config.json",
        "results/runs/wikiqa/m/seed2/config.json",
        "data/raw/wikiqa/manifest.json",
    }


def test_the_note_names_each_commit_once_with_its_run_count(runs):
    cell = cell_provenance(CONFIG, runs)
    note = provenance_note([cell, cell])  # two columns of the same runs: each run counted once
    assert f"commit {'1' * 40} (1 run); unknown (not trained in a git checkout) (1 run)" in note
    assert f"wikiqa: WikiQA-test.tsv {'ab' * 6}, WikiQA-train.tsv {'cd' * 6}" in note
    assert f"pretrained vectors sha256 {'ef' * 6} (1 run);" in note


def test_a_missing_timings_file_is_named(runs):
    Path(timings_file(runs[0])).unlink()
    with pytest.raises(FileNotFoundError, match="results/timings/wikiqa/m/seed1.json: missing"):
        cell_provenance(CONFIG, runs)


def test_the_commit_is_the_checkouts_and_marks_uncommitted_changes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert checkout_commit() is None  # not a git checkout
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    Path("f").write_text("a")
    subprocess.run([*git, "add", "f"], check=True)
    assert checkout_commit() is None  # no commit yet
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert checkout_commit() == head
    Path("g").write_text("untracked")
    assert checkout_commit() == head  # untracked files are not the commit's
    Path("f").write_text("b")
    assert checkout_commit() == head + "+dirty"


def test_a_warm_job_servers_jobs_name_the_commit_it_started_at(tmp_path, monkeypatch):
    """The server imported the code its jobs run as it started: their commit is that checkout's then,
    an edit since is not in them (nor a git process in each)."""
    monkeypatch.setattr(code_digest, "_SERVED", {})
    monkeypatch.chdir(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    Path("f").write_text("a")
    subprocess.run([*git, "add", "f"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    head = checkout_commit()
    serve_checkout(tmp_path)
    Path("f").write_text("b")
    assert checkout_commit() == checkout_commit(tmp_path) == head
    monkeypatch.setattr(code_digest, "_SERVED", {})
    assert checkout_commit() == head + "+dirty"
