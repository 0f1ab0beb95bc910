"""Paired significance tests of a metrics table (ansel.report.significance) on a fake dataset and fake
runs: marks against the baseline row, claims' sentences, the .json's p values, and the spec checks."""

import json
import re
import shutil

import pandas as pd
import pytest
import yaml
from scipy import stats

from ansel.config import ConfigError
from ansel.data.canonical import Dataset
from ansel.evaluation.metrics import per_question, ranking_metrics, write_trec_run
from ansel.report.paired_tests import holm
from ansel.report.significance import annotate, claim_verdicts, compare, mark_cells, significance_notes
from ansel.report.tables import aggregate, render
from ansel.specs import TableSpec, parse_table
from ansel.table_kinds import kind_of, spec_table
from ansel.targets import significance_columns, significance_inputs

N = 40  # questions, 4 candidates each, the first one correct
# model -> per seed: the questions (by number) whose correct answer it ranks first (else third)
FIRST = {
    "base": [lambda q: q % 2 == 0, lambda q: q % 2 == 0 or q % 7 == 0],
    "good": [lambda q: q % 10 != 0, lambda q: q % 8 != 0],
    "twin": [lambda q: q % 2 == 1, lambda q: q % 2 == 1 or q % 7 == 0],
}  # base's count, other questions
TABLE_SPEC = {
    "id": "t",
    "caption": "Demo",
    "rows": [
        {"label": "Base", "model": "base"},
        {"label": "Good", "model": "good"},
        {"label": "Twin", "model": "twin"},
        {"label": "Prior", "model": None},
    ],
    "columns": [
        {"dataset": "wiki", "split": "test", "metric": "MAP"},
        {"dataset": "wiki", "split": "test", "metric": "MRR"},
    ],
    "baseline": "Base",
    "claims": ["Good > Base", "Twin > Base", "Good > Twin"],
}
CONFIG = {
    "seeds": 2,
    "datasets": {"syn": {"source": "syn", "eval": {"splits": ["test"]}}},
    "dataset_alias": {"wiki": "syn"},
}
COLUMN = "wiki test MAP"


def table_of(**changes) -> TableSpec:
    """TABLE_SPEC with ``changes``, parsed."""
    return parse_table(CONFIG, "p", {**TABLE_SPEC, **changes})


TABLE = table_of()


def scored(model: str, seed: int) -> pd.DataFrame:
    first = FIRST[model][seed - 1]
    return pd.DataFrame(
        [
            (f"q{q}", f"a{q}_{i}", int(i == 0), [(1.0 if first(q) else 0.2), 0.9, 0.5, 0.1][i])
            for q in range(N)
            for i in range(4)
        ],
        columns=["qid", "aid", "label", "score"],
    )


@pytest.fixture
def runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cands = scored("base", 1)
    questions = pd.DataFrame({"qid": [f"q{q}" for q in range(N)], "text": "q", "tokens": [["w"]] * N, "category": None})
    answers = pd.DataFrame({"aid": cands.aid, "text": "a", "tokens": [["w"]] * len(cands)})
    Dataset("syn", questions, answers, {"test": cands[["qid", "aid", "label"]]}).save(tmp_path / "data/processed/syn")
    for model in FIRST:
        for seed in (1, 2):
            d = tmp_path / f"results/runs/syn/{model}/seed{seed}"
            d.mkdir(parents=True)
            s = scored(model, seed)
            write_trec_run(s.assign(qid="test:" + s.qid), d / "run.trec", model)
            (d / "metrics.json").write_text(json.dumps({"test": ranking_metrics(s)}))
            (d / "config.json").write_text(json.dumps({"eval": {"splits": ["test"], "no_positive": "drop"}}))
    return tmp_path


def pooled(model: str, metric: str = "MAP") -> pd.Series:
    return pd.concat([per_question(scored(model, seed))[metric] for seed in (1, 2)], axis=1).mean(axis=1)


