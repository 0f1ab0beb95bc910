import json
import math

import pandas as pd
import pytest

from ansel.cli import main
from ansel.config import load
from ansel.data.canonical import Dataset
from ansel.data.stats import dataset_stats
from ansel.report.dataset_stats import aggregate_stats, published_stats
from ansel.report.tables import PublishedFileError, render
from ansel.specs import parse_table
from ansel.table_kinds import kind_of, spec_table

TABLE = {
    "id": "stats",
    "kind": "dataset_stats",
    "caption": "Stats",
    "rows": [
        {"label": "Wiki", "dataset": "wiki", "splits": ["train", "test"]},
        {
            "label": "Wiki (other paper)",
            "dataset": "wiki",
            "splits": [],
            "published": {"paper": "other", "table": "t9"},
        },
    ],
    "columns": ["questions", "pairs", "avg_q_len", "vocabulary"],
}
KNOWN = (["syn", "wiki"], ["train", "test"])  # the datasets (configured, aliased) and their splits
PUBLISHED = [  # paper, table, dataset, split, statistic, value
    ("p", "stats", "wiki", "train", "questions", "2"),
    ("p", "stats", "wiki", "test", "questions", "5"),  # ours 1: flagged
    ("p", "stats", "wiki", "train", "avg_q_len", "3"),  # ours 2.5 rounds to 2: flagged
    ("p", "stats", "wiki", "all", "avg_q_len", "2.7"),  # ours 2.67 rounds to 2.7: not flagged
    ("p", "stats", "wiki", "all", "vocabulary", ""),  # not found in the paper
    ("other", "t9", "wiki", "all", "pairs", "7"),
]


def tiny_dataset() -> Dataset:
    questions = pd.DataFrame(
        {
            "qid": ["q1", "q2", "q3"],
            "text": ["", "", ""],
            "category": [None] * 3,
            "tokens": [["what", "is"], ["who", "is", "he"], ["why", "not", "x"]],
        }
    )
    answers = pd.DataFrame(
        {"aid": ["a1", "a2", "a3"], "text": ["", "", ""], "tokens": [["it", "is"], ["he", "is", "him"], ["no"]]}
    )
    splits = {
        "train": pd.DataFrame({"qid": ["q1", "q1", "q2"], "aid": ["a1", "a2", "a2"], "label": [1, 0, 1]}),
        "test": pd.DataFrame({"qid": ["q3", "q3", "q3"], "aid": ["a1", "a2", "a3"], "label": [0, 0, 1]}),
    }
    return Dataset("syn", questions, answers, splits)


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tiny_dataset().save(tmp_path / "data/processed/syn")
    main(["stats", "--processed", "data/processed/syn", "--out", "results/stats/syn.csv"])  # the rule's command
    csv = tmp_path / "published.csv"
    pd.DataFrame(PUBLISHED, columns=["paper", "table", "dataset", "split", "statistic", "value"]).assign(
        found="yes", note=""
    ).to_csv(csv, index=False)
    config = {"seeds": 5, "datasets": {"syn": {"source": "syn"}}, "dataset_alias": {"wiki": "syn"}}
    return config, published_stats(csv, *KNOWN)


