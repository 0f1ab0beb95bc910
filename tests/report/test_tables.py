import json
import math

import numpy as np
import pandas as pd
import pytest

from ansel.evaluation import agreement
from ansel.report.tables import PublishedFileError, aggregate, protocol_notes, published_lookup, read_values, render
from ansel.specs import parse_table
from ansel.table_kinds import kind_of
from ansel.targets import Variant, timings_file

TABLE = {
    "id": "t1",
    "caption": "Demo",
    "rows": [{"label": "M", "model": "m"}, {"label": "Prior", "model": None}],
    "columns": [
        {"dataset": "wiki", "split": "test", "metric": "MAP"},
        {"dataset": "wiki", "split": "test", "metric": "MRR"},
    ],
}
MAP = [0.61, 0.67, 0.70]
MRR = [0.62, 0.69, 0.71]


@pytest.fixture
def runs(tmp_path, monkeypatch):
    """Three seeds of model m on dataset syn (the preset aliases wiki onto it)."""
    monkeypatch.chdir(tmp_path)
    for seed, (m, r) in enumerate(zip(MAP, MRR), start=1):
        d = tmp_path / f"results/runs/syn/m/seed{seed}"
        d.mkdir(parents=True)
        (d / "metrics.json").write_text(json.dumps({"test": {"MAP": m, "MRR": r}, "dev": {"MAP": 0.5}}))
    published = tmp_path / "published.csv"
    pd.DataFrame(
        [
            ["p", "t1", "wiki", "test", "M", "MAP", "68.86"],
            ["p", "t1", "wiki", "test", "Prior", "MAP", "65.2"],
            ["p", "other", "wiki", "test", "M", "MRR", "1"],
        ],
        columns=["paper", "table", "dataset", "split", "model", "metric", "value"],
    ).to_csv(published, index=False)
    return {"seeds": 3, "datasets": {"syn": {"source": "syn"}}, "dataset_alias": {"wiki": "syn"}}, published


def test_cells_are_mean_and_sample_std_over_seeds_beside_published(runs, tmp_path):
    config, published = runs
    cells = aggregate(config, parse_table(config, "p", TABLE), published_lookup(published, "p", "t1")).set_index(
        ["row", "metric"]
    )
    # MAP is published in percent, so ours is put on that scale; MRR has no published value: 0-1
    assert cells.loc[("M", "MAP"), "mean"] == pytest.approx(100 * np.mean(MAP))
    assert cells.loc[("M", "MAP"), "std"] == pytest.approx(100 * np.std(MAP, ddof=1))
    assert cells.loc[("M", "MRR"), "mean"] == pytest.approx(np.mean(MRR))
    assert cells.loc[("M", "MAP"), "n"] == 3 and cells.loc[("M", "MAP"), "run_dataset"] == "syn"
    assert cells.loc[("M", "MAP"), "published"] == 68.86 and not cells.loc[("M", "MAP"), "differs"]
    assert math.isnan(cells.loc[("M", "MRR"), "published"])  # from another table: not looked up
    assert cells.loc[("Prior", "MAP"), "n"] == 0 and cells.loc[("Prior", "MAP"), "published"] == 65.2

    render(cells.reset_index(), parse_table(config, "p", TABLE), ["a note"], tmp_path / "out" / "t1")
    csv = pd.read_csv(tmp_path / "out/t1.csv").set_index(["row", "metric"])
    assert csv.loc[("M", "MRR"), "mean"] == pytest.approx(np.mean(MRR))
    nested = json.loads((tmp_path / "out/t1.json").read_text())
    assert nested["M"]["wiki test MAP"] == pytest.approx(
        {"mean": 100 * np.mean(MAP), "std": 100 * np.std(MAP, ddof=1), "n": 3, "published": 68.86}
    )
    assert nested["M"]["wiki test MRR"]["published"] is None
    assert nested["Prior"]["wiki test MAP"] == {"mean": None, "std": None, "n": 0, "published": 65.2}
    md = (tmp_path / "out/t1.md").read_text()
    assert f"{100 * np.mean(MAP):.2f} ± {100 * np.std(MAP, ddof=1):.2f} (n=3)" in md
    assert "| Prior | — " in md  # reported-from row: published only
    assert "a note" in md and (tmp_path / "out/t1.tex").read_text().startswith("\\begin{table}")


