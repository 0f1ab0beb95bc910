"""The front page's "Results at a glance": one row per paper's headline cell, printed through the rule
of ``ansel.report.printable`` from the committed records (``reports/headlines.yaml`` declares each
record's scale and, per headline, the paper's published cell, its claim and the records holding it).
A row takes its cell from the highest-scale record on the paper's own data; a verdict only from runs
at the paper's settings, data and protocol; a gap only where ours is the published cell; it names the
word vectors its runs started from. Each cell read from a record's JSON twin is checked against its
runs' files (``check_cell``): a twin edited by hand never reaches the page. ``ansel front-page`` prints
the table; ``--write README.md`` puts it between the README's markers (one block); ``--check
README.md`` fails where a row breaks the rule or the two differ."""

from __future__ import annotations

import csv
import glob
import json
import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ansel.config import ConfigError, root
from ansel.report.printable import (
    PROTOCOL_NAMES,
    PROTOCOL_SUFFIX,
    SCALES,
    Cell,
    Printed,
    comparable,
    refusals,
    same_data,
    stand_in,
    verdict_allowed,
)
from ansel.run_files import is_number, read_log
from ansel.schema import check_schema
from ansel.typos import typo_of
from ansel.yamlfile import read_yaml

HEADLINES = "reports/headlines.yaml"
HEADLINES_SCHEMA = "workflow/schemas/headlines.schema.yaml"
PUBLISHED = "workflow/papers/published_results.csv"
START, END = "<!-- results: ansel front-page -->", "<!-- /results -->"
HEADER = (
    "| paper | cell | published | ours (mean ± std over seeds) | gap | word vectors "
    "| the paper's main claim, our paired test | record |"
)
VERDICT = re.compile(r"\*\*(holds|does not hold|not significant)\*\*")


def parse_column(label: str) -> Cell:
    """A table's column label ("<dataset> <split> <metric>[ (protocol)]") as a cell."""
    protocol = next((p for p, suffix in PROTOCOL_SUFFIX.items() if suffix and label.endswith(suffix)), "dev")
    words = label[: len(label) - len(PROTOCOL_SUFFIX[protocol])].split(" ")
    if len(words) != 3:
        raise ConfigError(f"column {label!r}: not '<dataset> <split> <metric>[ (protocol)]'")
    dataset, split, metric = words
    return Cell(dataset, split, metric, protocol)


def _number(value: float, percent: bool) -> str:
    return f"{value:.2f}" if percent else f"{value:.4f}"


@dataclass
class Source:
    """One record's cell: its values and where they come from."""

    record: str
    scale: str
    link: str
    row: str
    ours: Cell  # the data the runs read (not the column's label where a preset replaced it)
    mean: float
    std: float
    n: int
    vectors: set[str]
    claims: dict | None  # the record's paired tests of the claim by column label; None: no table tested it
    column: str
    context: str = ""


def _run_configs(base: Path, record: str, runs: list[str], where: str) -> list[dict]:
    """The config.json of each run (``results/runs/<dataset>/<model>/seed<k>`` as the record keeps it)."""
    configs = []
    for run in runs:
        path = base / "reports" / record / "runs" / Path(run).relative_to("results/runs") / "config.json"
        if not path.exists():
            raise ConfigError(f"{where}: {path}: missing (the record's run {run})")
        configs.append(json.loads(path.read_text()))
    return configs


