"""Context rows (``context: true``): published values from workflow/papers/context_results.csv by
model, a note naming their sources, and a value under ``protocol: last`` although the run trained
no epoch; on fake run directories."""

import json

import pandas as pd
import pytest

from ansel.report.notes import context_notes
from ansel.report.tables import aggregate
from ansel.specs import parse_table
from ansel.table_kinds import kind_of
from ansel.targets import CONTEXT_PUBLISHED

CONFIG = {
    "seeds": 2,
    "datasets": {"syn": {"source": "syn"}},
    "dataset_alias": {"wikiqa": "syn"},
    "models": {"nn": {"arch": "random"}, "lexical_word_count": {"arch": "word_count", "seeds": 1}},
}
TABLE_SPEC = {
    "id": "wikiqa",
    "rows": [
        {"label": "NN", "model": "nn"},
        {"label": "Word Cnt (context)", "model": "lexical_word_count", "context": True},
    ],
    "columns": [
        {"dataset": "wikiqa", "split": "test", "metric": "MAP"},
        {"dataset": "wikiqa", "split": "test", "metric": "MAP", "protocol": "last"},
    ],
}
TABLE = parse_table(CONFIG, "apnet", TABLE_SPEC)


@pytest.fixture
def runs(tmp_path, monkeypatch, repo_root):
    monkeypatch.setenv("ANSEL_ROOT", str(repo_root))  # context_results.csv from the checkout, runs here
    monkeypatch.chdir(tmp_path)
    for model, seeds, log in (("nn", (1, 2), [{"epoch": 1, "test_MAP": 0.3}]), ("lexical_word_count", (1,), [])):
        for seed in seeds:
            d = tmp_path / f"results/runs/syn/{model}/seed{seed}"
            d.mkdir(parents=True)
            (d / "metrics.json").write_text(json.dumps({"test": {"MAP": 0.5 + 0.1 * seed}}))
            (pd.DataFrame(log) if log else pd.DataFrame(columns=["epoch"])).to_csv(d / "log.csv", index=False)
    return tmp_path


def test_context_rows_take_published_values_by_model_and_other_rows_by_label(runs):
    cells = aggregate(CONFIG, TABLE, {("wikiqa", "test", "NN", "MAP"): 0.7}).set_index(["row", "column"])
    assert cells.loc[("Word Cnt (context)", "wikiqa test MAP"), "published"] == 0.4891  # Yang et al. 2015
    assert cells.loc[("NN", "wikiqa test MAP"), "published"] == 0.7
    assert cells.loc[("Word Cnt (context)", "wikiqa test MAP"), "n"] == 1  # one seed: deterministic


def test_a_run_without_epochs_shows_its_one_state_under_protocol_last(runs):
    cells = aggregate(CONFIG, TABLE, {}).set_index(["row", "column"])
    assert cells.loc[("Word Cnt (context)", "wikiqa test MAP (last epoch)"), "mean"] == pytest.approx(0.6)
    assert cells.loc[("NN", "wikiqa test MAP (last epoch)"), "mean"] == pytest.approx(0.3)  # log.csv's last epoch


def test_context_note_names_the_rows_and_the_sources(runs):
    [note] = context_notes(CONFIG, TABLE)
    assert "Word Cnt (context)" in note and "Yang, Yih, Meek (2015)" in note
    assert "brmson" not in note  # its value is TREC-QA's, a dataset this table does not show
    assert context_notes(CONFIG, parse_table(CONFIG, "apnet", {**TABLE_SPEC, "rows": TABLE_SPEC["rows"][:1]})) == []


def test_a_trained_context_row_is_not_called_a_lexical_baseline(runs):
    config = {**CONFIG, "models": {**CONFIG["models"], "mz": {"arch": "mv_lstm"}}}
    rows = [*TABLE_SPEC["rows"], {"label": "MZ (context)", "model": "mz", "context": True}]
    table = parse_table(config, "apnet", {**TABLE_SPEC, "rows": rows})
    lexical, trained = context_notes(config, table)
    assert "Word Cnt (context)" in lexical and "MZ" not in lexical
    assert trained.startswith("Context rows trained here (MZ (context)): not the paper's rows")


def test_a_table_with_context_rows_reads_the_context_results(runs):
    assert CONTEXT_PUBLISHED in kind_of(TABLE).inputs(CONFIG, TABLE)
    published_only = parse_table(CONFIG, "apnet", {**TABLE_SPEC, "rows": TABLE_SPEC["rows"][:1]})
    assert CONTEXT_PUBLISHED not in kind_of(published_only).inputs(CONFIG, published_only)


def test_context_rows_are_left_out_of_the_settings_notes(runs):
    from ansel.config import load
    from ansel.report.notes import table_setting_notes
    from ansel.table_kinds.metrics import paper_settings

    for model, arch, seeds in (("nn", "random", (1, 2)), ("lexical_word_count", "word_count", (1,))):
        for seed in seeds:  # the nn runs used 5 epochs where the (fake) paper says 3
            used = {"seed": seed, "arch": arch, "hparams": {}, "train": {"epochs": 5}, "embeddings": None}
            (runs / f"results/runs/syn/{model}/seed{seed}/config.json").write_text(json.dumps(used))
    papers = load(preset="full")
    papers["models"] |= {"nn": {"arch": "random", "train": {"epochs": 3}}, "lexical_word_count": {"arch": "word_count"}}
    notes = " ".join(table_setting_notes({**CONFIG, "paper_settings": paper_settings(papers, TABLE)}, TABLE))
    assert "train.epochs 3 → 5" in notes and "Word Cnt" not in notes
