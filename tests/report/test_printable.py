"""The rule of what may be printed as a result (ansel.report.printable): a verdict only from runs at the
paper's settings, data and protocol; a gap only within one cell; the headline at the paper's protocol."""

import pytest

from ansel.report.printable import Cell, Printed, comparable, refusals, same_data, stand_in, verdict_allowed

DATASETS = {
    "wikiqa_mz": {"source": "wikiqa"},
    "cmeddialog": {"source": "cmeddialog"},
    "quoraqp_standin": {"source": "quoraqp", "read": {"resplit": {"dev": 0.1}}},
    "insuranceqa_v2": {"source": "insuranceqa_v2"},
}
PAPER = Cell("wikiqa", "test", "MAP")


def printed(scale="paper", ours=Cell("wikiqa", "test", "MAP"), verdict=True, gap=True, vectors="word2vec trained here"):
    return Printed("r", scale, ours, verdict, gap, vectors)


def test_a_row_of_the_papers_cell_at_its_settings_is_printable():
    assert refusals(printed(), PAPER, DATASETS) == []


def test_a_verdict_from_a_budget_record_is_refused():
    assert verdict_allowed("budget", PAPER, PAPER, DATASETS) == "not tested at the paper's settings"
    assert any("a verdict from `r` (budget scale" in r for r in refusals(printed(scale="budget"), PAPER, DATASETS))
    assert refusals(printed(scale="budget", verdict=False), PAPER, DATASETS) == []
    with pytest.raises(ValueError, match="scale 'cut'"):
        verdict_allowed("cut", PAPER, PAPER, DATASETS)


def test_a_gap_across_datasets_is_refused_and_the_stand_in_named():
    lawqa, ours = Cell("lawqa", "test", "P@1"), Cell("cmeddialog", "test", "P@1")
    assert not comparable(ours, lawqa, DATASETS)
    assert stand_in(ours, lawqa, DATASETS) == "cmeddialog test P@1 (stand-in for lawqa test P@1)"
    found = refusals(printed(ours=ours, verdict=False), lawqa, DATASETS)
    assert found == ["a gap between cmeddialog test P@1 (stand-in for lawqa test P@1) and the published lawqa test P@1"]
    # and a verdict on other data, even at the paper's settings
    assert verdict_allowed("paper", ours, lawqa, DATASETS) == "not tested on the paper's data (lawqa)"
    # another split of the same data (v2's test for v1's test1 is other data besides)
    assert not comparable(Cell("insuranceqa_v2", "test", "P@1"), Cell("insuranceqa_v1", "test1", "P@1"), DATASETS)
    assert not comparable(Cell("wikiqa", "dev", "MAP"), PAPER, DATASETS)


def test_one_release_prepared_as_released_is_the_papers_data_a_resplit_is_not():
    assert same_data("wikiqa_mz", "wikiqa", DATASETS)
    assert not same_data("quoraqp_standin", "quoraqp", DATASETS)
    assert not same_data("insuranceqa_v2", "insuranceqa_v1", DATASETS)


def test_a_dev_selected_headline_where_the_paper_reports_the_last_iteration_is_refused():
    paper = Cell("wikiqa", "test", "MAP", "last")
    found = refusals(printed(ours=Cell("wikiqa_mz", "test", "MAP")), paper, DATASETS)
    assert "a headline at the checkpoint selected on dev where the paper reports the last iteration" in found
    assert any(r.startswith("a verdict from `r`") and "the paper's protocol (the last iteration)" in r for r in found)
    assert any(r.startswith("a gap between the checkpoint selected on dev") for r in found)
    assert refusals(printed(ours=Cell("wikiqa_mz", "test", "MAP", "last")), paper, DATASETS) == []


def test_a_row_naming_no_vectors_is_refused():
    assert refusals(printed(vectors=" "), PAPER, DATASETS) == ["no word vectors named"]