def _twin_source(base: Path, entry: dict, scale: str, where: str) -> Source:
    twin = base / "reports" / entry["record"] / f"{entry['table']}.json"
    if not twin.exists():
        raise ConfigError(f"{where}: {twin}: no such record table")
    cells = json.loads(twin.read_text())
    try:
        cell = cells[entry["row"]][entry["column"]]
    except KeyError:
        raise ConfigError(
            f"{where}: {twin} has no cell ({entry['row']!r}, {entry['column']!r}); rows: "
            f"{', '.join(k for k in cells if k != 'significance')}"
        ) from None
    check_cell(cell, twin, entry, where)
    runs = [r["run"] for r in cell.get("provenance", {}).get("runs", [])]
    if not runs:
        raise ConfigError(f"{where}: {twin}: cell ({entry['row']!r}, {entry['column']!r}) names no runs (provenance)")
    configs = _run_configs(base, entry["record"], runs, where)
    column = parse_column(entry["column"])
    context = ""
    if "context" in entry:
        row = cells.get(entry["context"], {}).get(entry["column"])
        if row is None:
            raise ConfigError(f"{where}: {twin} has no context cell ({entry['context']!r}, {entry['column']!r})")
        context = f"{entry['context']}: {row['mean']:.4f}{_against_context(cells, entry)}"
    claims = cells.get("significance", {}).get("claims", {})
    return Source(
        entry["record"],
        scale,
        f"reports/{entry['record']}/{entry['table']}.md",
        entry["row"],
        Cell(configs[0]["dataset"], column.split, column.metric, column.protocol),
        cell["mean"],
        cell["std"],
        cell["n"],
        {c["embeddings"] for c in configs},
        claims,
        entry["column"],
        context,
    )


def _against_context(cells: dict, entry: dict) -> str:
    """The twin's paired test of the headline row against its context row on the column, where its table
    compares the two (the baseline's family: pooled over the seeds, the spec's test, Holm-adjusted), in
    words; "" where it does not. A context row is no claim of the paper: never a verdict in bold."""
    from ansel.report.significance import TEST_NAMES

    sig = cells.get("significance", {})
    row, other = entry["row"], entry["context"]
    for key, sign in ((f"{row} vs {other}", 1), (f"{other} vs {row}", -1)):
        pooled = sig.get("comparisons", {}).get(key, {}).get(entry["column"], {}).get("pooled")
        if pooled and pooled[sig["test"]]["p_holm"] is not None:
            p, difference = pooled[sig["test"]]["p_holm"], sign * pooled["difference"]
            return (
                f", {'below' if difference > 0 else 'above'} {row}: {row} − {other} {difference:+.4f} over "
                f"{pooled['n_questions']} questions, {TEST_NAMES[sig['test']]} p = {p:.2g} (Holm): "
                f"{'significant' if p < sig['alpha'] else 'not significant'}"
            )
    return ""


def _runs_source(base: Path, entry: dict, scale: str, where: str) -> Source:
    """A record without a rendered table (a device record whose table waits for other rows): the cell
    from its runs' metrics.json (selected on dev)."""
    column = parse_column(entry["column"])
    if column.protocol != "dev":
        raise ConfigError(f"{where}: a source without a table reads metrics.json: the dev-selected checkpoint only")
    folder = base / "reports" / entry["record"] / "runs" / column.dataset

    def seeds(model: str) -> list[Path]:
        found = sorted((folder / model).glob("seed*/metrics.json"))
        if not found:
            raise ConfigError(f"{where}: {folder / model}: no seed*/metrics.json")
        return found

    def values(model: str) -> list[float]:
        return [json.loads(p.read_text())[column.split][column.metric] for p in seeds(model)]

    ours = values(entry["model"])
    mean, std = statistics.mean(ours), statistics.stdev(ours) if len(ours) > 1 else 0.0
    configs = [json.loads((p.parent / "config.json").read_text()) for p in seeds(entry["model"])]
    context = ""
    if "context" in entry:
        context = f"{entry['context']['label']}: {statistics.mean(values(entry['context']['model'])):.4f}"
    return Source(
        entry["record"],
        scale,
        f"reports/{entry['record']}/README.md",
        entry["row"],
        Cell(configs[0]["dataset"], column.split, column.metric),
        mean,
        std,
        len(ours),
        {c["embeddings"] for c in configs},
        None,
        entry["column"],
        context,
    )


def vectors_label(methods: set[str], embeddings: dict) -> str:
    """The runs' word vectors in words: trained here (word2vec on the dataset, or on a corpus recipe) or
    published (a key of embeddings.pretrained)."""

    def one(method: str) -> str:
        if method == "word2vec":
            return "word2vec trained here on the dataset"
        if method in embeddings.get("word2vec", {}):
            return f"word2vec trained here on {' + '.join(embeddings['word2vec'][method]['corpus'])} (`{method}`)"
        if method in embeddings.get("pretrained", {}):
            return f"the published `{method}`"
        return f"`{method}`"

    return "; ".join(one(m) for m in sorted(methods))