def test_a_row_without_a_published_value_shares_its_columns_percent_scale(runs, tmp_path):
    """A context row (BM25) beside rows published in percent is printed in percent too."""
    config, published = runs
    d = tmp_path / "results/runs/syn/bm25/seed1"
    d.mkdir(parents=True)
    (d / "metrics.json").write_text(json.dumps({"test": {"MAP": 0.15, "MRR": 0.2}, "dev": {"MAP": 0.1}}))
    table = {**TABLE, "rows": [*TABLE["rows"], {"label": "BM25", "model": "bm25"}]}
    config = {**config, "models": {"bm25": {"arch": "bm25", "seeds": 1}}}
    cells = aggregate(config, parse_table(config, "p", table), published_lookup(published, "p", "t1")).set_index(
        ["row", "metric"]
    )
    assert math.isnan(cells.loc[("BM25", "MAP"), "published"])
    assert cells.loc[("BM25", "MAP"), "mean"] == pytest.approx(15.0) and cells.loc[("BM25", "MAP"), "digits"] == 2
    assert cells.loc[("BM25", "MRR"), "mean"] == pytest.approx(0.2)  # MRR's column is published nowhere: 0-1


def test_a_value_beyond_the_spread_is_flagged_only_within_one_cell(runs, tmp_path):
    """† where the runs read the published data (syn prepares wiki's release as released); a stand-in
    (syn its own source) or another split is never flagged, and its published value is headed by its
    own cell, not ours (ansel.report.printable)."""
    config, published = runs
    lookup = published_lookup(published, "p", "t1")
    lookup[("wiki", "test", "M", "MAP")] = 80.0
    same = {**config, "datasets": {"syn": {"source": "wiki"}}}
    cells = aggregate(same, parse_table(same, "p", TABLE), lookup).set_index(["row", "metric"])
    assert cells.loc[("M", "MAP"), "differs"] and cells.loc[("M", "MAP"), "published_cell"] == ""
    cells = aggregate(config, parse_table(config, "p", TABLE), lookup).set_index(["row", "metric"])
    assert not cells.loc[("M", "MAP"), "differs"] and cells.loc[("M", "MAP"), "published_cell"] == "wiki test MAP"
    v1 = {**TABLE, "columns": [{"dataset": "wiki", "split": "test", "metric": "MAP", "published_split": "test1"}]}
    lookup[("wiki", "test1", "M", "MAP")] = 80.0
    cells = aggregate(same, parse_table(same, "p", v1), lookup)
    assert not cells.differs.any() and set(cells.published_cell) == {"wiki test1 MAP", ""}
    render(cells, parse_table(same, "p", v1), [], tmp_path / "out" / "v1")
    md = (tmp_path / "out/v1.md").read_text()
    assert "wiki test1 MAP published (another cell: no †)" in md and "wiki test MAP published" not in md


def test_missing_metrics_file_names_the_run(runs, tmp_path):
    config, published = runs
    (tmp_path / "results/runs/syn/m/seed2/metrics.json").unlink()
    with pytest.raises(FileNotFoundError, match="results/runs/syn/m/seed2/metrics.json: missing"):
        aggregate(config, parse_table(config, "p", TABLE), {})


def test_missing_metric_in_a_run_is_named(runs):
    config, _ = runs
    table = {**TABLE, "columns": [{"dataset": "wiki", "split": "test1", "metric": "P@1"}]}
    with pytest.raises(KeyError, match="seed1/metrics.json: no test1/P@1; it has test/MAP"):
        aggregate(config, parse_table(config, "p", table), {})


