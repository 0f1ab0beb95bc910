"""The front page's "Results at a glance": one row per paper's headline table, read from the
committed records' JSON twins (``reports/headlines.yaml`` names each cell and claim), so the README
shows what the records hold and nothing else: each cell is checked against the metrics.json of its
runs in the record (``check_cell``). ``ansel records`` prints the table; ``--write README.md`` puts it
between the README's markers (one block); ``--check README.md`` fails where they differ."""
from __future__ import annotations

import glob
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ansel.config import ConfigError, root
from ansel.yamlfile import read_yaml

HEADLINES = "reports/headlines.yaml"
START, END = "<!-- results: ansel records -->", "<!-- /results -->"
KEYS = ("paper", "record", "table", "row", "column", "claim")
# Where a record ran, by its folder's prefix (else the `cpu` preset on 2 cores).
RECORD_KINDS = (("device/", "GPU"), ("paper-", "CPU, paper scale"))


def _number(value: float, published: float) -> str:
    """As the table prints it: percentages where the paper's values are, else 4 decimals."""
    return f"{value:.2f}" if published > 1.0 else f"{value:.4f}"


def headline_row(entry: dict, where: str, base: Path) -> str:
    twin = base / "reports" / entry["record"] / f"{entry['table']}.json"
    if not twin.exists():
        raise ConfigError(f"{where}: {twin}: no such record table")
    cells = json.loads(twin.read_text())
    try:
        cell = cells[entry["row"]][entry["column"]]
    except KeyError:
        raise ConfigError(f"{where}: {twin} has no cell ({entry['row']!r}, {entry['column']!r}); rows: "
                          f"{', '.join(k for k in cells if k != 'significance')}") from None
    check_cell(cell, twin, entry, where)
    claims = cells.get("significance", {}).get("claims", {})
    if entry["claim"] not in claims or entry["column"] not in claims[entry["claim"]]:
        raise ConfigError(f"{where}: {twin} tests no claim {entry['claim']!r} on {entry['column']!r} "
                          f"(claims: {', '.join(claims) or 'none'})")
    verdict = claims[entry["claim"]][entry["column"]]
    published = cell.get("published")
    has_published = published is not None and not math.isnan(published)
    ours = f"{_number(cell['mean'], published or 0)} ± {_number(cell['std'], published or 0)} (n={cell['n']})"
    gap = f"{cell['mean'] - published:+.{2 if published > 1 else 4}f}" if has_published else "—"
    kind = next((k for prefix, k in RECORD_KINDS if entry["record"].startswith(prefix)), "CPU")
    data = f" on {entry['data']}" if entry.get("data") else ""
    return (f"| {entry['paper']} | {entry['row']}, {entry['column']} | "
            f"{_number(published, published) if has_published else '—'} | {ours}{data} | {gap} | "
            f"{entry['claim']}: **{verdict['verdict']}** (Δ {verdict['difference']:+.4f}, p = {verdict['p_holm']:.2g}) | "
            f"[{kind} `{entry['record']}`](reports/{entry['record']}/{entry['table']}.md) |")


def check_cell(cell: dict, twin: Path, entry: dict, where: str) -> None:
    """The twin's cell is the mean, std and n of its runs' metrics.json in the record (``provenance``),
    on the split and metric its long form (.csv) names: a twin edited by hand never reaches the page."""
    runs = [_record_run(twin.parent, r["run"].removeprefix("results/"))
            for r in cell.get("provenance", {}).get("runs", [])]
    long = twin.with_suffix(".csv")
    rows = pd.read_csv(long, dtype={"row": str, "column": str}) if long.exists() else pd.DataFrame()
    rows = rows[(rows.row == entry["row"]) & (rows.column == entry["column"])] if len(rows) else rows
    if not runs or len(rows) != 1 or rows.column.iloc[0] != f"{rows.dataset.iloc[0]} {rows.split.iloc[0]} {rows.metric.iloc[0]}":
        raise ConfigError(f"{where}: {twin}: the cell ({entry['row']!r}, {entry['column']!r}) names no runs of "
                          f"the record and split and metric of the dev protocol in {long}: it cannot be checked")
    split, metric = rows.split.iloc[0], rows.metric.iloc[0]
    values = []
    for run in runs:
        path = run / "metrics.json"
        try:
            values.append(float(json.loads(path.read_text())[split][metric]))
        except (OSError, ValueError, KeyError) as e:
            raise ConfigError(f"{where}: {path}: no {split} {metric} ({type(e).__name__}: {e}), a run of "
                              f"{twin}'s cell ({entry['row']!r}, {entry['column']!r})") from None
    v = np.asarray(values)
    for scale in (1.0, 100.0):  # a column printed in percent where the paper's values are
        ours = (float((v * scale).mean()), float((v * scale).std(ddof=1)) if len(v) > 1 else 0.0, len(v))
        if all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(ours, (cell["mean"], cell["std"], cell["n"]))):
            return
    raise ConfigError(f"{where}: {twin}: cell ({entry['row']!r}, {entry['column']!r}) says {cell['mean']:.6f} ± "
                      f"{cell['std']:.6f} (n={cell['n']}) where its {len(v)} runs' metrics.json give {v.mean():.6f} ± "
                      f"{v.std(ddof=1) if len(v) > 1 else 0.0:.6f}: the twin was not rendered from them; render it "
                      "again (ansel record / make gpu-unpack)")


def _record_run(record: Path, run: str) -> Path:
    """A run of a record's table: in the record, else in a sibling record (a device table split over
    two leases renders from both)."""
    return next((p for p in [record / run, *sorted(record.parent.glob(f"*/{glob.escape(run)}"))] if (p / "metrics.json").exists()),
                record / run)


def results_table(base: Path | None = None) -> str:
    base = base or root()
    path = base / HEADLINES
    entries = read_yaml(path)
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: expected a list of headline cells")
    lines = ["| paper | cell | published | ours (mean ± std over seeds) | gap | the paper's main claim, our paired test | record |",
             "|---|---|---|---|---|---|---|"]
    for i, entry in enumerate(entries):
        where = f"{path}: [{i}]"
        if missing := [k for k in KEYS if k not in entry]:
            raise ConfigError(f"{where}: missing {', '.join(missing)}")
        lines.append(headline_row(entry, where, base))
    return "\n".join(lines) + "\n"


def splice(text: str, table: str, where: str) -> str:
    """``text`` with ``table`` between the results markers."""
    if START not in text or END not in text:
        raise ConfigError(f"{where}: no results markers ({START} ... {END})")
    if text.count(START) > 1 or text.count(END) > 1:
        raise ConfigError(f"{where}: {text.count(START)} results blocks ({START} ... {END}): keep one, the "
                          "others would stay as they are, unchecked")
    head, rest = text.split(START, 1)
    return f"{head}{START}\n{table}{END}{rest.split(END, 1)[1]}"
