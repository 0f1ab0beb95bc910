"""Every row of workflow/papers/published_results.csv is one a table or figure of its paper looks up
(``ansel.paper_targets.check_published``, at the DAG build, before any table or figure job): a misspelt
label matched no cell, whose published value then silently showed "—"."""

import re

import pytest

from ansel.config import load, load_paper
from ansel.paper_targets import check_published, published_keys
from ansel.published import PublishedFileError
from ansel.specs import table_spec
from ansel.table_kinds import kind_of

ROW = "ggsa,table6,yahooqa,test,NTN-LSTM,P@1,54.50,Tay et al. 2018 (CTRN),yes"  # line 63 of the file
COLUMNS = ["paper", "table", "dataset", "split", "model", "metric"]


@pytest.fixture(scope="module")
def config():
    return load(preset="smoke")


def with_row(repo_root, tmp_path, line: int, row: str):
    """The committed file with its line ``line`` replaced by ``row``."""
    lines = (repo_root / "workflow/papers/published_results.csv").read_text().splitlines()
    assert lines[62] == ROW
    lines[line - 1] = row
    path = tmp_path / "published_results.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("preset", ["smoke", "cpu", "full"])
def test_the_committed_file_is_read_whole_under_each_preset(preset):
    """A preset that builds fewer tables (cpu) still checks against every item of the specs."""
    config = load(preset=preset)
    check_published(config, config["papers"])


@pytest.mark.parametrize(
    "column, typo, near, under",
    [
        ("table", "tabel6", "table6", "ggsa"),
        ("dataset", "yahoo_qa", "yahooqa", "ggsa table6"),
        ("split", "tset", "test", "ggsa table6 yahooqa"),
        ("model", "NTN-LSMT", "NTN-LSTM", "ggsa table6 yahooqa test"),
        ("metric", "MMR", "MRR", "ggsa table6 yahooqa test NTN-LSTM"),
    ],
)
def test_a_misspelt_label_is_refused_naming_the_line_the_row_and_the_nearest_label(
    repo_root, tmp_path, config, column, typo, near, under
):
    fields = ROW.split(",")
    fields[COLUMNS.index(column)] = typo
    path = with_row(repo_root, tmp_path, 63, ",".join(fields))
    with pytest.raises(
        PublishedFileError,
        match=rf"^{re.escape(str(path))}, line 63: {re.escape(','.join(fields))}: no table or figure of the paper "
        rf"specs reads {column} '{re.escape(typo)}' of {re.escape(under)} \(typo of '{re.escape(near)}'\?\); "
        rf"they read: .*{re.escape(near)}",
    ):
        check_published(config, config["papers"], path)


def test_a_row_of_a_paper_without_a_spec_is_refused_and_another_papers_row_left_to_its_check(
    repo_root, tmp_path, config
):
    path = with_row(repo_root, tmp_path, 63, ROW.replace("ggsa,", "gsa,", 1))
    with pytest.raises(PublishedFileError, match=r"line 63: .* reads paper 'gsa' \(typo of 'ggsa'\?\)"):
        check_published(config, config["papers"], path)
    # checked per paper: a misspelt ggsa row is not apnet's to refuse
    path = with_row(repo_root, tmp_path, 63, ROW.replace("NTN-LSTM", "NTN-LSMT"))
    check_published(config, ["apnet"], path)
    with pytest.raises(PublishedFileError, match="line 63: "):
        check_published(config, ["ggsa"], path)


def table_keys(config, paper: str) -> set:
    """The keys the paper's tables alone look up."""
    tables = [table_spec(config, paper, t["id"]) for t in load_paper(paper).get("tables", [])]
    return {k for t in tables for k in kind_of(t).published_keys(t)}


@pytest.mark.parametrize(
    "row, label",
    [
        ("amvlstm,figure3,quoraqp,test,ARC-I,accuracy,0.7,own impl,yes", "ARC-I"),  # accuracy_bars
        (  # a sweep's published reference line
            "ggsa,figure8_baseline,insuranceqa_v1,test2,global self-attention with max-pooling,P@1,70,x,yes",
            "global self-attention with max-pooling",
        ),
    ],
)
def test_a_row_read_only_by_a_figure_passes_and_its_typo_does_not(repo_root, tmp_path, config, row, label):
    key = tuple(row.split(",")[:6])
    assert key not in table_keys(config, key[0]) and key in published_keys(config, key[0])
    check_published(config, config["papers"], with_row(repo_root, tmp_path, 63, row))
    typo = with_row(repo_root, tmp_path, 63, row.replace(f",{label},", f",{label}s,"))
    with pytest.raises(PublishedFileError, match=rf"line 63: .*\(typo of '{re.escape(label)}'\?\)"):
        check_published(config, config["papers"], typo)
