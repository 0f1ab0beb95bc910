"""The MatchZoo protocol (the last epoch's values, from log.csv) beside ours (selected on dev):
table columns with ``protocol: last``, the bars of the aMV-LSTM paper's Figure 3 and the per-epoch
curves of its Figure 4, on fake run directories."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from ansel import figure_kinds as FK
from ansel.config import papers_dir
from ansel.report.figures import bar_values, epoch_curves, reference_value, render_figure
from ansel.report.tables import aggregate, published_lookup, render
from ansel.settings import InputError
from ansel.specs import figure_spec, parse_table
from ansel.table_kinds import kind_of

# model -> per seed: (dev-selected test MAP, test accuracy) in metrics.json; log.csv's epochs below
SELECTED = {"mv": [(0.60, 0.70), (0.62, 0.72)], "q": [(0.65, 0.80), (0.69, 0.78)]}
EPOCHS = 3
CONFIG = {"seeds": 2, "datasets": {"syn": {"source": "syn"}}, "dataset_alias": {"wikiqa_mz": "syn", "quoraqp": "syn"}}
LABELS = {"mv": "MV-LSTM", "q": "aMV-LSTM (Q)"}


def epoch_value(model: str, seed: int, epoch: int, split: str) -> float:
    """A distinct value per (model, seed, epoch, split): the last epoch's differs from metrics.json's."""
    return round(0.5 + 0.1 * (model == "q") + 0.01 * seed + 0.02 * epoch + 0.005 * (split == "test"), 6)


@pytest.fixture
def runs(tmp_path, monkeypatch, repo_root):
    monkeypatch.setenv("ANSEL_ROOT", str(repo_root))  # published_results.csv from the checkout, outputs here
    monkeypatch.chdir(tmp_path)
    for model, per_seed in SELECTED.items():
        for seed, (test_map, accuracy) in enumerate(per_seed, start=1):
            d = tmp_path / f"results/runs/syn/{model}/seed{seed}"
            d.mkdir(parents=True)
            (d / "metrics.json").write_text(
                json.dumps({"dev": {"MAP": 0.5}, "test": {"MAP": test_map, "nDCG@3": test_map, "accuracy": accuracy}})
            )
            pd.DataFrame(
                [
                    {
                        "epoch": e,
                        "lr": 1.0,
                        "loss": 1 / e,
                        **{
                            f"{s}_{m}": epoch_value(model, seed, e, s)
                            for s in ("dev", "test")
                            for m in ("MAP", "nDCG@3", "accuracy")
                        },
                    }
                    for e in range(1, EPOCHS + 1)
                ]
            ).to_csv(d / "log.csv", index=False)
    return tmp_path


def last(model: str, split: str = "test") -> list[float]:
    return [epoch_value(model, seed, EPOCHS, split) for seed in (1, 2)]


TABLE = {
    "id": "table3",
    "caption": "WikiQA",
    "rows": [{"label": "MV-LSTM", "model": "mv"}, {"label": "aMV-LSTM (Q)", "model": "q"}],
    "columns": [
        {"dataset": "wikiqa_mz", "split": "test", "metric": m, "published_dataset": "wikiqa", **p}
        for p in ({}, {"protocol": "last"})
        for m in ("nDCG@3", "MAP")
    ],
}


def test_last_epoch_columns_sit_beside_ours_with_the_same_published_values(runs):
    published = published_lookup(papers_dir() / "published_results.csv", "amvlstm", "table3")
    cells = aggregate(CONFIG, parse_table(CONFIG, "amvlstm", TABLE), published).set_index(["row", "column"])
    ours = cells.loc[("aMV-LSTM (Q)", "wikiqa_mz test MAP")]
    paper = cells.loc[("aMV-LSTM (Q)", "wikiqa_mz test MAP (last epoch)")]
    assert ours["mean"] == pytest.approx(np.mean([0.65, 0.69]))
    assert paper["mean"] == pytest.approx(np.mean(last("q")))
    assert paper["std"] == pytest.approx(np.std(last("q"), ddof=1))
    # one published row (wikiqa, not the run's dataset wikiqa_mz) beside both; ndcg@3 in the CSV is our nDCG@3
    assert ours["published"] == paper["published"] == 0.650664
    assert cells.loc[("MV-LSTM", "wikiqa_mz test nDCG@3 (last epoch)"), "published"] == 0.610065

    render(cells.reset_index(), parse_table(CONFIG, "amvlstm", TABLE), [], runs / "out/table3")
    header = (runs / "out/table3.md").read_text().splitlines()[2]
    # ours come from the preset's stand-in (CONFIG aliases wikiqa_mz onto syn); published is headed by its own
    # cell, the paper's dataset (ansel.report.printable: not ours, so no †)
    assert (
        "| syn (stand-in for wikiqa_mz) test MAP (last epoch) ours " in header
        and "| wikiqa test MAP (last epoch) published (another cell: no †) " in header
    )
    table = parse_table(CONFIG, "amvlstm", TABLE)
    assert kind_of(table).inputs(CONFIG, table)[:3] == [
        f"results/runs/syn/mv/seed1/{name}" for name in ("config.json", "metrics.json", "log.csv")
    ]


def test_published_metric_names_match_ours_case_insensitively(tmp_path):
    csv = tmp_path / "published.csv"
    csv.write_text(
        "paper,table,dataset,split,model,metric,value\np,t,d,test,M,ndcg@5,0.6\np,t,d,test,M,MAP,0.5\n"
        "p,t,d,train,M,seconds_per_batch,1.2\np,t,d,test,M,ACCURACY,0.7\n"
    )
    assert published_lookup(csv, "p", "t") == {
        ("d", "test", "M", "nDCG@5"): 0.6,
        ("d", "test", "M", "MAP"): 0.5,
        ("d", "train", "M", "seconds_per_batch"): 1.2,
        ("d", "test", "M", "accuracy"): 0.7,
    }


def test_a_published_value_that_is_not_a_number_is_named_with_its_line(tmp_path):
    csv = tmp_path / "published.csv"
    csv.write_text("paper,table,dataset,split,model,metric,value\np,t,d,test,M,MAP,0.5\np,t,d,test,M,MRR,0.5O\n")
    with pytest.raises(ValueError, match=rf"^{csv}, line 3: value '0.5O' is not a number$"):
        published_lookup(csv, "p", "t")


def test_a_last_epoch_column_missing_from_the_log_is_named(runs):
    table = {**TABLE, "columns": [{"dataset": "wikiqa_mz", "split": "test", "metric": "P@1", "protocol": "last"}]}
    with pytest.raises(
        InputError,
        match=r"^results/runs/syn/mv/seed1/log.csv: no column 'test_P@1' \(its columns: epoch, lr, "
        r".*\); test_ columns need the model's train.monitor_splits: \[test\] \(retrain the run with it\)$",
    ):
        aggregate(CONFIG, parse_table(CONFIG, "amvlstm", table), {})
    (runs / "results/runs/syn/q/seed2/log.csv").unlink()
    with pytest.raises(FileNotFoundError, match="results/runs/syn/q/seed2/log.csv: missing"):
        aggregate(
            CONFIG, parse_table(CONFIG, "amvlstm", {**table, "columns": [{**table["columns"][0], "metric": "MAP"}]}), {}
        )


def test_a_log_csv_without_a_column_read_is_refused_by_tables_and_figures_in_one_line(runs):
    """A log whose header (and so every row) lacks a column the table or figure reads was a KeyError,
    which `ansel table` and `ansel figure` printed as a traceback."""
    log = "results/runs/syn/q/seed1/log.csv"
    pd.read_csv(runs / log).drop(columns=["dev_MAP"]).to_csv(runs / log, index=False)
    refused = (
        rf"^{log}: no column 'dev_MAP' \(its columns: epoch, lr, loss, dev_nDCG@3, dev_accuracy, test_MAP, "
        rf"test_nDCG@3, test_accuracy\); delete it and rerun its target \(snakemake {log}\)"
    )
    last_dev = {"dataset": "wikiqa_mz", "split": "dev", "metric": "MAP", "protocol": "last"}
    with pytest.raises(InputError, match=refused):
        aggregate(CONFIG, parse_table(CONFIG, "amvlstm", {**TABLE, "columns": [last_dev]}), {})
    curves = {"id": "lc", "kind": "learning_curves", "dataset": "wikiqa_mz", "metric": "MAP", "models": ["mv", "q"]}
    with pytest.raises(InputError, match=refused):
        epoch_curves(CONFIG, figure_spec(CONFIG, "p", curves))


def cut(log, keep) -> None:
    """``log``'s last line cut off to ``keep(line)``, with no line end, as a write stopped there leaves it."""
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:-1] + [keep(lines[-1])]))


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda log: cut(log, lambda line: ",".join(line.split(",")[:5])), "line 4: 5 fields where the header has 9"),
        (lambda log: cut(log, lambda line: line[:-3]), "line 4: no line end"),  # its last number cut short
        (lambda log: log.write_text(log.read_text().replace(",1.0,", ",1.O,", 1)), "line 2: lr '1.O' is not a number"),
    ],
    ids=["fields-cut-off", "number-cut-short", "not-a-number"],
)
def test_a_log_csv_not_whole_is_refused_by_tables_and_figures_naming_its_line(runs, edit, said):
    """pandas read a last row cut off as empty fields: the (last epoch) cell was '— ± —' and the
    figure's last point the other seed's alone, under a title of two seeds."""
    log = "results/runs/syn/q/seed1/log.csv"
    edit(runs / log)
    refused = (
        rf"^{log}, {re.escape(said)}( \(a cut-off write\?\))?; delete it and rerun its target \(snakemake {log}\): "
        "training writes it, so the run is trained again$"
    )
    last_epoch = parse_table(CONFIG, "amvlstm", {**TABLE, "columns": TABLE["columns"][2:]})
    with pytest.raises(InputError, match=refused):  # `ansel table` and `ansel figure` say it in one line
        aggregate(CONFIG, last_epoch, {})
    with pytest.raises(InputError, match=refused):
        epoch_curves(CONFIG, FIG4)


