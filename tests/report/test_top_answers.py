"""Table kind top_answers (the aMV-LSTM paper's Table 4) on a fake dataset and fake runs, and the
paper spec keys of the aMV-LSTM tables and figures against workflow/schemas/paper.schema.yaml."""

import json
import re
import shutil
from dataclasses import replace

import pandas as pd
import pytest
import yaml

from ansel.cli import main
from ansel.config import ConfigError, load_paper
from ansel.data.canonical import Dataset
from ansel.evaluation import agreement
from ansel.evaluation.metrics import write_trec_run
from ansel.paper_targets import check_published, published_keys
from ansel.published import PublishedFileError
from ansel.report.top_answers import ranked_answers
from ansel.table_kinds import kind_of, spec_table

# The spec keys of the aMV-LSTM paper's Tables 3-4 and Figures 3-4 (model names are placeholders).
SPEC = """
paper: amvlstm
title: aMV-LSTM (fake)
tables:
  - id: table3
    caption: WikiQA test
    rows:
      - {label: MV-LSTM, model: mv}
      - {label: aMV-LSTM (Q), model: q}
    columns:
      - {dataset: wikiqa_mz, split: test, metric: nDCG@3, published_dataset: wikiqa}
      - {dataset: wikiqa_mz, split: test, metric: MAP, published_dataset: wikiqa}
      - {dataset: wikiqa_mz, split: test, metric: nDCG@3, protocol: last, published_dataset: wikiqa}
      - {dataset: wikiqa_mz, split: test, metric: MAP, protocol: last, published_dataset: wikiqa}
  - id: table4
    kind: top_answers
    caption: The 3 first answers of MV-LSTM to "Where do crocodiles live?"
    dataset: wikiqa_mz
    published_dataset: wikiqa
    split: test
    question: Where do crocodiles live?
    reference: mv
    models: [mv, q]
    labels: {mv: MV-LSTM, q: aMV-LSTM (Q)}
    top: 3
    seed: 1
figures:
  - {id: figure3, kind: accuracy_bars, dataset: quoraqp, split: test, metric: accuracy, protocol: last,
     models: [mv, q], labels: {mv: MV-LSTM, q: aMV-LSTM (Q)}, reference_model: mv,
     published_table: figure3, title: "QuoraQP test accuracy at the end of training"}
  - {id: figure4, kind: learning_curves, dataset: quoraqp, metric: accuracy, splits: [dev, test], panels: true,
     models: [mv, q], labels: {mv: MV-LSTM, q: aMV-LSTM (Q)}, reference_model: mv, reference_split: test}
"""
CONFIG = {
    "preset": "test",
    "seeds": 2,
    "datasets": {"syn": {"source": "syn"}},
    "scale": {},
    "dataset_alias": {"wikiqa_mz": "syn", "quoraqp": "syn"},
    "models": {
        "mv": {"arch": "qa_lstm", "train": {"lr": 1.0, "select_metric": "MAP"}},
        "q": {"arch": "qa_lstm", "train": {"lr": 1.0, "lr_grid": [1.0, 0.1], "select_metric": "MAP"}},
    },
}
QUESTIONS = {"q1": "where do crocodiles live", "q2": "what is a crocodile", "q3": "Where do crocodiles live"}
ANSWERS = [f"answer {i}" for i in range(5)]  # q1's candidates; a0 is correct
# run -> q1's scores of a0..a4; q2 has two candidates everywhere
SCORES = {
    "mv/seed1": [0.7, 0.1, 0.8, 0.9, 0.0],
    "q/seed1": [0.0, 0.1, 0.8, 0.9, 0.5],
    "q@lr=0.1/seed1": [0.9, 0.1, 0.8, 0.7, 0.0],
}