def test_the_pooled_and_per_seed_tests_are_scipys_on_the_runs_questions_holm_adjusted(runs):
    results = compare(CONFIG, TABLE).set_index(["row", "versus", "column", "scope"])
    # the baseline's pairs, then the claims not already compared: Good > Twin
    assert list(dict.fromkeys((r, v) for r, v, _, _ in results.index)) == [
        ("Good", "Base"),
        ("Twin", "Base"),
        ("Good", "Twin"),
    ]
    good = results.loc[("Good", "Base", COLUMN, "pooled")]
    assert good["n"] == N and good["t"] == pytest.approx(stats.ttest_rel(pooled("good"), pooled("base")).pvalue)
    assert good["difference"] == pytest.approx(pooled("good").mean() - pooled("base").mean())
    seed2 = results.loc[("Good", "Base", COLUMN, "seed2")]
    assert seed2["t"] == pytest.approx(
        stats.ttest_rel(per_question(scored("good", 2)).MAP, per_question(scored("base", 2)).MAP).pvalue
    )
    pooled_ = results.xs("pooled", level="scope").sort_index()  # 3 pairs x 2 columns
    family = pooled_[pooled_.index.get_level_values("versus") == "Base"]  # the baseline's: 2 pairs x 2 columns
    assert len(family) == 4 and family.t_holm.to_numpy() == pytest.approx(holm(family.t.to_numpy()))
    assert family.randomisation_holm.to_numpy() == pytest.approx(holm(family.randomisation.to_numpy()))
    assert pooled_.loc[("Good", "Twin")].t_holm.isna().all()  # a claim's pair outside the baseline's family
    claims = pooled_.claims_holm  # every pair is a claim's: 3 x 2 bootstrap p values
    assert claims.to_numpy() == pytest.approx(holm(pooled_.bootstrap.to_numpy()))
    seed1 = results.xs("seed1", level="scope")
    assert seed1.claims_holm.to_numpy() == pytest.approx(holm(seed1.t.to_numpy()))


def test_a_claim_holds_and_flips_to_does_not_hold_when_the_runs_are_swapped(runs):
    verdicts = claim_verdicts(compare(CONFIG, TABLE), TABLE)
    assert verdicts["Good > Base"][COLUMN]["verdict"] == "holds"
    assert verdicts["Good > Base"][COLUMN]["seeds_for"] == 2
    assert verdicts["Twin > Base"][COLUMN]["verdict"] == "not significant"
    assert verdicts["Good > Twin"][COLUMN]["verdict"] == "holds"
    base, good = runs / "results/runs/syn/base", runs / "results/runs/syn/good"
    base.rename(runs / "tmp")
    good.rename(base)
    (runs / "tmp").rename(good)
    swapped = claim_verdicts(compare(CONFIG, TABLE), TABLE)["Good > Base"][COLUMN]
    assert swapped["verdict"] == "does not hold" and swapped["seeds_against"] == 2
    assert swapped["difference"] == pytest.approx(pooled("base").mean() - pooled("good").mean())