@dataclass
class Context:
    """What every row reads: the records' scales, the datasets and vectors configs, the published values."""

    base: Path
    scales: dict[str, str]
    datasets: dict
    embeddings: dict
    published: dict[tuple, float]


def load_context(base: Path) -> tuple[Context, list[dict]]:
    path = base / HEADLINES
    doc = read_yaml(path)
    check_schema(doc, root() / HEADLINES_SCHEMA, str(path))
    _check_record_folders(doc["records"], base, path)
    params = read_yaml(base / "params.yaml")
    with open(base / PUBLISHED, newline="") as f:
        published = {
            (r["paper"], r["table"], r["dataset"], r["split"], r["model"], r["metric"]): float(r["value"])
            for r in csv.DictReader(f)
        }
    return Context(base, doc["records"], params.get("datasets", {}), params.get("embeddings", {}), published), doc[
        "headlines"
    ]


def _check_record_folders(records: dict, base: Path, path: Path) -> None:
    """Each ``records`` key names a folder under reports/ (a plain name: the schema): a typo would
    leave the record it meant without a scale and declare one that is not there."""
    reports = base / "reports"
    for record in records:
        if not (reports / record).is_dir():
            folders = sorted(
                d.relative_to(reports).as_posix()
                for d in [*reports.glob("*/"), *reports.glob("device/*/")]
                if d.is_dir() and d.name != "device"
            )
            raise ConfigError(
                f"{path}: records.{record}: no record folder {reports / record}{typo_of(record, folders)}; "
                f"the record folders: {', '.join(folders) or 'none'}"
            )


def published_cell(entry: dict) -> Cell:
    p = entry["published"]
    return Cell(p["dataset"], p["split"], p["metric"], entry.get("protocol", "dev"))


def sources(ctx: Context, entry: dict, where: str) -> list[Source]:
    """The headline's records, best first: on the paper's own data before stand-ins, then by scale."""
    found = []
    for i, s in enumerate(entry["sources"]):
        w = f"{where}.sources[{i}]"
        if s["record"] not in ctx.scales:
            raise ConfigError(f"{w}: record {s['record']!r} declares no scale (records: in {ctx.base / HEADLINES})")
        read = _twin_source if "table" in s else _runs_source
        found.append(read(ctx.base, s, ctx.scales[s["record"]], w))
    pub = published_cell(entry)
    return sorted(
        found, key=lambda s: (not same_data(s.ours.dataset, pub.dataset, ctx.datasets), SCALES.index(s.scale))
    )


def headline_row(ctx: Context, entry: dict, where: str) -> str:
    best = sources(ctx, entry, where)[0]
    pub_cell = published_cell(entry)
    if best.ours.protocol != pub_cell.protocol:
        raise ConfigError(
            f"{where}: its source `{best.record}` column {best.column!r} is not at the paper's "
            f"protocol ({pub_cell.protocol}); name the column of that protocol"
        )
    p = entry["published"]
    key = (p["spec"], p["table"], p["dataset"], p["split"], p["row"], p.get("published_metric", p["metric"]))
    published = ctx.published.get(key, math.nan)
    if math.isnan(published):
        raise ConfigError(f"{where}.published: {ctx.base / PUBLISHED} has no row {', '.join(key)}")
    percent = published > 1.0
    ours = f"{_number(best.mean, best.mean > 1.0)} ± {_number(best.std, best.mean > 1.0)} (n={best.n})"
    can_gap = comparable(best.ours, pub_cell, ctx.datasets)
    if can_gap:  # the paper prints percentages where its values exceed 1
        gap = f"{best.mean * (100.0 if percent and best.mean <= 1.0 else 1.0) - published:+.{2 if percent else 4}f}"
    else:
        gap = "—"
        ours += f" on {stand_in(best.ours, pub_cell, ctx.datasets)}"
    if best.context:
        ours += f"; {best.context}"
    verdict = _verdict(best, entry, pub_cell, ctx, where)
    kind = _ran_on(ctx.base, best.record)
    vectors = vectors_label(best.vectors, ctx.embeddings)
    printed = Printed(best.record, best.scale, best.ours, VERDICT.search(verdict) is not None, can_gap, vectors)
    if broken := refusals(printed, pub_cell, ctx.datasets):  # the rule's own check of what it prints
        raise AssertionError(f"{where}: {'; '.join(broken)}")
    return (
        f"| {entry['paper']} | {best.row}, {best.column} | {_number(published, percent)} "
        f"| {ours} | {gap} | {vectors} | {entry['claim']}: {verdict} | "
        f"[{kind}, {best.scale} scale `{best.record}`]({best.link}) |"
    )


