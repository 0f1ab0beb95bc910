"""Same seed, same bytes: every file of a run directory that `ansel train` and `ansel evaluate` write
is identical on a rerun (CPU), so the DVC-tracked results/runs hashes the same; the wall times that
differ live in the run's timings file, outside it."""

import json
from pathlib import Path


def _files(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}


def test_same_seed_twice_gives_the_same_bytes_in_every_file_of_the_run_directory(train_and_evaluate, tmp_path):
    for name in ("first", "second"):
        train_and_evaluate(tmp_path / name / "run", tmp_path / name / "seed1.json", max_batches=3)
    first, second = _files(tmp_path / "first/run"), _files(tmp_path / "second/run")
    assert {"model.pt", "log.csv", "config.json", "dev_scores.pt", "metrics.json", "run.trec"} < set(first)
    assert any(name.startswith("dvclive/") for name in first)
    assert sorted(first) == sorted(second)
    assert [name for name in first if first[name] != second[name]] == []
    # the epochs' wall times, outside the run directory
    epochs = json.loads((tmp_path / "first/seed1.json").read_text())["train"]["epochs"]
    assert [e["epoch"] for e in epochs] == [1, 2] and all(e["batches"] == 3 for e in epochs)
