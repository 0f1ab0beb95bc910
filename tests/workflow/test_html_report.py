"""The HTML report as a person sees it: `make smoke` then `make report` in a copy of the tree (its
smoke preset cut down: wt.make_small, plus one table of the datasets paper), the report opened in
headless Chromium, and its rendered first page checked for each paper's section, a table cell read
from the table's CSV and a figure; a screenshot of its first screen is kept.

Needs Chromium (Debian's package; tests/workflow/chromium.sh installs it): skipped without one on
PATH, unless ANSEL_CHROMIUM names the binary (CI), which must then work. ANSEL_REPORT_SCREENSHOT:
where the screenshot goes (CI keeps it under reports/), else a temporary directory.
"""

import base64
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.image
import pandas as pd
import pytest
import yaml
from docutils.nodes import make_id

CHROMIUM = os.environ.get("ANSEL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.ci,  # `make smoke` and `make report`: CI's
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="no chromium on PATH (tests/workflow/chromium.sh installs Debian's; or set ANSEL_CHROMIUM)",
    ),
]
# The cut-down smoke paper (wt.PAPER) and one dataset_stats table of a second paper: a section each;
# the other papers build nothing.
PAPERS = {"smoke": ["synthetic", "stats"], "datasets": ["trecqa"]}


class RenderedPage(HTMLParser):
    """What a rendered page shows, by the paper section (docutils' section id) it sits in."""

    def __init__(self, html: str):
        super().__init__()
        self.section, self.sections = None, []
        self.cells: dict[str, list[str]] = {}  # section id -> texts of <td> and <th>
        self.images: dict[str, list[str]] = {}  # section id -> <img> src
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        # docutils writes a section as <div class="section" id=...> (html4css1) or <section id=...> (html5)
        if attrs.get("id") and (tag == "section" or tag == "div" and "section" in (attrs.get("class") or "").split()):
            self.section = attrs["id"]
            self.sections.append(self.section)
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.images.setdefault(self.section, []).append(attrs.get("src", ""))

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.cells.setdefault(self.section, []).append("".join(self._cell).strip())
            self._cell = None


def chromium(*args: str, profile: Path) -> str:
    # --no-sandbox: CI runs as root; virtual time lets the report's scripts render the page first
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=20000",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def make(target: str, repo: Path, env: dict, wt) -> None:
    """`make <target>` with this interpreter's venv, never reinstalling it (-o: its install stamp counts as done)."""
    venv = Path(sys.executable).parent.parent
    wt.sh(["make", target, f"VENV={venv}", "-o", f"{venv}/.installed"], repo, env)


def shown_cell(csv: Path) -> tuple[str, str]:
    """(row label, value) of the first cell of a table's long CSV, as its rendered table prints the value
    (one seed: no ± std)."""
    first = pd.read_csv(csv).iloc[0]
    return first["row"], f"{first['mean']:.{int(first['digits'])}f}"


def test_make_report_shows_each_paper_its_tables_and_figures_in_chromium(repo_root, tmp_path, wt):
    repo = tmp_path / "repo"
    wt.copy_worktree(repo_root, repo)
    wt.make_small(repo)
    preset = repo / "presets/smoke.yaml"
    smoke = yaml.safe_load(preset.read_text())
    for paper in yaml.safe_load((repo / "params.yaml").read_text())["papers"]:  # any paper: none but PAPERS build
        if paper != "smoke":  # make_small's spec: its every table and figure
            smoke["papers"].setdefault(paper, {}).update(tables=PAPERS.get(paper, []), figures=[])
    preset.write_text(yaml.safe_dump(smoke))
    env = wt.run_env(repo, tmp_path / "dvc-site")
    make("smoke", repo, env, wt)
    make("report", repo, env, wt)
    report = repo / "results/report.html"

    page = RenderedPage(chromium("--dump-dom", report.as_uri(), profile=tmp_path / "chromium"))
    assert [s for s in page.sections if s.startswith("paper-")] == sorted(make_id(f"Paper {p}") for p in PAPERS)
    for paper, tables in PAPERS.items():
        cells = page.cells.get(make_id(f"Paper {paper}"), [])
        for table in tables:
            row, value = shown_cell(repo / f"results/tables/{paper}/{table}.csv")
            assert row in cells and any(c.startswith(value) for c in cells), (paper, table, row, value, cells)
    png = (repo / "figures/smoke/learning_curves.png").read_bytes()
    embedded = [
        base64.b64decode(src.partition(";base64,")[2])
        for src in page.images.get(make_id("Paper smoke"), [])
        if src.startswith("data:image/png")
    ]
    assert png in embedded, f"{len(embedded)} PNGs in the smoke section, none of them figures/smoke/learning_curves.png"

    shot = Path(os.environ.get("ANSEL_REPORT_SCREENSHOT") or tmp_path / "report-first-screen.png").resolve()
    shot.parent.mkdir(parents=True, exist_ok=True)
    chromium(
        "--hide-scrollbars",
        "--window-size=1280,900",
        f"--screenshot={shot}",
        report.as_uri(),
        profile=tmp_path / "chromium",
    )
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (900, 1280)
    assert pixels[..., :3].std() > 0.1, f"{shot}: a blank page"  # text, tables and a menu, not one colour
