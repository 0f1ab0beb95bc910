"""The front page's "Results at a glance": one row per paper's headline table, read from the
committed records' JSON twins (``reports/headlines.yaml`` names each cell and claim), so the README
shows what the records hold and nothing else. ``ansel records`` prints the table; ``--write
README.md`` puts it between the README's markers; ``--check README.md`` fails where they differ."""
from __future__ import annotations

import json
import math
from pathlib import Path

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
    head, rest = text.split(START, 1)
    return f"{head}{START}\n{table}{END}{rest.split(END, 1)[1]}"