def test_a_learning_curve_point_of_fewer_seeds_than_its_title_counts_is_refused(runs):
    """A seed without a value at an epoch the others have (its log cut at a line's end: whole, one
    epoch short; or the value empty) left that point the other seed's alone, drawn with no band."""
    log = runs / "results/runs/syn/q/seed2/log.csv"
    whole = pd.read_csv(log)
    refused = (
        r"^results/runs/syn/q/seed2/log.csv: no dev_accuracy at epoch 3, which 1 other seed\(s\) have: a point of "
        r"the figure is of every seed \(its title counts them\); a log cut short\? delete it and rerun its target"
    )
    whole.iloc[:-1].to_csv(log, index=False)
    with pytest.raises(InputError, match=refused):
        epoch_curves(CONFIG, FIG4)
    whole.assign(dev_accuracy=[*whole.dev_accuracy[:-1], None]).to_csv(log, index=False)
    with pytest.raises(InputError, match=refused):
        epoch_curves(CONFIG, FIG4)


FIG3 = {
    "id": "figure3",
    "kind": "accuracy_bars",
    "paper": "amvlstm",
    "dataset": "quoraqp",
    "split": "test",
    "metric": "accuracy",
    "models": ["mv", "q"],
    "labels": LABELS,
    "reference_model": "mv",
    "published_table": "figure3",
    "title": "QuoraQP test accuracy",
}
FIG3 = figure_spec(CONFIG, "amvlstm", FIG3)  # its dataset resolved: quoraqp is syn under CONFIG