def _ran_on(base: Path, record: str) -> str:
    """GPU or CPU: what a kit record's device.json names (the GPU kit also runs on a CPU); a record
    without one by its folder (device/: a lent GPU, else 2 CPU cores)."""
    kit = base / "reports" / record / "device.json"
    if kit.is_file():
        return "GPU" if json.loads(kit.read_text()).get("device") == "cuda" else "CPU"
    return "GPU" if record.startswith("device/") else "CPU"


def _verdict(best: Source, entry: dict, pub_cell: Cell, ctx: Context, where: str) -> str:
    if why := verdict_allowed(best.scale, best.ours, pub_cell, ctx.datasets):
        return why
    if best.claims is None:
        return "not tested yet: no paired test of these runs (their table waits for its other rows)"
    tested = best.claims.get(entry["claim"], {})
    if best.column not in tested:
        if best.claims and entry["claim"] not in best.claims:
            raise ConfigError(
                f"{where}: `{best.record}` tests no claim {entry['claim']!r} "
                f"(claims: {', '.join(best.claims) or 'none'})"
            )
        return (
            f"not tested at {PROTOCOL_NAMES[best.ours.protocol]}: the record keeps per-question run files "
            "of the dev-selected checkpoint only (a retrain keeps both)"
            if best.ours.protocol != "dev"
            else f"not tested at {best.column}"
        )
    v = tested[best.column]
    return f"**{v['verdict']}** (Δ {v['difference']:+.4f}, p = {v['p_holm']:.2g})"


def check_cell(cell: dict, twin: Path, entry: dict, where: str) -> None:
    """The twin's cell is the mean, std and n of its runs in the record (``provenance``), on the split
    and metric its long form (.csv) names, read as the table reads them at the column's protocol
    (``_run_value``): a twin edited by hand never reaches the page."""
    runs = [
        _record_run(twin.parent, r["run"].removeprefix("results/")) for r in cell.get("provenance", {}).get("runs", [])
    ]
    protocol = parse_column(entry["column"]).protocol
    long = twin.with_suffix(".csv")
    rows = pd.read_csv(long, dtype={"row": str, "column": str}) if long.exists() else pd.DataFrame()
    rows = rows[(rows.row == entry["row"]) & (rows.column == entry["column"])] if len(rows) else rows
    if (
        not runs
        or len(rows) != 1
        or rows.column.iloc[0]
        != (f"{rows.dataset.iloc[0]} {rows.split.iloc[0]} {rows.metric.iloc[0]}{PROTOCOL_SUFFIX[protocol]}")
    ):
        raise ConfigError(
            f"{where}: {twin}: the cell ({entry['row']!r}, {entry['column']!r}) names no runs of "
            f"the record, or no one split and metric in {long}: it cannot be checked"
        )
    split, metric = rows.split.iloc[0], rows.metric.iloc[0]
    v = np.asarray(
        [
            _run_value(run, split, metric, protocol, f"{where}: {twin}'s cell ({entry['row']!r}, {entry['column']!r})")
            for run in runs
        ]
    )
    for scale in (1.0, 100.0):  # a column printed in percent where the paper's values are
        ours = (float((v * scale).mean()), float((v * scale).std(ddof=1)) if len(v) > 1 else 0.0, len(v))
        if all(
            math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
            for a, b in zip(ours, (cell["mean"], cell["std"], cell["n"]))
        ):
            return
    raise ConfigError(
        f"{where}: {twin}: cell ({entry['row']!r}, {entry['column']!r}) says {cell['mean']:.6f} ± "
        f"{cell['std']:.6f} (n={cell['n']}) where its {len(v)} runs give {v.mean():.6f} ± "
        f"{v.std(ddof=1) if len(v) > 1 else 0.0:.6f}: the twin was not rendered from them; render it "
        "again (ansel collect-record / make gpu-unpack)"
    )