def test_table_verb_renders_a_real_spec_from_fake_runs(tmp_path, monkeypatch, repo_root):
    from ansel.cli import main
    from ansel.config import load, run_config
    from ansel.table_kinds import spec_table
    from ansel.table_kinds.metrics import paper_settings

    papers = load(preset="full")
    monkeypatch.setenv("ANSEL_ROOT", str(repo_root))  # specs from the checkout, outputs here
    monkeypatch.chdir(tmp_path)
    config = {
        "preset": "smoke",
        "seeds": 2,
        "datasets": {"synthetic_en": {"source": "synthetic"}, "synthetic_zh": {"source": "synthetic"}},
        "dataset_alias": {},
    }
    table = spec_table(config, "smoke", "synthetic")
    config["paper_settings"] = paper_settings(papers, table)
    (tmp_path / "data/raw/synthetic").mkdir(parents=True)
    (tmp_path / "data/raw/synthetic/manifest.json").write_text(json.dumps({"corpus.json": {"sha256": "ab" * 32}}))
    for i, run in enumerate(kind_of(table).runs(config, table)):  # every metric of every split: 0.1 * (i % 7)
        path = tmp_path / run.dir / "metrics.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"test": {m: 0.1 * (i % 7) for m in ["P@1", "MAP", "MRR", "nDCG@3", "nDCG@5"]}}))
        used = run_config(papers, "wikiqa", run.variant.model, run.seed)  # the paper's settings on another dataset
        path.with_name("config.json").write_text(json.dumps({**used, "dataset": run.dataset}))
        timings = tmp_path / timings_file(run)
        timings.parent.mkdir(parents=True, exist_ok=True)
        timings.write_text(json.dumps({"train": {"commit": "c0ffee" * 6 + "abcd"}}))
    monkeypatch.setattr(agreement, "check_runs", lambda runs: None)  # fakes: metrics.json alone (their check:
    # tests/reliability/test_tampered_metrics.py)
    main(
        [
            "table",
            "--config",
            json.dumps(config),
            "--paper",
            "smoke",
            "--table",
            "synthetic",
            "--published",
            _empty_published(tmp_path),
            "--out-prefix",
            "results/tables/smoke/synthetic",
        ]
    )
    nested = json.loads((tmp_path / "results/tables/smoke/synthetic.json").read_text())
    assert set(nested) == {row.label for row in table.rows}
    notes = (tmp_path / "results/tables/smoke/synthetic.md").read_text()
    assert "every row: max_len_a 40 → 120, max_len_q 20 → 40" in notes  # the runs used wikiqa's lengths
    cell = nested["QA-CNN"]["synthetic_en test MAP"]  # qa_cnn's two seeds are inputs 0 and 1
    provenance = cell.pop("provenance")
    assert cell == pytest.approx({"mean": 0.05, "std": np.std([0.0, 0.1], ddof=1), "n": 2, "published": None})
    assert [(r["run"], r["seed"], r["commit"]) for r in provenance["runs"]] == [
        (f"results/runs/synthetic_en/qa_cnn/seed{s}", s, "c0ffee" * 6 + "abcd") for s in (1, 2)
    ]
    assert provenance["raw_sha256"] == [{"dataset": "synthetic_en", "file": "corpus.json", "sha256": "ab" * 32}]
    # lists only: `dvc metrics show` tabulates a twin's numbers and strings, not its lists
    assert all(isinstance(v, list) for v in provenance.values())
    # the commit and checksums once in the notes; the seed count once too, not in every cell
    assert f"runs trained at commit {'c0ffee' * 6 + 'abcd'}; raw data sha256" in notes and "(n=2)" not in notes
    assert "preset smoke; 2 seeds per cell" in notes


def _empty_published(tmp_path):
    path = tmp_path / "published.csv"
    path.write_text("paper,table,dataset,split,model,metric,value\n")
    return str(path)


