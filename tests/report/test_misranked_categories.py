"""Table kind misranked_categories (MTAS Table 7): which categories the misranked questions of a
random draw belong to, per seed, against a hand count."""

import json

import pandas as pd
import pytest

from ansel.config import root
from ansel.data.canonical import Dataset
from ansel.report.misranked_categories import draw, misranked_counts, render_misranked
from ansel.schema import check_schema
from ansel.settings import ConfigError
from ansel.specs import parse_table
from ansel.table_kinds import kind_of

# six test questions in three categories; q6 has no correct candidate (left out)
CATEGORY = {"q1": "A", "q2": "A", "q3": "B", "q4": "B", "q5": "C", "q6": "C"}
LABELS = {
    ("q1", "a1"): 1,
    ("q1", "a2"): 0,
    ("q2", "a3"): 1,
    ("q2", "a4"): 0,
    ("q3", "a5"): 1,
    ("q3", "a6"): 0,
    ("q4", "a7"): 1,
    ("q4", "a8"): 0,
    ("q5", "a9"): 1,
    ("q5", "a10"): 0,
    ("q6", "a11"): 0,
    ("q6", "a12"): 0,
}
TABLE = {
    "id": "t7",
    "kind": "misranked_categories",
    "caption": "c",
    "dataset": "syn",
    "split": "test",
    "model": "m",
    "sample": 100,
    "seed": 13,
}
CONFIG = {
    "seeds": 2,
    "models": {"m": {"arch": "mtas"}},
    "dataset_alias": {},
    "datasets": {"syn": {"source": "synthetic"}},
}


def _run(tmp_path, seed: int, top: dict[str, str]) -> None:
    """A run.trec whose rank-1 candidate of each question is ``top[qid]``."""
    lines = []
    for qid in CATEGORY:
        cands = [aid for (q, aid) in LABELS if q == qid]
        ordered = [top[qid]] + [a for a in cands if a != top[qid]]
        lines += [f"test:{qid} Q0 {aid} {r} {1.0 / r:.8f} m" for r, aid in enumerate(ordered, 1)]
    run = tmp_path / f"results/runs/syn/m/seed{seed}"
    run.mkdir(parents=True)
    (run / "run.trec").write_text("\n".join(lines) + "\n")


@pytest.fixture
def runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    questions = pd.DataFrame(
        {"qid": list(CATEGORY), "text": list(CATEGORY), "tokens": [["w"]] * 6, "category": list(CATEGORY.values())}
    )
    answers = pd.DataFrame({"aid": sorted({a for _, a in LABELS}), "text": "x", "tokens": [["w"]] * 12})
    test = pd.DataFrame([{"qid": q, "aid": a, "label": lab} for (q, a), lab in LABELS.items()])
    Dataset("syn", questions, answers, {"test": test}).save(tmp_path / "data/processed/syn")
    # seed 1 ranks a wrong answer first for q1 (A), q3 and q4 (B); seed 2 only for q5 (C)
    _run(tmp_path, 1, {"q1": "a2", "q2": "a3", "q3": "a6", "q4": "a8", "q5": "a9", "q6": "a11"})
    _run(tmp_path, 2, {"q1": "a1", "q2": "a3", "q3": "a5", "q4": "a7", "q5": "a10", "q6": "a11"})
    return tmp_path


def test_counts_equal_a_hand_count_and_correct_or_unanswerable_questions_never_count(runs):
    table = parse_table(CONFIG, "p", TABLE)
    counts, in_split, seen = misranked_counts(table, kind_of(table).runs(CONFIG, table))
    assert counts.to_dict() == {1: {"A": 1, "B": 2, "C": 0}, 2: {"A": 0, "B": 0, "C": 1}}
    assert in_split.to_dict() == {"A": 2, "B": 2, "C": 2}
    assert seen == [(1, 3, 5), (2, 1, 5)]


def test_the_draw_is_seeded_and_takes_every_question_when_fewer():
    qids = [f"q{i:02d}" for i in range(30)]
    assert draw(qids[:5], 100, 13) == qids[:5]
    picked = draw(qids, 10, 13)
    assert picked == draw(qids, 10, 13) and len(set(picked)) == 10 and set(picked) <= set(qids)
    assert picked != draw(qids, 10, 14)


def test_a_smaller_draw_counts_only_the_drawn_questions(runs):
    table = parse_table(CONFIG, "p", {**TABLE, "sample": 2})
    counts, _, _ = misranked_counts(table, kind_of(table).runs(CONFIG, table))
    assert counts[1].sum() == 2 and counts[2].sum() == 1


def test_rendered_rows_are_every_category_by_mean_count(runs):
    table = parse_table(CONFIG, "p", TABLE)
    render_misranked(table, kind_of(table).runs(CONFIG, table), [], runs / "out/t7")
    cells = json.loads((runs / "out/t7.json").read_text())
    assert list(cells) == ["B", "A", "C"]  # means 1.0, 0.5, 0.5 (ties keep the category order)
    assert cells["B"]["misranked drawn"]["mean"] == pytest.approx(1.0)
    assert cells["C"]["share of the split (%)"]["mean"] == pytest.approx(100 / 3)
    assert "seed 1: 3 drawn of 3 misranked among 5 questions" in (runs / "out/t7.md").read_text()


def test_a_misspelt_key_is_refused_naming_it():
    spec = {"paper": "p", "title": "t", "tables": [{**TABLE, "samples": 100}]}
    with pytest.raises(ConfigError, match="samples"):
        check_schema(spec, root() / "workflow/schemas/paper.schema.yaml", "spec.yaml")