@pytest.fixture
def root(tmp_path, monkeypatch, repo_root):
    """A checkout holding the spec above (with the real schema, and the real published values it
    reads: the DAG build refuses a row no table or figure of its paper reads); the fake dataset and
    runs in the working directory."""
    checkout = tmp_path / "checkout"
    (checkout / "workflow/papers").mkdir(parents=True)
    shutil.copytree(repo_root / "workflow/schemas", checkout / "workflow/schemas")
    (checkout / "workflow/papers/amvlstm.yaml").write_text(SPEC)
    monkeypatch.setenv("ANSEL_ROOT", str(checkout))
    header, *rows = (repo_root / "workflow/papers/published_results.csv").read_text().splitlines(keepends=True)
    read = published_keys(CONFIG, "amvlstm")
    (checkout / "workflow/papers/published_results.csv").write_text(
        "".join([header, *(r for r in rows if tuple(r.split(",")[:6]) in read)])
    )
    monkeypatch.chdir(tmp_path)
    questions = pd.DataFrame(
        {
            "qid": list(QUESTIONS),
            "text": list(QUESTIONS.values()),
            "category": None,
            "tokens": [t.split() for t in QUESTIONS.values()],
        }
    )
    answers = pd.DataFrame({"aid": [f"a{i}" for i in range(7)], "text": ANSWERS + ["x", "y"], "tokens": [["w"]] * 7})
    test = pd.DataFrame(
        [("q1", f"a{i}", int(i == 0)) for i in range(5)] + [("q2", "a5", 1), ("q2", "a6", 0)],
        columns=["qid", "aid", "label"],
    )
    train = pd.DataFrame([("q3", "a0", 1)], columns=["qid", "aid", "label"])  # q3 reads as q1, but not in test
    Dataset("syn", questions, answers, {"train": train, "test": test}).save(tmp_path / "data/processed/syn")
    for run, scores in SCORES.items():
        rows = [("test:q1", f"a{i}", s) for i, s in enumerate(scores)] + [
            ("test:q2", "a5", 1.0),
            ("test:q2", "a6", 0.0),
        ]
        path = tmp_path / f"results/runs/syn/{run}/run.trec"
        path.parent.mkdir(parents=True)
        write_trec_run(pd.DataFrame(rows, columns=["qid", "aid", "score"]), path, "fake")
    for model, dev in {"q": [0.5, 0.5], "q@lr=0.1": [0.6, 0.7]}.items():  # q's grid: lr 0.1 is best on dev
        for seed, value in enumerate(dev, start=1):
            run = tmp_path / f"results/runs/syn/{model}/seed{seed}"
            run.mkdir(parents=True, exist_ok=True)
            (run / "metrics.json").write_text(json.dumps({"dev": {"MAP": value}}))
    return tmp_path


def table4_job(root) -> None:
    """``ansel table`` of the spec's table4, as its rule runs it."""
    main(
        [
            "table",
            "--config",
            json.dumps(CONFIG),
            "--paper",
            "amvlstm",
            "--table",
            "table4",
            "--published",
            str(root / "checkout/workflow/papers/published_results.csv"),
            "--out-prefix",
            "results/tables/amvlstm/table4",
        ]
    )


def test_top_answers_table_ranks_the_references_first_answers_per_model(root, monkeypatch):
    monkeypatch.setattr(agreement, "check_runs", lambda runs: None)  # fakes: metrics.json alone (their check:
    # tests/reliability/test_tampered_metrics.py)
    table4_job(root)
    out = root / "results/tables/amvlstm/table4"
    table = json.loads(out.with_suffix(".json").read_text())
    assert list(table)[:3] == ["a3", "a2", "a0"]  # mv's first three, in its order
    assert table["a0"] == {"label": 1, "MV-LSTM": {"score": 0.7, "rank": 3}, "aMV-LSTM (Q)": {"score": 0.9, "rank": 1}}
    assert table["correct_rank"] == {
        "MV-LSTM": {"ours": 3, "published": 3.0},
        "aMV-LSTM (Q)": {"ours": 1, "published": 1.0},
    }  # q: the grid point lr 0.1
    md = out.with_suffix(".md").read_text()
    assert "| answer 0 | 0.7000 (3) | 0.9000 (1)     | 1       |" in md
    assert "Question q1 of syn test: 5 candidates, 1 correct; seed 1." in md
    assert "ours MV-LSTM 3, aMV-LSTM (Q) 1; published MV-LSTM 3, aMV-LSTM (Q) 1." in md
    csv = pd.read_csv(out.with_suffix(".csv"))
    assert set(csv.aid) == {"a3", "a2", "a0"}
    assert set(csv.run) == {"results/runs/syn/mv/seed1", "results/runs/syn/q@lr=0.1/seed1"}
    assert out.with_suffix(".tex").read_text().startswith("\\begin{table}")