def test_a_grid_row_shows_the_lr_best_on_dev_never_on_test(tmp_path, monkeypatch):
    """Three lr points x 2 seeds: 5e-05 has the best mean dev MAP, 1e-05 the best test MAP."""
    from ansel.report.tables import grid_choice, grid_notes

    monkeypatch.chdir(tmp_path)
    dev_test = {
        "m": ([0.50, 0.60], [0.7, 0.7]),
        "m@lr=5e-05": ([0.58, 0.56], [0.6, 0.6]),
        "m@lr=1e-05": ([0.40, 0.45], [0.9, 0.9]),
    }
    for model, (dev, test) in dev_test.items():
        for seed, (d, t) in enumerate(zip(dev, test), start=1):
            run = tmp_path / f"results/runs/syn/{model}/seed{seed}"
            run.mkdir(parents=True)
            (run / "metrics.json").write_text(json.dumps({"dev": {"MAP": d}, "test": {"MAP": t, "MRR": t}}))
    train = {"lr": 1e-4, "lr_grid": [1e-4, 5e-5, 1e-5], "select_metric": "MAP"}
    config = {
        "seeds": 2,
        "datasets": {"syn": {"source": "syn"}},
        "dataset_alias": {"wiki": "syn"},
        "scale": {},
        "models": {"m": {"arch": "qa_lstm", "train": train}},
    }
    lr, variant, dev = grid_choice(config, "m", "syn")
    assert (lr, variant.name, dev) == (5e-5, "m@lr=5e-05", pytest.approx(0.57))
    cells = aggregate(config, parse_table(config, "p", TABLE), {}).set_index(["row", "metric"])
    assert cells.loc[("M", "MAP"), "mean"] == pytest.approx(0.6)
    assert grid_notes(config, parse_table(config, "p", TABLE)) == [
        "lr chosen per row on syn dev MAP (mean over seeds) from the grid {0.0001, 5e-05, 1e-05}: M 5e-05"
    ]
    two = parse_table(config, "p", {**TABLE, "rows": [{"label": "M", "model": "m"}, {"label": "N", "model": "m"}]})
    assert grid_notes(config, two)[0].endswith("{0.0001, 5e-05, 1e-05}: every row 5e-05")
    one = {**config, "models": {"m": {"arch": "qa_lstm", "train": {**train, "lr_grid": [1e-4]}}}}
    assert grid_notes(one, two) == ["lr 0.0001 for every row (a one-point grid: nothing chosen on dev)"]
    # a model without a grid is its own single point, and gets no note
    plain = {**config, "models": {"m": {"arch": "qa_lstm", "train": {"lr": 1e-4, "select_metric": "MAP"}}}}
    assert (
        grid_choice(plain, "m", "syn")[:2] == (1e-4, Variant("m"))
        and grid_notes(plain, parse_table(plain, "p", TABLE)) == []
    )


# a metrics.json is read only beside its run file and labels (ansel.evaluation.agreement)
CHECKED = ["results/runs/syn/m/seed1/run.trec", "data/processed/syn", "results/runs/syn/m/seed2/run.trec"]