def _run_value(run: Path, split: str, metric: str, protocol: str, what: str) -> float:
    """A record run's value as its table read it: metrics.json (the dev-selected checkpoint), or the
    last row of log.csv (the last epoch; a run that trained no epoch has only its metrics.json)."""
    if protocol not in ("dev", "last"):
        raise ConfigError(f"{what}: a headline cell at {PROTOCOL_NAMES[protocol]} cannot be checked against its runs")
    path = run / "log.csv"
    try:
        log = read_log(path) if protocol == "last" and path.exists() and path.stat().st_size else pd.DataFrame()
        if len(log):
            return float(log[f"{split}_{metric}"].iloc[-1])
        path = run / "metrics.json"
        return float(json.loads(path.read_text())[split][metric])
    except (OSError, ValueError, KeyError) as e:
        raise ConfigError(f"{what}: {path}: no {split} {metric} ({type(e).__name__}: {e})") from None


def _record_run(record: Path, run: str) -> Path:
    """A run of a record's table: in the record, else in a sibling record (a device table split over
    two leases renders from both)."""
    return next(
        (
            p
            for p in [record / run, *sorted(record.parent.glob(f"*/{glob.escape(run)}"))]
            if (p / "metrics.json").exists()
        ),
        record / run,
    )


def results_table(base: Path | None = None) -> str:
    ctx, entries = load_context(base or root())
    lines = [HEADER, "|---|---|---|---|---|---|---|---|"]
    for i, entry in enumerate(entries):
        where = f"{ctx.base / HEADLINES}: headlines[{i}]"
        lines.append(headline_row(ctx, entry, where))
    return "\n".join(lines) + "\n"


def check_readme(text: str, where: str, base: Path | None = None) -> list[str]:
    """What the README's results rows print that the rule refuses, one message per breach, naming the
    row: each row is matched to its headline (paper, record) and read back as a ``Printed``."""
    ctx, entries = load_context(base or root())
    if START not in text or END not in text:
        raise ConfigError(f"{where}: no results markers ({START} ... {END})")
    block = text.split(START, 1)[1].split(END, 1)[0].strip().splitlines()
    header = [h.strip() for h in block[0].strip("|").split("|")]
    found = []
    for n, line in enumerate(block[2:], start=1):
        cells = dict(zip(header, (c.strip() for c in line.strip().strip("|").split(" | "))))
        paper = cells.get("paper", "")
        link = re.search(r"\]\(reports/(.+)/[^/]+\.md\)", cells.get("record", ""))
        row, _, column = cells.get("cell", "").rpartition(", ")
        record = link.group(1) if link else ""
        matches = [
            (e, s)
            for e in entries
            if e["paper"] == paper
            for s in e["sources"]
            if s["record"] == record and parse_column(s["column"]).dataset == parse_column(column).dataset
        ]
        if not matches:
            found.append(f"{where}: results row {n} ({paper}): record `{record}` is no source of its headline")
            continue
        entry, source = matches[0]
        read = _twin_source if "table" in source else _runs_source
        got = read(ctx.base, {**source, "column": column, "row": row}, ctx.scales[record], f"{where}: row {n}")
        printed = Printed(
            record,
            ctx.scales[record],
            got.ours,
            VERDICT.search(line) is not None,
            is_number(cells.get("gap", "—")),
            cells.get("word vectors", ""),
        )
        found += [
            f"{where}: results row {n} ({paper}, {row}, {column}): {r}"
            for r in refusals(printed, published_cell(entry), ctx.datasets)
        ]
    return found


def splice(text: str, table: str, where: str) -> str:
    """``text`` with ``table`` between the results markers."""
    if START not in text or END not in text:
        raise ConfigError(f"{where}: no results markers ({START} ... {END})")
    if text.count(START) > 1 or text.count(END) > 1:
        raise ConfigError(
            f"{where}: {text.count(START)} results blocks ({START} ... {END}): keep one, the "
            "others would stay as they are, unchecked"
        )
    head, rest = text.split(START, 1)
    return f"{head}{START}\n{table}{END}{rest.split(END, 1)[1]}"
