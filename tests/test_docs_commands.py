"""The front page and docs/: the README's results table is the records' (``ansel records``), it
stays a front page, every docs/ page is linked from it, and every command the pages show in a
``bash`` block still works here: a Snakemake command as a dry run, the others as written. A
command a test cannot run says why in its comment ("not run by the docs test: ..."); one that
reads `make smoke`'s outputs ("after make smoke") runs where they exist."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

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
    done = subprocess.run([sys.executable, "-m", "ansel.cli", "records", "--check", "README.md"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("page,command,comment", commands(), ids=lambda v: v[:60] if isinstance(v, str) else v)
def test_a_documented_command_works(page, command, comment):
    if SKIP in comment:
        pytest.skip(comment)
    if AFTER_SMOKE in comment and not (ROOT / "data/processed/synthetic_en").exists():
        pytest.skip("reads make smoke's outputs, which this checkout does not have")
    words = shlex.split(command)
    if words[0] == "snakemake" and not {"-n", "--dry-run"} & set(words):
        command = command.replace("snakemake", "snakemake -n", 1)
    bin_dir = Path(sys.executable).parent
    done = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert done.returncode == 0, f"{page}: `{command}` failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


def test_a_headline_naming_no_cell_or_no_claim_is_refused_naming_the_entry(tmp_path):
    from ansel.config import ConfigError
    from ansel.records import results_table

    record = tmp_path / "reports/cpu-x"
    record.mkdir(parents=True)
    (record / "t.json").write_text('{"A": {"d test MAP": {"mean": 0.5, "std": 0.01, "n": 5, "published": 0.6}}, '
                                   '"significance": {"claims": {"A > B": {"d test MAP": {"verdict": "holds", '
                                   '"difference": 0.1, "p_holm": 0.01}}}}}')
    entry = "- {paper: P, record: cpu-x, table: t, row: A, column: d test MAP, claim: A > B}\n"
    (tmp_path / "reports/headlines.yaml").write_text(entry)
    assert "| P | A, d test MAP | 0.6000 | 0.5000 ± 0.0100 (n=5) | -0.1000 | A > B: **holds**" in results_table(tmp_path)
    for bad, message in [(entry.replace("row: A", "row: Z"), r"\[0\]: .*t.json has no cell \('Z', 'd test MAP'\)"),
                         (entry.replace("A > B}", "A > C}"), r"\[0\]: .*t.json tests no claim 'A > C'"),
                         (entry.replace("table: t,", "table: u,"), r"\[0\]: .*u.json: no such record table"),
                         (entry.replace("claim: A > B", "clam: A > B"), r"\[0\]: missing claim")]:
        (tmp_path / "reports/headlines.yaml").write_text(bad)
        with pytest.raises(ConfigError, match=message):
            results_table(tmp_path)


def test_a_headlines_record_is_labelled_by_where_it_ran(tmp_path):
    from ansel.records import results_table

    twin = ('{"A": {"d test MAP": {"mean": 0.5, "std": 0.01, "n": 5, "published": 0.6}}, "significance": {"claims": '
            '{"A > B": {"d test MAP": {"verdict": "holds", "difference": 0.1, "p_holm": 0.01}}}}}')
    entries = ""
    for record in ("cpu-x", "paper-x", "device/x"):
        (tmp_path / "reports" / record).mkdir(parents=True)
        (tmp_path / "reports" / record / "t.json").write_text(twin)
        entries += f"- {{paper: P, record: {record}, table: t, row: A, column: d test MAP, claim: A > B}}\n"
    (tmp_path / "reports/headlines.yaml").write_text(entries)
    table = results_table(tmp_path)
    for label in ("[CPU `cpu-x`](reports/cpu-x/t.md)", "[CPU, paper scale `paper-x`](reports/paper-x/t.md)",
                  "[GPU `device/x`](reports/device/x/t.md)"):
        assert label in table