def test_seconds_per_batch_comes_from_the_timings_file_and_is_never_scaled_as_a_percentage(tmp_path, monkeypatch):
    """Wall time lives outside the run directory (results/timings), whose files are the same bytes
    for the same seed; a table asking for it declares the timings files as inputs."""
    monkeypatch.chdir(tmp_path)
    for seed in (1, 2):
        (tmp_path / f"results/runs/syn/m/seed{seed}").mkdir(parents=True)
        (tmp_path / f"results/runs/syn/m/seed{seed}/metrics.json").write_text(json.dumps({"test": {"MAP": 0.5}}))
        timings = tmp_path / f"results/timings/syn/m/seed{seed}.json"
        timings.parent.mkdir(parents=True, exist_ok=True)
        epochs = [{"epoch": 1, "seconds": 2.0, "batches": 10, "seconds_per_batch": 0.2 * seed}]
        timings.write_text(json.dumps({"train": {"seconds_per_batch": 0.1 * seed, "epochs": epochs}}))
    table = {
        **TABLE,
        "columns": [
            {"dataset": "wiki", "split": "test", "metric": "MAP"},
            {"dataset": "wiki", "split": "train", "metric": "seconds_per_batch"},
        ],
    }
    config = {"seeds": 2, "datasets": {"syn": {"source": "syn"}}, "dataset_alias": {"wiki": "syn"}}
    published = {("wiki", "train", "M", "seconds_per_batch"): 1.28}
    cells = aggregate(config, parse_table(config, "p", table), published).set_index(["row", "metric"])
    assert cells.loc[("M", "seconds_per_batch"), "mean"] == pytest.approx(0.15)
    assert cells.loc[("M", "seconds_per_batch"), "published"] == 1.28
    # one precision per column: ours (0.15 s) is not cut to 2 decimals by the paper's 1.28 s beside it
    assert cells.loc[("M", "seconds_per_batch"), "digits"] == 4
    spec = parse_table(config, "p", table)
    assert (
        kind_of(spec).inputs(config, spec)
        == [
            f"results/{kind}"
            for seed in (1, 2)
            for kind in (
                f"runs/syn/m/seed{seed}/config.json",
                f"runs/syn/m/seed{seed}/metrics.json",
                f"timings/syn/m/seed{seed}.json",
            )
        ]
        + ["data/raw/syn/manifest.json"]
        + CHECKED
    )
    # the timings files name the commit that trained each run (provenance), and the manifest the raw files
    assert (
        kind_of(parse_table(config, "p", TABLE)).inputs(config, parse_table(config, "p", TABLE))
        == [f"results/runs/syn/m/seed{seed}/{name}" for seed in (1, 2) for name in ("config.json", "metrics.json")]
        + [f"results/timings/syn/m/seed{seed}.json" for seed in (1, 2)]
        + ["data/raw/syn/manifest.json"]
        + CHECKED
    )
    (tmp_path / "results/timings/syn/m/seed2.json").unlink()
    with pytest.raises(FileNotFoundError, match="results/timings/syn/m/seed2.json: missing"):
        aggregate(config, parse_table(config, "p", table), published)


def test_a_benchmark_column_reads_the_tables_step_times_not_the_runs_timings(tmp_path, monkeypatch):
    """GGSA Table 3's seconds per batch: one file of the table's rows timed alone (``ansel step-times``),
    mean ± std over its rounds; the runs' own timings files are not read for it."""
    monkeypatch.chdir(tmp_path)
    for seed in (1, 2):
        (tmp_path / f"results/runs/syn/m/seed{seed}").mkdir(parents=True)
        (tmp_path / f"results/runs/syn/m/seed{seed}/metrics.json").write_text(json.dumps({"test": {"MAP": 0.5}}))
    table = {
        **TABLE,
        "columns": [
            {"dataset": "wiki", "split": "test", "metric": "MAP"},
            {"dataset": "wiki", "split": "train", "metric": "seconds_per_batch", "protocol": "benchmark"},
        ],
    }
    config = {"seeds": 2, "datasets": {"syn": {"source": "syn"}}, "dataset_alias": {"wiki": "syn"}}
    with pytest.raises(FileNotFoundError, match="results/benchmarks/p/t1.json: missing"):
        aggregate(config, parse_table(config, "p", table), {})
    bench = {
        "device": "cpu/AVX2",
        "threads": 2,
        "batches": 3,
        "rounds": 3,
        "models": {"m": {"batch_size": 128, "max_len_q": 200, "max_len_a": 200, "seconds_per_batch": [1.0, 1.2, 1.1]}},
    }
    (tmp_path / "results/benchmarks/p").mkdir(parents=True)
    (tmp_path / "results/benchmarks/p/t1.json").write_text(json.dumps(bench))
    cells = aggregate(config, parse_table(config, "p", table), {("wiki", "train", "M", "seconds_per_batch"): 1.28})
    cell = cells.set_index(["row", "metric"]).loc[("M", "seconds_per_batch")]
    assert cell["mean"] == pytest.approx(1.1) and cell["std"] == pytest.approx(0.1) and cell["n"] == 3
    assert cell["column"] == "wiki train seconds_per_batch (benchmark)"
    note = protocol_notes(parse_table(config, "p", table), bench)[0]
    assert "cpu/AVX2" in note and "128 x 200/200" in note and "3 rounds of 3 steps" in note


