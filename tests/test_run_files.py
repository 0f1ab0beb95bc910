"""A run's run file in either form: plain where the run was made, gzipped where a record keeps it, which
its tables and figures read in place (``ansel.records.render.link_run``)."""

import gzip
import json
import re

import pandas as pd
import pytest

from ansel.evaluation.agreement import RunFileError, check_run, read_run_file, recomputed
from ansel.evaluation.metrics import read_trec_run
from ansel.records.render import link_run
from ansel.report.tables import split_run
from ansel.run_files import stored

RUN = "dev:q1 Q0 a1 1 0.9 m\ndev:q1 Q0 a2 2 0.4 m\ndev:q2 Q0 a3 1 0.2 m\ndev:q2 Q0 a1 2 0.7 m\n"


def test_a_run_file_reads_the_same_plain_or_gzipped(tmp_path):
    ran, kept = tmp_path / "results/runs/d/m/seed1", tmp_path / "reports/r/runs/d/m/seed1"
    for d in (ran, kept):
        d.mkdir(parents=True)
    (ran / "run.trec").write_text(RUN)
    (kept / "run.trec.gz").write_bytes(gzip.compress(RUN.encode()))
    assert stored(ran / "run.trec") == ran / "run.trec" and stored(kept / "run.trec") == kept / "run.trec.gz"
    plain = read_trec_run(ran / "run.trec")
    assert plain.shape == (4, 4) and list(plain.score) == [0.9, 0.4, 0.2, 0.7]
    for path in (kept / "run.trec", kept / "run.trec.gz"):  # by its run's name, or by its own
        pd.testing.assert_frame_equal(read_trec_run(path), plain)
    pd.testing.assert_frame_equal(split_run(kept / "run.trec", "dev"), split_run(ran / "run.trec", "dev"))
    (kept / "run.trec").write_text(RUN.replace("0.9", "0.8"))  # both forms there: the plain one is read
    assert stored(kept / "run.trec") == kept / "run.trec" and read_trec_run(kept / "run.trec").score[0] == 0.8


def test_a_missing_run_file_is_named_with_the_form_also_looked_for(tmp_path):
    path = tmp_path / "run.trec"
    assert stored(path) == path  # the name the workflow writes it under
    named = rf"^{re.escape(str(path))}: missing, and no run.trec.gz$"
    for read in (read_trec_run, read_run_file):
        with pytest.raises(FileNotFoundError, match=named):
            read(path)
    with pytest.raises(FileNotFoundError, match=rf"^{re.escape(str(path))}.gz: missing$"):
        read_trec_run(tmp_path / "run.trec.gz")
    with pytest.raises(FileNotFoundError, match=rf"^{re.escape(str(path))}: missing; the run must be trained first"):
        split_run(path, "dev")


def test_a_records_run_is_linked_where_the_rules_read_it_and_read_there_as_kept(tmp_path):
    """Rendering from a record's runs/: each file of a record run is linked into the staging checkout
    (``results/runs/...``, its timings under ``results/timings/...``), nothing copied or unpacked, and
    the report's readers check and read the gzipped run file there."""
    processed, record, stage = tmp_path / "data/processed/d", tmp_path / "reports/r", tmp_path / "stage"
    processed.mkdir(parents=True)
    labels = [("q1", "a1", 1), ("q1", "a2", 0), ("q2", "a3", 1), ("q2", "a1", 0)]  # MAP (1 + 1/2) / 2
    pd.DataFrame(labels, columns=["qid", "aid", "label"]).to_parquet(processed / "candidates-dev.parquet")
    kept = record / "runs/d/m/seed1"
    kept.mkdir(parents=True)
    (kept / "run.trec.gz").write_bytes(gzip.compress(RUN.encode()))
    (kept / "config.json").write_text(json.dumps({"dataset": "d", "model": "m", "seed": 1}))
    (kept / "log.csv").write_text("epoch\n1\n")
    (kept / "timings.json").write_text("{}")
    metrics = recomputed(kept / "run.trec.gz", processed, ["dev"], {})
    (kept / "metrics.json").write_text(json.dumps(metrics))

    link_run(kept, stage)
    staged = stage / "results/runs/d/m/seed1"
    links = {p.name: p.readlink() for p in staged.iterdir()}
    assert links == {f.name: f.absolute() for f in kept.iterdir() if f.name != "timings.json"}
    assert (stage / "results/timings/d/m/seed1.json").readlink() == (kept / "timings.json").absolute()
    assert stored(staged / "run.trec") == staged / "run.trec.gz"  # the name the table rule's inputs declare
    assert check_run(staged, processed) == metrics and metrics["dev"]["MAP"] == pytest.approx(0.75)
    pd.testing.assert_frame_equal(split_run(staged / "run.trec", "dev"), split_run(kept / "run.trec", "dev"))


def test_a_run_file_is_scored_against_its_split_s_labels_and_a_pair_it_lacks_is_named(tmp_path):
    labels = [("q1", "a1", 1), ("q1", "a2", 0), ("q2", "a3", 0), ("q2", "a1", 1)]  # each positive scored highest
    pd.DataFrame(labels, columns=["qid", "aid", "label"]).to_parquet(tmp_path / "candidates-dev.parquet")
    (tmp_path / "run.trec").write_text(RUN)
    dev = recomputed(tmp_path / "run.trec", tmp_path, ["dev"], {})["dev"]
    assert (dev["P@1"], dev["MAP"], dev["n_questions"]) == (1.0, 1.0, 2)  # a1 0.7 over a3 0.2: both first
    (tmp_path / "run.trec").write_text(RUN.replace("dev:q2 Q0 a3", "dev:q2 Q0 a9"))
    with pytest.raises(RunFileError, match=r"run.trec: question q2 answer a9 of split 'dev' is not a candidate of"):
        recomputed(tmp_path / "run.trec", tmp_path, ["dev"], {})


def test_a_split_that_lists_a_pair_twice_is_named_not_scored(tmp_path):
    labels = [("q1", "a1", 1), ("q1", "a2", 0), ("q2", "a3", 1), ("q1", "a1", 0)]
    pd.DataFrame(labels, columns=["qid", "aid", "label"]).to_parquet(tmp_path / "candidates-dev.parquet")
    (tmp_path / "run.trec").write_text(RUN)
    with pytest.raises(RunFileError, match=r"candidates-dev.parquet: a \(question, answer\) pair listed twice"):
        recomputed(tmp_path / "run.trec", tmp_path, ["dev"], {})


def test_a_run_file_that_lists_a_pair_twice_is_named_not_scored(tmp_path):
    """trec_eval refuses it; scored, a negative listed twice below the positives left every metric as
    metrics.json reports it, so the agreement check passed a file that is not one evaluation's."""
    labels = [("q1", "a1", 1), ("q1", "a2", 0), ("q2", "a3", 0), ("q2", "a1", 1)]
    pd.DataFrame(labels, columns=["qid", "aid", "label"]).to_parquet(tmp_path / "candidates-dev.parquet")
    (tmp_path / "run.trec").write_text(RUN + "dev:q2 Q0 a3 3 0.2 m\n")
    with pytest.raises(RunFileError, match=r"run.trec: question dev:q2 answer a3 is listed twice"):
        recomputed(tmp_path / "run.trec", tmp_path, ["dev"], {})
