"""Issue 33 item 5: tables take cells from metrics.json and significance from run.trec, so a run
file that is not the same evaluation as its metrics.json is refused when tabulating, naming it."""

import shutil

import pandas as pd
import pytest

from ansel.evaluation.metrics import rank, read_trec_run
from ansel.report.significance import _question_reader
from ansel.targets import Run, Variant


@pytest.fixture
def evaluated(processed, train_and_evaluate, tmp_path, monkeypatch):
    """A trained and evaluated run where the tables look for it (cwd = tmp_path)."""
    run = Run("syn", Variant("qa_cnn"), 1)
    shutil.copytree(processed, tmp_path / f"data/processed/{run.dataset}")
    train_and_evaluate(tmp_path / run.dir, tmp_path / "timings.json")  # reads params.yaml from the checkout
    monkeypatch.chdir(tmp_path)
    return run


def _rewrite(path, rows: pd.DataFrame) -> None:
    rows.assign(q0="Q0", run="x")[["qid", "q0", "aid", "rank", "score", "run"]].to_csv(
        path, sep=" ", header=False, index=False
    )


def test_the_run_file_of_the_evaluation_is_read(evaluated):
    values = _question_reader({})(evaluated, "test", "dev")
    assert len(values) > 0 and 0 <= values.MAP.mean() <= 1


@pytest.mark.parametrize("tamper", ["negated scores, ranks kept", "negated scores, ranks recomputed"])
def test_a_run_file_that_disagrees_with_metrics_json_is_refused_naming_it(evaluated, tamper):
    path = f"{evaluated.dir}/run.trec"
    rows = read_trec_run(path)
    rows = rows.assign(score=-rows.score)
    if tamper.endswith("recomputed"):
        rows = rank(rows)
    _rewrite(path, rows)
    with pytest.raises(ValueError, match=rf"{path}: its (dev|test) scores give MAP .* where .*metrics.json reports"):
        _question_reader({})(evaluated, "test", "dev")


def test_ranks_that_disagree_with_the_scores_do_not_count(evaluated):
    """The scores are the evaluation's: a rank column shuffled alone changes no value."""
    path = f"{evaluated.dir}/run.trec"
    before = _question_reader({})(evaluated, "test", "dev")
    rows = read_trec_run(path)
    _rewrite(path, rows.assign(rank=rows["rank"].sample(frac=1, random_state=0).to_numpy()))
    pd.testing.assert_frame_equal(_question_reader({})(evaluated, "test", "dev"), before)