def test_a_cell_where_none_of_a_rows_models_applies_reads_na(runs, tmp_path):
    config, _ = runs
    table = {
        "id": "t2",
        "rows": [{"label": "M", "model": "m", "models": {"pairs": None}}, {"label": "Prior"}],
        "columns": [
            {"dataset": "wiki", "split": "test", "metric": "MAP"},
            {"dataset": "pairs", "split": "test", "metric": "accuracy"},
        ],
    }
    config = {**config, "datasets": {"syn": {"source": "syn"}, "pairs": {"source": "pairs"}}}
    cells = aggregate(config, parse_table(config, "p", table), {}).set_index(["row", "dataset"])
    assert cells.loc[("M", "wiki"), "n"] == 3 and not cells.loc[("M", "wiki"), "na"]
    assert cells.loc[("M", "pairs"), "n"] == 0 and cells.loc[("M", "pairs"), "na"]
    assert cells.loc[("M", "pairs"), "model"] == "" and not cells.loc[("Prior", "pairs"), "na"]
    render(cells.reset_index(), parse_table(config, "p", table), [], tmp_path / "out" / "t2")
    md = (tmp_path / "out/t2.md").read_text()
    # nothing published: no published columns, the headers are the columns' (wiki's naming the preset's stand-in)
    assert "| syn (stand-in for wiki) test MAP   | pairs test accuracy   |" in md
    assert "| M     | 0.6600 ± 0.0458 (n=3)              | n/a " in md
    assert "published" not in md and "MAP ours" not in md
    assert "| Prior | —  " in md and md.count("n/a") == 1


@pytest.mark.parametrize(
    "text, message",
    [
        (None, r"published.csv: no such file$"),
        ("paper,table,value\np,t,0.5\n", r"published.csv: missing column\(s\) metric; it has paper, table, value$"),
        ("paper,table,metric,value\np,t,MAP,0.5\np,t,MR", r"published.csv, line 3: 3 fields where its header has 4 "),
        ("paper,table,metric,value\np,t,MAP,0.5,\n", r"published.csv, line 2: 5 fields where its header has 4 "),
        (b"paper,table,metric,value\np,t,\xff,0.5\n", r"published.csv: not a CSV file \('utf-8' codec"),
    ],
    ids=["missing", "no-column", "cut-short", "stray-comma", "not-utf8"],
)
def test_a_published_values_file_that_cannot_be_read_whole_is_refused_naming_its_line(tmp_path, text, message):
    """A line cut short was read as empty fields (pandas fills them), so the values past it went
    unseen; each fault is one PublishedFileError (an InputError: one line from `ansel table`)."""
    csv = tmp_path / "published.csv"
    if isinstance(text, bytes):
        csv.write_bytes(text)
    elif text is not None:
        csv.write_text(text)
    with pytest.raises(PublishedFileError, match=message):
        read_values(csv, ["paper", "table", "metric", "value"])


def test_published_values_read_as_pandas_reads_them(tmp_path):
    csv = tmp_path / "published.csv"
    csv.write_text('\ufeffpaper,table,note,value\np,t,"a, quoted\nnote",0.5\n\np,u,,\n', encoding="utf-8")
    pd.testing.assert_frame_equal(read_values(csv, ["value"]), pd.read_csv(csv, dtype=str, keep_default_na=False))