def test_cells_are_the_measured_statistics_beside_the_published(setup, tmp_path):
    config, published = setup
    table = parse_table(config, "p", TABLE)
    cells = aggregate_stats(table, published).set_index(["row", "column"])
    measured = dataset_stats(tiny_dataset()).set_index("split")
    assert list(cells.index.get_level_values(0).unique()) == [
        "Wiki train",
        "Wiki test",
        "Wiki all",
        "Wiki (other paper) all",
    ]
    for (_, stat), cell in cells.iterrows():
        assert cell["mean"] == pytest.approx(measured.loc[cell["split"], stat]) and cell["run_dataset"] == "syn"
    assert (
        cells.loc[("Wiki train", "questions"), "published"] == 2
        and not cells.loc[("Wiki train", "questions"), "differs"]
    )
    assert cells.loc[("Wiki test", "questions"), "differs"]
    assert cells.loc[("Wiki train", "avg_q_len"), "differs"]
    assert not cells.loc[("Wiki all", "avg_q_len"), "differs"]
    assert math.isnan(cells.loc[("Wiki all", "vocabulary"), "published"])
    assert math.isnan(cells.loc[("Wiki all", "pairs"), "published"])  # only the other paper gives it
    assert cells.loc[("Wiki (other paper) all", "pairs"), "published"] == 7

    render(cells.reset_index(), table, [], tmp_path / "out/stats")
    md = (tmp_path / "out/stats.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| Wiki all"))
    assert [c.strip() for c in row.split("|")[1:-1]] == [
        "Wiki all",
        "3",
        "—",
        "6",
        "—",
        "2.67",
        "2.70",
        "10",
    ]  # vocabulary: nothing published, no column
    nested = json.loads((tmp_path / "out/stats.json").read_text())
    assert nested["Wiki test"]["questions"] == {"mean": 1.0, "std": 0.0, "n": 1, "published": 5.0}


def test_missing_statistics_file_names_the_rule(setup, tmp_path):
    config, published = setup
    (tmp_path / "results/stats/syn.csv").unlink()
    with pytest.raises(FileNotFoundError, match="rule dataset_stats"):
        aggregate_stats(parse_table(config, "p", TABLE), published)


def test_unknown_statistic_and_missing_split_are_named(setup):
    config, published = setup
    with pytest.raises(ValueError, match="unknown statistic.*avg_candidates"):
        aggregate_stats(parse_table(config, "p", {**TABLE, "columns": ["avg_candidates"]}), published)
    rows = [{"label": "Wiki", "dataset": "wiki", "splits": ["test1"]}]
    with pytest.raises(KeyError, match="row Wiki: .*no split 'test1'"):
        aggregate_stats(parse_table(config, "p", {**TABLE, "rows": rows}), published)


def test_unknown_published_statistic_names_the_line(tmp_path):
    csv = tmp_path / "p.csv"
    csv.write_text("paper,table,dataset,split,statistic,value\np,t,d,all,questions,1\np,t,d,all,avg_len,2\n")
    with pytest.raises(ValueError, match="line 3: unknown statistic 'avg_len'"):
        published_stats(csv, ["d"], [])


@pytest.mark.parametrize(
    "line, error",
    [
        ("p,stats,wiki,test,questions,sixtyfive", r"line 3: value 'sixtyfive' is not a number"),
        ("p,stats,wiki,train,questions,2", r"duplicate key .* lines 2, 3: paper='p', table='stats', dataset='wiki'"),
        ("p,stats,wikk,test,questions,65", r"line 3: unknown dataset 'wikk' \(typo of 'wiki'\?\); known: syn, wiki$"),
        (
            "p,stats,wiki,tset,questions,65",
            r"line 3: unknown split 'tset' \(typo of 'test'\?\); known: all, test, train$",
        ),
    ],
)
def test_a_published_line_no_cell_can_read_is_refused_naming_it(tmp_path, line, error):
    """A value that is not a number, a key held twice, a dataset or split no table can look up (a
    typo would leave its cell "—") is refused naming the file and line, as published_results.csv's."""
    csv = tmp_path / "p.csv"
    csv.write_text(f"paper,table,dataset,split,statistic,value\np,stats,wiki,train,questions,2\n{line}\n")
    with pytest.raises(PublishedFileError, match=rf"^{csv}.*{error}"):
        published_stats(csv, *KNOWN)


@pytest.mark.parametrize("preset", ["smoke", "cpu", "full"])
def test_the_repositorys_published_statistics_pass_under_every_preset(repo_root, preset):
    """Every line of the committed file names a dataset and split a table job knows (from its config)."""
    config = load(preset=preset)
    table = spec_table(config, "datasets", "trecqa")
    job = kind_of(table).job_config(config, config, table)
    csv = repo_root / "workflow/papers/dataset_stats_published.csv"
    assert (
        published_stats(csv, [*job["datasets"], *job["dataset_alias"]], job["splits"]).loc[
            ("apnet", "datasets", "trecqa", "dev", "questions")
        ]
        == "65"
    )