def test_a_published_row_of_its_paper_that_nothing_reads_is_refused_before_the_table_job(root):
    """A misspelt label would leave its published rank "—": the DAG build's check (``check_published``,
    run before any table job) names the line and the label meant, a top_answers table's rank among them."""
    published = root / "checkout/workflow/papers/published_results.csv"
    check_published(CONFIG, ["amvlstm"])
    published.write_text(published.read_text().replace(",aMV-LSTM (Q),correct_rank,", ",aMV-LSTM(Q),correct_rank,"))
    with pytest.raises(
        PublishedFileError,
        match=r"published_results.csv, line \d+: .* reads model 'aMV-LSTM\(Q\)' of amvlstm "
        r"table4 wikiqa test \(typo of 'aMV-LSTM \(Q\)'\?\)",
    ):
        check_published(CONFIG, ["amvlstm"])


def test_top_answers_inputs_are_the_dataset_and_the_shown_runs(root):
    table = spec_table(CONFIG, "amvlstm", "table4")
    assert kind_of(table).inputs(CONFIG, table) == [
        "data/processed/syn",
        "results/runs/syn/mv/seed1/run.trec",
        "results/runs/syn/q/seed1/metrics.json",
        "results/runs/syn/q/seed1/run.trec",
        "results/runs/syn/q/seed2/metrics.json",
        "results/runs/syn/q@lr=0.1/seed1/metrics.json",
        "results/runs/syn/q@lr=0.1/seed1/run.trec",
        "results/runs/syn/q@lr=0.1/seed2/metrics.json",
        "results/runs/syn/q/seed2/run.trec",
        "results/runs/syn/q@lr=0.1/seed2/run.trec",
    ]  # beside its metrics.json
    assert len(kind_of(table).runs(CONFIG, table)) == 5


@pytest.mark.parametrize(
    "question,message",
    [
        ("Where do alligators live?", "table table4: no test question of syn reads 'Where do alligators live?'"),
        ("what is a crocodile", "table table4: question 'what is a crocodile' is ambiguous in syn test: qids q2, q4"),
    ],
)
def test_a_question_absent_or_ambiguous_is_named(root, question, message):
    data = Dataset.load(root / "data/processed/syn")
    data.questions.loc[len(data.questions)] = ["q4", "What is a crocodile?", ["w"], None]
    data.splits["test"].loc[len(data.splits["test"])] = ["q4", "a6", 1]
    data.save(root / "data/processed/syn")
    table = spec_table(CONFIG, "amvlstm", "table4")
    with pytest.raises(KeyError, match=re.escape(message)):
        ranked_answers(CONFIG, replace(table, question=question), kind_of(table).models(table))


def test_the_amvlstm_spec_keys_validate_and_a_wrong_key_is_refused_with_its_path(root):
    spec = load_paper("amvlstm")
    assert [t["id"] for t in spec["tables"]] == ["table3", "table4"] and len(spec["figures"]) == 2
    path = root / "checkout/workflow/papers/amvlstm.yaml"
    for edit, message in [
        (lambda s: s["tables"][1].update(questoin="x"), "amvlstm.yaml: tables.1: unknown key 'questoin'"),
        (
            lambda s: s["tables"][0]["columns"][2].update(protocol="best"),
            "tables.0.columns.2.protocol: 'best' is not one of",
        ),
        (lambda s: s["figures"][0].update(refrence_model="mv"), "figures.0: unknown key 'refrence_model'"),
        (lambda s: s["figures"][1].update(panel=True), "figures.1: unknown key 'panel'"),
        (lambda s: s["tables"][1].pop("question"), "tables.1: 'question' is a required property"),
    ]:
        broken = yaml.safe_load(SPEC)
        edit(broken)
        path.write_text(yaml.safe_dump(broken))
        with pytest.raises(ConfigError, match=message):
            load_paper("amvlstm")