def test_a_table_with_a_baseline_renders_marks_claims_and_p_values(runs):
    cells = aggregate(CONFIG, TABLE, {})
    cells, notes, extra = annotate(CONFIG, TABLE, cells)
    render(cells, TABLE, notes, runs / "out/t", extra_json=extra)
    md = (runs / "out/t.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in md.splitlines() if line.startswith("| ")}
    assert rows["Good"].count("▲") == 2 and "▲" not in rows["Base"] + rows["Twin"] + rows["Prior"]
    assert "▼" not in md.split("- ")[0]  # no row is worse than the baseline
    assert (
        "▲/▼ = significantly better/worse than Base (pooled paired t-test, Holm-adjusted over the baseline's 4 comparisons)."
        in md
    )
    assert "Claims (the paper's statements) are their own Holm family (6 tests)" in md
    assert re.search(
        r"- Good > Base on wiki test MAP: holds \(seed bootstrap p = [0-9.e-]+, Holm-adjusted over the claims; "
        rf"mean difference \+0\.\d{{4}} over {N} questions; 2/2 seeds significant\)",
        md,
    )
    assert re.search(r"- Twin > Base on wiki test MRR: not significant \(seed bootstrap p = [0-9.]+, Holm-adjusted", md)
    saved = json.loads((runs / "out/t.json").read_text())
    assert set(saved) == {"Base", "Good", "Twin", "Prior", "significance"}
    entry = saved["significance"]["comparisons"]["Good vs Base"][COLUMN]["pooled"]
    assert entry["n_questions"] == N and entry["t"]["p"] <= entry["t"]["p_holm"] <= 1
    assert set(entry["randomisation"]) == {"p", "p_holm"} and set(entry["bootstrap"]) == {"p", "p_holm_claims"}
    assert saved["significance"]["claims"]["Good > Base"][COLUMN]["verdict"] == "holds"
    assert pd.read_csv(runs / "out/t.csv").set_index(["row", "column"]).loc[("Good", COLUMN), "mark"] == "▲"


def test_a_cell_without_a_mean_gets_no_mark(runs):
    """The tests read the run files; a cell whose value is missing (a log.csv's last epoch read as an
    empty field, say) printed '— ± — ▲': a mark on nothing."""
    cells = aggregate(CONFIG, TABLE, {})
    cells.loc[(cells.row == "Good") & (cells.column == COLUMN), ["mean", "std"]] = float("nan")
    marked = mark_cells(cells, compare(CONFIG, TABLE), TABLE)
    assert marked.set_index(["row", "column"]).mark.to_dict()[("Good", COLUMN)] == ""
    assert marked.set_index(["row", "column"]).mark.to_dict()[("Good", "wiki test MRR")] == "▲"  # its value shown
    render(marked, TABLE, [], runs / "out/t")
    good = next(line for line in (runs / "out/t.md").read_text().splitlines() if line.startswith("| Good "))
    assert [cell.strip() for cell in good.split("|")[2:4]] == ["— ± — (n=2)", "0.9250 ± 0.0118 (n=2) ▲"]


def test_the_randomisation_test_can_decide_and_untested_columns_are_said(runs):
    last = {"dataset": "wiki", "split": "test", "metric": "MAP", "protocol": "last"}
    table = table_of(
        significance={"test": "randomisation", "alpha": 0.01},
        columns=TABLE_SPEC["columns"][:1] + [last, {"dataset": "wiki", "split": "test", "metric": "accuracy"}],
    )
    results = compare(CONFIG, table)
    assert set(results.column) == {COLUMN}
    cells = pd.DataFrame({"row": ["Good", "Good"], "column": [COLUMN, "wiki test MAP (last epoch)"], "mean": 0.5})
    assert list(mark_cells(cells, results, table).mark) == ["▲", ""]
    notes = significance_notes(results, table)
    assert "per-seed counts use the paired randomisation test" in notes[2]
    assert (
        "Significance: not tested on wiki test MAP (last epoch), wiki test accuracy (a (last epoch) column has no "
        "run file of its epoch: its rows' runs keep the last epoch's only with train.keep_last, the best epoch's "
        "never; accuracy: no per-question value)."
    ) in notes


def test_a_table_without_baseline_or_claims_is_unchanged(runs):
    plain = parse_table(CONFIG, "p", {k: v for k, v in TABLE_SPEC.items() if k not in ("baseline", "claims")})
    cells = aggregate(CONFIG, plain, {})
    assert annotate(CONFIG, plain, cells) == (cells, [], {})
    assert significance_inputs(CONFIG, plain) == []  # (its run files are inputs still: tables check metrics.json)


def test_the_compared_runs_files_and_the_labels_are_inputs(runs):
    inputs = kind_of(TABLE).inputs(CONFIG, TABLE)
    assert [p for p in inputs if p.endswith("run.trec") or p.startswith("data/processed")] == [
        *(f"results/runs/syn/{m}/seed{s}/run.trec" for m in ("base", "good", "twin") for s in (1, 2)),
        "data/processed/syn",
    ]


@pytest.fixture
def checkout(tmp_path, monkeypatch, repo_root):
    """A checkout whose paper p's spec is TABLE, with the real schema."""
    (tmp_path / "workflow/papers").mkdir(parents=True)
    shutil.copytree(repo_root / "workflow/schemas", tmp_path / "workflow/schemas")
    monkeypatch.setenv("ANSEL_ROOT", str(tmp_path))
    return tmp_path / "workflow/papers/p.yaml"


@pytest.mark.parametrize(
    "edit,message",
    [
        (
            {"baseline": "Bsae"},
            "table t: baseline names 'Bsae', not a row of the table (rows: 'Base', 'Good', 'Twin', 'Prior')",
        ),
        ({"claims": ["Good > Nope"]}, "table t: claim 'Good > Nope' names 'Nope', not a row of the table"),
        ({"claims": ["Prior > Base"]}, "table t: claim 'Prior > Base' names 'Prior', a row kept as published"),
        ({"claims": ["Good > Good"]}, "table t: claim 'Good > Good' compares a row with itself"),
        ({"claims": ["Good > Base > Twin"]}, "table t: claim 'Good > Base > Twin': expected"),
        ({"claims": ["Good >= Base"]}, "claims.0: 'Good >= Base' does not match"),
        ({"significance": {"test": "wilcoxon"}}, "significance.test: 'wilcoxon' is not one of"),
        (
            {"columns": [{"dataset": "wiki", "split": "test", "metric": "MAPP"}]},
            "table t: columns[0].metric: 'MAPP' is not a metric the runs report (known: P@1, MAP",
        ),
        (
            {"columns": [{"dataset": "wiki", "split": "tset", "metric": "MAP"}]},
            "table t: columns[0].split: 'tset' is not evaluated on dataset 'syn' (its eval.splits: test)",
        ),
        (
            {"columns": [{"dataset": "wiki", "split": "test", "metric": "seconds_per_batch"}]},
            "table t: columns[0].split: 'test': seconds_per_batch is timed on 'train'",
        ),
        (
            {"columns": [{"dataset": "wiki", "split": "test", "metric": "MAP", "protocol": "benchmark"}]},
            "table t: columns[0].protocol: benchmark times training steps; metric 'MAP' is not a timing",
        ),
    ],
)
def test_a_spec_naming_an_unknown_row_metric_or_split_is_refused_naming_the_file_table_and_key(checkout, edit, message):
    spec = {"paper": "p", "title": "P", "tables": [{**TABLE_SPEC, **edit}]}
    checkout.write_text(yaml.safe_dump(spec))
    with pytest.raises(ConfigError, match=re.escape(str(checkout)) + ".*" + re.escape(message)):
        spec_table(CONFIG, "p", "t")


def test_the_real_specs_declare_baselines_and_claims_that_name_their_rows():
    from ansel.config import load

    config = load(preset="cpu")
    for paper, table, baseline in [
        ("apnet", "wikiqa", "QA-CNN"),
        ("apnet", "trecqa", "QA-CNN"),
        ("amvlstm", "table3", "MV-LSTM"),
        ("ggsa", "extension", "QA-LSTM"),
    ]:
        spec = spec_table(config, paper, table)  # checks the labels
        assert spec.baseline == baseline and spec.claims
        assert any(p.endswith("run.trec") for p in kind_of(spec).inputs(config, spec))
    # aMV-LSTM's Table 3: the three dev-selected columns and, its runs keeping their last epoch
    # (train.keep_last: the paper's protocol), the three (last epoch) ones, read from run_last.trec
    amv = spec_table(config, "amvlstm", "table3")
    assert [c.protocol for c in significance_columns(config, amv)] == ["dev"] * 3 + ["last"] * 3
    assert any(p.endswith("/run_last.trec") for p in kind_of(amv).inputs(config, amv))


def test_a_claims_verdict_does_not_depend_on_unrelated_rows(runs):
    """The claims are their own Holm family: a row tested only against the baseline leaves them as they were."""
    extra = runs / "results/runs/syn/extra"
    shutil.copytree(runs / "results/runs/syn/twin", extra)
    wider = table_of(rows=TABLE_SPEC["rows"] + [{"label": "Extra", "model": "extra"}])
    before, after = (claim_verdicts(compare(CONFIG, t), t) for t in (TABLE, wider))
    assert before == after


def test_a_claim_as_the_paper_states_it_with_less_than(runs):
    table = table_of(claims=["Base < Good"])
    verdict = claim_verdicts(compare(CONFIG, table), table)["Base < Good"][COLUMN]
    assert verdict["verdict"] == "holds" and verdict["difference"] > 0
    assert "- Base < Good on wiki test MAP: holds" in "\n".join(
        f"- {n}" for n in significance_notes(compare(CONFIG, table), table)
    )


def test_a_last_epoch_column_is_tested_from_run_last_trec_where_every_compared_row_keeps_it(runs):
    """A (last epoch) column: tested only where every compared model sets train.keep_last, on each
    run's run_last.trec (checked against its metrics_last.json); else left out, the notes saying why."""
    last = table_of(
        columns=[*TABLE_SPEC["columns"], {"dataset": "wiki", "split": "test", "metric": "MAP", "protocol": "last"}]
    )
    models = {m: {"arch": "qa_cnn", "train": {"keep_last": True}} for m in FIRST}
    assert [c.protocol for c in significance_columns({**CONFIG, "models": models}, last)] == ["dev"] * 2 + ["last"]
    assert (
        len(significance_columns({**CONFIG, "models": {**models, "twin": {"arch": "qa_cnn", "train": {}}}}, last)) == 2
    )
    for model in FIRST:  # the last epoch ranks as the other model's selected one did: Good and Twin swap
        for seed in (1, 2):
            d = runs / f"results/runs/syn/{model}/seed{seed}"
            s = scored({"good": "twin", "twin": "good"}.get(model, model), seed)
            write_trec_run(s.assign(qid="test:" + s.qid), d / "run_last.trec", model)
            (d / "metrics_last.json").write_text(json.dumps({"test": ranking_metrics(s)}))
    results = compare({**CONFIG, "models": models}, last).set_index(["row", "versus", "column", "scope"])
    dev, at_last = (results.loc[("Good", "Base", c, "pooled")] for c in (COLUMN, f"{COLUMN} (last epoch)"))
    assert dev["difference"] == pytest.approx(pooled("good").mean() - pooled("base").mean())
    assert at_last["difference"] == pytest.approx(pooled("twin").mean() - pooled("base").mean())
    (runs / "results/runs/syn/good/seed1/metrics_last.json").write_text(json.dumps({"test": {"MAP": 0.1}}))
    with pytest.raises(
        ValueError,
        match=r"good/seed1/run_last.trec: its test scores give MAP .* where .*metrics_last.json "
        r"reports 0\.1:",
    ):
        compare({**CONFIG, "models": models}, last)
    # a row that trains nothing (a lexical context row) has one state: its run.trec stands for its last epoch
    lexical = {**models, "twin": {"arch": "bm25"}}
    assert len(significance_columns({**CONFIG, "models": lexical}, last)) == 3
    inputs = kind_of(last).inputs({**CONFIG, "models": lexical}, last)
    assert "results/runs/syn/twin/seed1/run.trec" in inputs
    assert "results/runs/syn/good/seed1/run_last.trec" in inputs
