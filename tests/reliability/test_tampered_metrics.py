"""Issue 54 item 4: a metrics.json that its run file does not give is never shown. An archive whose
metrics.json says test MAP +0.1 over its run.trec.gz is refused (nothing placed); a table without
significance tests refuses such a run; a JSON twin edited by hand, or a second stale results block in
README.md, makes ``ansel front-page`` fail."""

import json

import pytest

from ansel import targets as T
from ansel.cli import main
from ansel.config import load
from ansel.table_kinds import spec_table
from ansel.table_kinds.metrics import paper_settings
from tests.reliability.kit_archives import RUN, kit_record, run_members, snapshot, unpack_refused

MINI = """
paper: mini
title: one model, no significance tests
tables:
  - id: t
    rows:
      - {label: QA-CNN, model: qa_cnn}
    columns:
      - {dataset: synthetic_en, split: test, metric: MAP}
"""


def _plus(metrics: bytes, split: str = "test", metric: str = "MAP", by: float = 0.1) -> bytes:
    values = json.loads(metrics)
    values[split][metric] += by
    return json.dumps(values).encode()


def test_an_archive_whose_metrics_its_run_file_does_not_give_is_refused(home, finished_run, kit_archive):
    files = {**finished_run, "metrics.json": _plus(finished_run["metrics.json"])}
    archive = kit_archive(run_members(files), [kit_record(run_config=json.loads(finished_run["config.json"]))])
    unpack_refused(
        archive,
        home,
        rf"rec/{RUN}/run.trec.gz: its test scores give MAP [0-9.]+ where .*rec/{RUN}/"
        r"metrics.json reports [0-9.]+: the two files are not of one evaluation",
    )


@pytest.fixture
def mini(home, finished_run, repo_root):
    """A paper ``mini`` (one table: QA-CNN's test MAP, no baseline nor claims) beside the checkout's specs,
    the finished run as its one run, and the table verb's arguments."""
    (home / "workflow").unlink()
    (home / "workflow/papers").mkdir(parents=True)
    for part in (repo_root / "workflow").iterdir():
        if part.name != "papers":
            (home / "workflow" / part.name).symlink_to(part)
    (home / "workflow/papers/mini.yaml").write_text(MINI)
    config = {**load(preset="smoke"), "seeds": 1}
    config["paper_settings"] = paper_settings(load(preset="full"), spec_table(config, "mini", "t"))
    config["models"]["qa_cnn"].pop("seeds", None)
    run = home / T.Run("synthetic_en", T.Variant("qa_cnn"), 1).dir
    run.mkdir(parents=True)
    for name in ("metrics.json", "config.json", "log.csv", "run.trec"):
        (run / name).write_bytes(finished_run[name])
    (home / "results/timings/synthetic_en/qa_cnn").mkdir(parents=True)  # provenance: the commit that trained it
    (home / "results/timings/synthetic_en/qa_cnn/seed1.json").write_bytes(finished_run["timings.json"])
    (home / "data/raw/synthetic").mkdir(parents=True)
    (home / "data/raw/synthetic/manifest.json").write_text("{}")
    (home / "published.csv").write_text("paper,table,dataset,split,model,metric,value\n")
    return run, [
        "table",
        "--config",
        json.dumps(config),
        "--paper",
        "mini",
        "--table",
        "t",
        "--published",
        "published.csv",
        "--out-prefix",
        "results/tables/mini/t",
    ]


def test_a_table_without_significance_tests_shows_only_what_run_files_give(mini, home, finished_run):
    run, args = mini
    main(args)
    cell = json.loads((home / "results/tables/mini/t.json").read_text())["QA-CNN"]["synthetic_en test MAP"]
    assert cell["mean"] == json.loads(finished_run["metrics.json"])["test"]["MAP"]
    (run / "metrics.json").write_bytes(_plus(finished_run["metrics.json"]))
    rendered = snapshot(home / "results/tables")
    with pytest.raises(  # one line, as every refused input: no traceback
        SystemExit, match=r"^ansel table: results/runs/synthetic_en/qa_cnn/seed1/run.trec: its test scores give MAP"
    ):
        main(args)
    assert snapshot(home / "results/tables") == rendered


TWIN = "reports/rec/t.json"


@pytest.fixture
def front_page(home, finished_run):
    """reports/headlines.yaml naming one cell of the record ``rec`` (its twin, long form and run), and a
    README.md with one results block."""
    test_map = json.loads(finished_run["metrics.json"])["test"]["MAP"]
    run = home / "reports/rec" / RUN
    run.mkdir(parents=True)
    for name in ("metrics.json", "config.json"):
        (run / name).write_bytes(finished_run[name])
    column = "synthetic_en test MAP"
    (home / TWIN).write_text(
        json.dumps(
            {
                "QA-CNN": {
                    column: {
                        "mean": test_map,
                        "std": 0.0,
                        "n": 1,
                        "published": 0.5,
                        "provenance": {"runs": [{"run": f"results/{RUN}", "seed": 1}]},
                    }
                },
                "significance": {
                    "claims": {"QA-CNN > Random": {column: {"verdict": "holds", "difference": 0.1, "p_holm": 0.01}}}
                },
            }
        )
    )
    (home / "reports/rec/t.csv").write_text(
        "row,column,model,dataset,run_dataset,split,metric,mean,std,n\n"
        f"QA-CNN,{column},qa_cnn,synthetic_en,synthetic_en,test,MAP,{test_map},0.0,1\n"
    )
    (home / "reports/headlines.yaml").write_text(  # a published cell of another dataset: ours is its stand-in
        "records: {rec: budget}\nheadlines:\n"
        "  - paper: P\n    published: {spec: apnet, table: wikiqa, row: AP-CNN, dataset: wikiqa, split: test, metric: MAP}\n"
        f"    claim: QA-CNN > Random\n    sources: [{{record: rec, table: t, row: QA-CNN, column: {column}}}]\n"
    )
    (home / "README.md").write_text("# ansel\n\n<!-- results: ansel front-page -->\n<!-- /results -->\n\nmore\n")
    main(["front-page", "--write", "README.md"])
    main(["front-page", "--check", "README.md"])
    assert f"{test_map:.4f} ± 0.0000 (n=1)" in (home / "README.md").read_text()
    return home


def test_a_twin_edited_by_hand_never_reaches_the_front_page(front_page):
    twin = json.loads((front_page / TWIN).read_text())
    twin["QA-CNN"]["synthetic_en test MAP"]["mean"] += 0.1
    (front_page / TWIN).write_text(json.dumps(twin))
    page = (front_page / "README.md").read_bytes()
    for verb in ("--write", "--check"):
        with pytest.raises(
            SystemExit,
            match=rf"{TWIN}: cell \('QA-CNN', 'synthetic_en test MAP'\) says [0-9.]+ .* where "
            r"its 1 runs give",
        ):
            main(["front-page", verb, "README.md"])
    assert (front_page / "README.md").read_bytes() == page


def test_a_second_stale_results_block_fails_the_check(front_page):
    readme = front_page / "README.md"
    readme.write_text(readme.read_text() + "\n<!-- results: ansel front-page -->\n| stale |\n<!-- /results -->\n")
    with pytest.raises(SystemExit, match=r"README.md: 2 results blocks"):
        main(["front-page", "--check", "README.md"])


def test_a_missing_page_is_named(front_page):
    for verb in ("--write", "--check"):
        with pytest.raises(SystemExit, match=r"ansel front-page: READ_ME.md: no such file"):
            main(["front-page", verb, "READ_ME.md"])
    assert not (front_page / "READ_ME.md").exists()
