"""The speed entry's compiled variant (``speed.compare(compiled=True)``): each precision's step also
timed with the model's modules compiled, beside the plain one in the same process; timed only, so the
costs the planner reads hold the plain step alone. CI's (compiling on the CPU takes tens of seconds)."""

import json

import pytest

from ansel.plan import shape
from ansel.training.speed import compare
from tests.training.test_seed_stack import cfg, processed  # noqa: F401 (a fixture)


@pytest.mark.ci
def test_the_compiled_step_is_timed_beside_the_plain_one_and_no_cost_is_written_for_it(processed, tmp_path):
    c = {**cfg("qa_cnn", 1), "dataset": "synthetic_en"}
    data_root = tmp_path / "root"
    (data_root / "data/processed").mkdir(parents=True)
    (data_root / "data/processed/synthetic_en").symlink_to(processed)
    results = compare(
        [c],
        tmp_path / "out",
        precisions=["fp32"],
        seeds=1,
        batches=1,
        rounds=2,
        dev_questions=None,
        compiled=True,
        data_root=data_root,
    )
    variants = results[shape(c)]["variants"]
    assert sorted(variants) == ["fp32", "fp32 compiled"]
    assert len(variants["fp32 compiled"]["step_seconds"]) == 2 and variants["fp32 compiled"]["seconds_per_batch"] > 0
    assert "dev_seconds" not in variants["fp32 compiled"] and "dev_seconds" in variants["fp32"]
    (costs,) = (tmp_path / "out/costs").glob("*.json")
    (cost,) = json.loads(costs.read_text()).values()
    assert cost["seconds_per_batch"] == variants["fp32"]["seconds_per_batch"]