@pytest.mark.parametrize("protocol", ["dev", "last"])
def test_accuracy_bars_are_seed_means_beside_the_published_figure3_values(runs, protocol):
    spec = {**FIG3, "protocol": protocol}
    bars = bar_values(CONFIG, spec).set_index("label")
    expected = [0.80, 0.78] if protocol == "dev" else last("q")
    assert bars.loc["aMV-LSTM (Q)", "mean"] == pytest.approx(np.mean(expected))
    assert bars.loc["aMV-LSTM (Q)", "std"] == pytest.approx(np.std(expected, ddof=1))
    assert bars["published"].tolist() == [0.759707, 0.790089]  # amvlstm,figure3 rows, by label; dataset quoraqp
    assert bars["n"].tolist() == [2, 2]
    render_figure(CONFIG, spec, runs / "figures/amvlstm/figure3")
    assert (runs / "figures/amvlstm/figure3.png").stat().st_size > 0
    name = "log.csv" if protocol == "last" else "metrics.json"
    runs_read = [f"results/runs/syn/{m}/seed{s}/{name}" for m in ("mv", "q") for s in (1, 2)]
    # a metrics.json is read only beside its run file and labels (ansel.evaluation.agreement)
    checked = [
        f for m in ("mv", "q") for s in (1, 2) for f in (f"results/runs/syn/{m}/seed{s}/run.trec", "data/processed/syn")
    ] * (protocol == "dev")
    assert FK.kind_of(spec).inputs(CONFIG, spec) == runs_read + ["workflow/papers/published_results.csv"] + list(
        dict.fromkeys(checked)
    )