def test_a_published_key_held_twice_is_refused_naming_the_file_lines_and_key(tmp_path):
    """Two rows with one (paper, table, dataset, split, model, metric): a lookup would keep one of
    them, so an edit to the other would be silently shadowed (issue 32, item 15)."""
    csv = tmp_path / "published.csv"
    csv.write_text(
        "paper,table,dataset,split,model,metric,value\n"
        "p,t,d,test,M,MAP,0.5\n"
        "p,t,d,test,M,MRR,0.6\n"
        "p,t,d,test,M,MAP,0.5\n"
    )
    with pytest.raises(
        ValueError,
        match=rf"{csv}: duplicate key .* lines 2, 4: paper='p', table='t', dataset='d', "
        r"split='test', model='M', metric='MAP'",
    ):
        published_lookup(csv, "p", "t")
    # whichever table is asked for: the file is wrong as a whole
    with pytest.raises(ValueError, match="lines 2, 4"):
        published_lookup(csv, "p", "other")
    # a metric spelled two ways that both key as ours (ndcg@3, nDCG@3) is the same key
    csv.write_text("paper,table,dataset,split,model,metric,value\np,t,d,test,M,ndcg@3,0.5\np,t,d,test,M,nDCG@3,0.6\n")
    with pytest.raises(ValueError, match=r"lines 2, 3: .*metric='nDCG@3'"):
        published_lookup(csv, "p", "t")
    # the same model and metric in another table, split or dataset is another key
    csv.write_text(
        "paper,table,dataset,split,model,metric,value\np,t,d,test,M,MAP,0.5\np,u,d,test,M,MAP,0.6\n"
        "p,t,d,dev,M,MAP,0.7\np,t,e,test,M,MAP,0.8\n"
    )
    assert published_lookup(csv, "p", "t") == {
        ("d", "test", "M", "MAP"): 0.5,
        ("d", "dev", "M", "MAP"): 0.7,
        ("e", "test", "M", "MAP"): 0.8,
    }


def test_the_repositorys_published_results_hold_each_key_once(repo_root):
    """workflow/papers/published_results.csv once held MTAS Tables 4-6 twice (45 rows)."""
    csv = repo_root / "workflow/papers/published_results.csv"
    table4 = published_lookup(csv, "mtas", "table4")
    assert len(table4) == 21 and table4[("lawqa", "test", "MTAS", "Top1")] == 0.588
    df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    assert not df.duplicated(["paper", "table", "dataset", "split", "model", "metric"]).any()


def test_ours_header_names_the_stand_in_a_preset_replaced_the_dataset_with(runs, tmp_path):
    """Under ``dataset_alias: {wiki: syn}`` the ours values are syn's: their header says so; the
    published header keeps the paper's dataset; the cell keys (.csv, .json) keep the spec's column
    (issue 32, item 17)."""
    config, published = runs
    cells = aggregate(config, parse_table(config, "p", TABLE), published_lookup(published, "p", "t1"))
    render(cells, parse_table(config, "p", TABLE), [], tmp_path / "out/alias")
    header = (tmp_path / "out/alias.md").read_text().splitlines()[2]
    assert "| syn (stand-in for wiki) test MAP ours " in header and "| wiki test MAP published " in header
    assert "| syn (stand-in for wiki) test MRR ours " in header and "| wiki test MAP ours" not in header
    assert "syn (stand-in for wiki) test MAP ours" in (tmp_path / "out/alias.html").read_text()
    assert "syn (stand-in for wiki) test MAP ours" in (tmp_path / "out/alias.tex").read_text()
    assert set(json.loads((tmp_path / "out/alias.json").read_text())["M"]) == {"wiki test MAP", "wiki test MRR"}
    assert set(pd.read_csv(tmp_path / "out/alias.csv").column) == {"wiki test MAP", "wiki test MRR"}

    # no alias: the runs are wiki's own, and the header is the column's
    import shutil

    shutil.copytree(tmp_path / "results/runs/syn", tmp_path / "results/runs/wiki")
    plain = {**config, "datasets": {"wiki": {"source": "wiki"}}, "dataset_alias": {}}
    table = parse_table(plain, "p", TABLE)
    render(aggregate(plain, table, published_lookup(published, "p", "t1")), table, [], tmp_path / "out/plain")
    md = (tmp_path / "out/plain.md").read_text()
    assert "| wiki test MAP ours " in md.splitlines()[2] and "stand-in" not in md
