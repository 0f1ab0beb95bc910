"""The front page and docs/: the README's results table is the records' (``ansel front-page``), it
stays a front page, every docs/ page is linked from it, and every command the pages show in a
``bash`` block still works here: a Snakemake command as a dry run, the others as written. A
command a test cannot run says why in its comment ("not run by the docs test: ..."); one that
reads `make smoke`'s outputs ("after make smoke") runs in this checkout once it has them, else in a
copy of the session's small smoke DAG (tests/small_dag.py)."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = "not run by the docs test"
AFTER_SMOKE = "after make smoke"


def commands() -> list[tuple[str, str, str]]:
    """(page, command, its comment) of every line of every bash block, each command once."""
    found = {}
    for page in PAGES:
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(), re.S):
            for line in block.splitlines():
                command, _, comment = line.partition(" # ")
                if command.strip() and not command.lstrip().startswith("#"):
                    found.setdefault(command.strip(), (page.relative_to(ROOT).as_posix(), comment.strip()))
    return [(page, command, comment) for command, (page, comment) in found.items()]


def test_the_readme_is_a_front_page_linking_every_docs_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 120
    unlinked = [p.name for p in PAGES[1:] if f"(docs/{p.name}" not in readme]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"
    assert all(p.read_text().splitlines()[2].startswith("What this page is for:") for p in PAGES[1:])


def test_the_readmes_results_table_is_the_records():
    done = subprocess.run(
        [sys.executable, "-m", "ansel.cli", "front-page", "--check", "README.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("page,command,comment", commands(), ids=lambda v: v[:60] if isinstance(v, str) else v)
def test_a_documented_command_works(page, command, comment, request, tmp_path):
    if SKIP in comment:
        pytest.skip(comment)
    where = ROOT
    if AFTER_SMOKE in comment and not (ROOT / "data/processed/synthetic_en").exists():
        where = tmp_path / "repo"
        shutil.copytree(request.getfixturevalue("small_dag"), where, symlinks=True)
    words = shlex.split(command)
    if words[0] == "snakemake" and not {"-n", "--dry-run"} & set(words):
        command = command.replace("snakemake", "snakemake -n", 1)
    bin_dir = Path(sys.executable).parent
    done = subprocess.run(
        command,
        shell=True,
        cwd=where,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
    )
    assert done.returncode == 0, f"{page}: `{command}` failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


def _record(tmp_path, record: str, dataset: str = "d", embeddings: str = "word2vec") -> None:
    """A record with table t: cell (A, "d test MAP") of five runs on ``dataset`` (mean 0.5, std 0.01,
    as their metrics.json give it), and the claim A > B."""
    import numpy as np

    folder = tmp_path / "reports" / record
    values = 0.5 + 0.01 * np.sqrt(2) * np.array([-1.0, 1.0, 0.0, 0.0, 0.0])
    runs = []
    for seed, value in enumerate(values, 1):
        run = folder / "runs" / dataset / "a" / f"seed{seed}"
        run.mkdir(parents=True)
        (run / "config.json").write_text(f'{{"dataset": "{dataset}", "embeddings": "{embeddings}"}}')
        (run / "metrics.json").write_text(json.dumps({"test": {"MAP": float(value)}}))
        runs.append({"run": f"results/runs/{dataset}/a/seed{seed}"})
    cell = {
        "mean": float(values.mean()),
        "std": float(values.std(ddof=1)),
        "n": 5,
        "published": 0.6,
        "provenance": {"runs": runs},
    }
    (folder / "t.json").write_text(
        json.dumps(
            {
                "A": {"d test MAP": cell},
                "significance": {
                    "claims": {"A > B": {"d test MAP": {"verdict": "holds", "difference": 0.1, "p_holm": 0.01}}}
                },
            }
        )
    )
    (folder / "t.csv").write_text(
        "row,column,model,dataset,run_dataset,split,metric,mean,std,n\n"
        f"A,d test MAP,a,d,{dataset},test,MAP,{cell['mean']},{cell['std']},5\n"
    )


def _checkout(tmp_path, records: dict[str, str], sources: str, protocol: str = "") -> None:
    (tmp_path / "workflow/papers").mkdir(parents=True)
    (tmp_path / "workflow/papers/published_results.csv").write_text(
        "paper,table,dataset,split,model,metric,value\np,t,d,test,A,MAP,0.6\n"
    )
    (tmp_path / "params.yaml").write_text("datasets: {d: {source: d}, e: {source: e}}\nembeddings: {}\n")
    (tmp_path / "reports/headlines.yaml").write_text(
        "records: {" + ", ".join(f"{r}: {s}" for r, s in records.items()) + "}\n"
        "headlines:\n- {paper: P, published: {spec: p, table: t, row: A, dataset: d, split: test, metric: MAP}, "
        f"claim: A > B{protocol}, sources: [{sources}]}}\n"
    )


def test_a_row_takes_the_highest_scale_record_on_the_papers_data(tmp_path):
    from ansel.records.front_page import results_table

    for record in ("cpu-x", "device/x"):
        _record(tmp_path, record)
    _record(tmp_path, "device/y", dataset="e")
    sources = ", ".join(
        f"{{record: {r}, table: t, row: A, column: d test MAP}}" for r in ("device/y", "cpu-x", "device/x")
    )
    _checkout(tmp_path, {"cpu-x": "budget", "device/x": "paper", "device/y": "paper"}, sources)
    assert (
        "| P | A, d test MAP | 0.6000 | 0.5000 ± 0.0100 (n=5) | -0.1000 | word2vec trained here on the dataset "
        "| A > B: **holds** (Δ +0.1000, p = 0.01) | [GPU, paper scale `device/x`](reports/device/x/t.md) |"
        in results_table(tmp_path)
    )


def test_a_row_says_the_device_its_record_ran_on(tmp_path):
    """A kit record (device/...) ran where its device.json says: the GPU kit runs on a CPU too."""
    from ansel.records.front_page import results_table

    _record(tmp_path, "device/x")
    _checkout(tmp_path, {"device/x": "paper"}, "{record: device/x, table: t, row: A, column: d test MAP}")
    assert "[GPU, paper scale `device/x`]" in results_table(tmp_path)  # no device.json: by its folder
    for device, printed in (("cpu", "CPU"), ("cuda", "GPU")):
        (tmp_path / "reports/device/x/device.json").write_text(json.dumps({"device": device}))
        assert f"[{printed}, paper scale `device/x`]" in results_table(tmp_path)


def test_a_budget_record_prints_no_verdict_and_a_stand_in_no_gap(tmp_path):
    from ansel.records.front_page import results_table

    _record(tmp_path, "cpu-x", dataset="e")
    _checkout(tmp_path, {"cpu-x": "budget"}, "{record: cpu-x, table: t, row: A, column: d test MAP}")
    row = results_table(tmp_path).splitlines()[2]
    assert "0.5000 ± 0.0100 (n=5) on e test MAP (stand-in for d test MAP) | — |" in row
    assert "A > B: not tested at the paper's settings |" in row and "**" not in row


def test_a_context_row_prints_the_tables_paired_test_against_ours_never_as_a_verdict(tmp_path):
    """Where the record's table compares the headline row with its context row (its baseline's family),
    the row says which is above and the Holm-adjusted p, in plain words; where it does not, the value alone."""
    from ansel.records.front_page import results_table

    _record(tmp_path, "device/x")
    twin = tmp_path / "reports/device/x/t.json"
    cells = json.loads(twin.read_text())
    cells["C"] = {"d test MAP": {"mean": 0.52, "std": 0.0, "n": 1}}
    _checkout(tmp_path, {"device/x": "paper"}, "{record: device/x, table: t, row: A, column: d test MAP, context: C}")
    for other, sign in (("A vs C", 1), ("C vs A", -1)):
        cells["significance"] |= {
            "test": "t",
            "alpha": 0.05,
            "comparisons": {
                other: {
                    "d test MAP": {
                        "pooled": {"n_questions": 40, "difference": sign * -0.02, "t": {"p": 0.01, "p_holm": 0.03}}
                    }
                }
            },
        }
        twin.write_text(json.dumps(cells))
        row = results_table(tmp_path).splitlines()[2]
        assert (
            "0.5000 ± 0.0100 (n=5); C: 0.5200, above A: A − C -0.0200 over 40 questions, paired t-test "
            "p = 0.03 (Holm): significant |"
        ) in row
        assert row.count("**") == 2  # the claim's verdict alone
    cells["significance"]["comparisons"] = {}
    twin.write_text(json.dumps(cells))
    assert "(n=5); C: 0.5200 |" in results_table(tmp_path)


def test_a_headline_not_at_the_papers_protocol_or_naming_no_cell_is_refused(tmp_path):
    from ansel.config import ConfigError
    from ansel.records.front_page import results_table

    _record(tmp_path, "device/x")
    source = "{record: device/x, table: t, row: A, column: d test MAP}"
    _checkout(tmp_path, {"device/x": "paper"}, source, protocol=", protocol: last")
    with pytest.raises(
        ConfigError,
        match=r"headlines\[0\]: its source `device/x` column 'd test MAP' is not at the "
        r"paper's protocol \(last\)",
    ):
        results_table(tmp_path)
    headlines = tmp_path / "reports/headlines.yaml"
    good = headlines.read_text().replace(", protocol: last", "")
    for bad, message in [
        (good.replace("row: A, column", "row: Z, column"), r"sources\[0\]: .*t.json has no cell \('Z'"),
        (good.replace("table: t, row: A, column", "table: u, row: A, column"), r"u.json: no such record"),
        (good.replace("device/x: paper", "device/x: cut"), r"records.device/x: 'cut' is not one of"),
        (good.replace("{device/x: paper}", "{}"), r"record 'device/x' declares no scale"),
    ]:
        headlines.write_text(bad)
        with pytest.raises(ConfigError, match=message):
            results_table(tmp_path)


def test_the_front_page_before_issue_52_breaks_the_rule_in_every_row():
    """Rows 2-5 of the README as it was (issue 52's items 2, 1, 4, 3): verdicts from budget records, a
    gap across datasets, a dev-selected headline where the paper reports the last iteration; and no row
    named its vectors."""
    from ansel.records.front_page import check_readme

    before = (ROOT / "tests/fixtures/records/readme_before_issue52.md").read_text()
    found = check_readme(before, "README.md")

    def row(n):
        return [f.split("): ", 1)[1] for f in found if f.startswith(f"README.md: results row {n} ")]

    assert all("no word vectors named" in row(n) for n in range(1, 6))
    assert any(r.startswith("a verdict from `cpu-apnet` (budget scale") for r in row(2))
    assert any(r.startswith("a verdict from `cpu-ggsa` (budget scale") for r in row(3))
    assert "a headline at the checkpoint selected on dev where the paper reports the last iteration" in row(4)
    assert any(r.startswith("a gap between cmeddialog test P@1 (stand-in for lawqa test P@1)") for r in row(5))
    assert any(r.startswith("a verdict from `cpu-mtas` (budget scale") for r in row(5))
    assert check_readme((ROOT / "README.md").read_text(), "README.md") == []


def test_every_committed_record_of_runs_declares_its_scale():
    """A record holding runs or a rendered table says whether it ran at the papers' settings or at a
    cut budget (reports/headlines.yaml `records`), so the rule can tell its verdicts apart."""
    declared = yaml.safe_load((ROOT / "reports/headlines.yaml").read_text())["records"]
    kit_files = {"record.json", "device.json", "leases.json"}
    holding = sorted(
        d.relative_to(ROOT / "reports").as_posix()
        for d in [*(ROOT / "reports").glob("*/"), *(ROOT / "reports/device").glob("*/")]
        if d.is_dir()
        and d.name != "device"
        and ((d / "runs").is_dir() or any(f.name not in kit_files for f in d.glob("*.json")))
    )
    assert holding and [r for r in holding if r not in declared] == []