def test_accuracy_bars_name_a_missing_metric(runs):
    with pytest.raises(KeyError, match="results/runs/syn/mv/seed1/metrics.json: no test/F1"):
        bar_values(CONFIG, {**FIG3, "metric": "F1"})


FIG4 = {
    "id": "figure4",
    "kind": "learning_curves",
    "paper": "amvlstm",
    "dataset": "quoraqp",
    "metric": "accuracy",
    "splits": ["dev", "test"],
    "panels": True,
    "models": ["mv", "q"],
    "labels": LABELS,
    "reference_model": "mv",
}
FIG4 = figure_spec(CONFIG, "amvlstm", FIG4)


def test_epoch_curves_per_split_and_the_reference_after_training(runs):
    curves = epoch_curves(CONFIG, FIG4)["q"].set_index(["split", "epoch"])
    for split in ("dev", "test"):
        for epoch in range(1, EPOCHS + 1):
            per_seed = [epoch_value("q", s, epoch, split) for s in (1, 2)]
            assert curves.loc[(split, epoch), "mean"] == pytest.approx(np.mean(per_seed))
            assert curves.loc[(split, epoch), "std"] == pytest.approx(np.std(per_seed, ddof=1))
    assert reference_value(CONFIG, FIG4) == pytest.approx(np.mean(last("mv", "test")))  # the last split's
    assert reference_value(CONFIG, {**FIG4, "reference_split": "dev"}) == pytest.approx(np.mean(last("mv", "dev")))
    render_figure(CONFIG, FIG4, runs / "figures/amvlstm/figure4")
    assert (runs / "figures/amvlstm/figure4.pdf").stat().st_size > 0
    # the default layout: one axes, dev only, as the smoke paper's learning_curves
    render_figure(
        CONFIG,
        figure_spec(
            CONFIG,
            "p",
            {"id": "lc", "kind": "learning_curves", "dataset": "wikiqa_mz", "metric": "MAP", "models": ["mv", "q"]},
        ),
        runs / "figures/p/lc",
    )
    assert (runs / "figures/p/lc.png").stat().st_size > 0
    # a reference model outside the panels is read too
    assert [r.dir for r in FK.kind_of(FIG4).runs(CONFIG, {**FIG4, "models": ["q"]})] == [
        f"results/runs/syn/{m}/seed{s}" for m in ("mv", "q") for s in (1, 2)
    ]


def test_epoch_curves_name_a_log_without_test_values(runs):
    log = runs / "results/runs/syn/q/seed1/log.csv"
    pd.read_csv(log).filter(regex="^(epoch|lr|loss|dev_.*)$").to_csv(log, index=False)
    with pytest.raises(InputError, match=r"syn/q/seed1/log.csv: no column 'test_accuracy' \(.*monitor_splits"):
        epoch_curves(CONFIG, FIG4)


def test_best_split_columns_read_the_epoch_best_on_that_split_and_ours_stay_dev_selected(runs):
    from ansel.report.tables import best_split_epoch_metric
    from ansel.targets import Run, Variant

    run = Run("syn", Variant("q"), 1)
    log = pd.read_csv(f"{run.dir}/log.csv")
    log["test_P@1"] = [0.2, 0.9, 0.5]  # the second epoch is best on test, the last is not
    log.to_csv(f"{run.dir}/log.csv", index=False)
    assert best_split_epoch_metric(run, "test", "MAP") == log.test_MAP[1] != log.test_MAP.iloc[-1]
    table = {
        **TABLE,
        "rows": TABLE["rows"][1:],
        "columns": [
            {"dataset": "wikiqa_mz", "split": "test", "metric": "MAP", **p} for p in ({}, {"protocol": "best_split"})
        ],
    }
    seed2 = "results/runs/syn/q/seed2/log.csv"  # best on test at its last epoch
    pd.read_csv(seed2).assign(**{"test_P@1": [0.1, 0.2, 0.3]}).to_csv(seed2, index=False)
    cells = aggregate(CONFIG, parse_table(CONFIG, "amvlstm", table), {}).set_index("column")["mean"]
    assert cells["wikiqa_mz test MAP"] == pytest.approx(np.mean([0.65, 0.69]))  # metrics.json: selected on dev
    assert cells["wikiqa_mz test MAP (best epoch on it)"] == pytest.approx(np.mean([log.test_MAP[1], last("q")[1]]))


def test_best_split_skips_epochs_without_an_evaluation_at_the_authors_cadence(runs):
    """train.monitor_every: an epoch in which no evaluation fell has an empty row; the best is
    read over the evaluations there are, and a log with none is named."""
    from ansel.report.tables import best_split_epoch_metric
    from ansel.targets import Run, Variant

    run = Run("syn", Variant("q"), 1)
    log = pd.read_csv(f"{run.dir}/log.csv")
    log["test_P@1"] = [np.nan, 0.4, 0.3]
    log.loc[0, "test_MAP"] = np.nan
    log.to_csv(f"{run.dir}/log.csv", index=False)
    assert best_split_epoch_metric(run, "test", "MAP") == log.test_MAP[1]
    log.assign(**{"test_P@1": np.nan}).to_csv(f"{run.dir}/log.csv", index=False)
    with pytest.raises(InputError, match=r"seed1/log.csv: no epoch scored test \(its test_P@1 column is empty\)"):
        best_split_epoch_metric(run, "test", "MAP")


def test_a_stand_ins_column_shows_the_originals_published_split_of_another_table(runs):
    """InsuranceQA V2 standing in for v1: our V2 test beside the paper's v1 test1 (table insuranceqa)."""
    from ansel.config import load_paper

    table = next(t for t in load_paper("apnet")["tables"] if t["id"] == "insuranceqa_v2")
    published = published_lookup(papers_dir() / "published_results.csv", "apnet", table["published_table"])
    config = {**CONFIG, "dataset_alias": {"insuranceqa_v2": "syn"}}
    stand_in = {
        **table,
        "rows": [{"label": "AP-CNN", "model": "q"}],
        "columns": [{**c, "metric": "MAP"} for c in table["columns"] if c["split"] == "test"],
    }
    published = {(*k[:3], "MAP" if k[3] == "P@1" else k[3]): v for k, v in published.items()}  # metrics the fakes have
    cells = aggregate(config, parse_table(config, "apnet", stand_in), published).set_index(["row", "column"])
    cell = cells.loc[("AP-CNN", "insuranceqa_v2 test MAP")]
    assert cell["published"] == published[("insuranceqa_v1", "test1", "AP-CNN", "MAP")] == 69.8  # a percentage
    assert cell["mean"] == pytest.approx(100 * np.mean([0.65, 0.69]))  # ours printed as one too
