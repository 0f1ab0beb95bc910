"""What may be printed as a result (DESIGN principle 15): a verdict on a paper's claim only from runs at
the paper's settings, on its data, at its protocol; a gap (and a † mark) only where ours and the
published value are one cell -- the same data, split, metric and protocol; else "—", the stand-in named.

A record declares its scale (``SCALES``): ``paper`` (the papers' settings) or ``budget`` (cut: fewer
epochs, filters or batches). The front page (``ansel.records``) and the paper tables
(``ansel.report.tables``) print through these functions; ``refusals`` says what a printed row breaks.
"""

from __future__ import annotations

from dataclasses import dataclass

SCALES = ("paper", "budget")  # highest first
NOT_AT_SCALE = "not tested at the paper's settings"
# How a table's column label names its protocol (``ansel.report.tables.column_label``).
PROTOCOL_SUFFIX = {"dev": "", "last": " (last epoch)", "best_split": " (best epoch on it)", "benchmark": " (benchmark)"}
PROTOCOL_NAMES = {
    "dev": "the checkpoint selected on dev",
    "last": "the last iteration",
    "best_split": "the epoch best on the reported split",
    "benchmark": "a benchmark",
}


@dataclass(frozen=True)
class Cell:
    """Where a value comes from: the data the runs read (a dataset config's name, or the published
    table's dataset), split, metric and protocol."""

    dataset: str
    split: str
    metric: str
    protocol: str = "dev"

    def __str__(self) -> str:
        return f"{self.dataset} {self.split} {self.metric}"


def same_data(ours: str, published: str, datasets: dict) -> bool:
    """Whether runs on dataset config ``ours`` read the data of the published ``published`` cell: the
    same name, or a preparation of that release as released (its ``source``, not re-split from it:
    wikiqa_mz is MatchZoo's WikiQA, which the aMV-LSTM paper ran; quoraqp_standin re-splits QuoraQP's
    dev and test, insuranceqa_v2 is not v1, cmeddialog is not LawQA)."""
    if ours == published:
        return True
    cfg = datasets.get(ours, {})
    read = cfg.get("read", {})
    return cfg.get("source") == published and "resplit" not in read and "split" not in read


def comparable(ours: Cell, published: Cell, datasets: dict) -> bool:
    """One cell: a gap or a † between the two may be printed."""
    return (
        same_data(ours.dataset, published.dataset, datasets)
        and ours.split == published.split
        and ours.metric.casefold() == published.metric.casefold()
        and ours.protocol == published.protocol
    )


def stand_in(ours: Cell, published: Cell, datasets: dict) -> str:
    """What ours is where it is not the published cell (``comparable`` is false), for the "—" beside it."""
    if not same_data(ours.dataset, published.dataset, datasets):
        return f"{ours} (stand-in for {published})"
    if ours.split != published.split or ours.metric.casefold() != published.metric.casefold():
        return f"{ours} (the paper reports {published})"
    return f"{PROTOCOL_NAMES[ours.protocol]} (the paper reports {PROTOCOL_NAMES[published.protocol]})"


def verdict_allowed(scale: str, ours: Cell, published: Cell, datasets: dict) -> str | None:
    """None where a verdict on the paper's claim may be printed from runs of ``scale`` at ``ours``,
    else what to print instead of one."""
    if scale not in SCALES:
        raise ValueError(f"scale {scale!r}: one of {', '.join(SCALES)}")
    if scale != "paper":
        return NOT_AT_SCALE
    if not same_data(ours.dataset, published.dataset, datasets):
        return f"not tested on the paper's data ({published.dataset})"
    if ours.protocol != published.protocol:
        return f"not tested at the paper's protocol ({PROTOCOL_NAMES[published.protocol]})"
    return None


@dataclass(frozen=True)
class Printed:
    """A front-page row as printed: the record it names and that record's scale, the cell its "ours"
    comes from, whether it prints a verdict and a gap, and the vectors it names ("" for none)."""

    record: str
    scale: str
    ours: Cell
    verdict: bool
    gap: bool
    vectors: str


def refusals(row: Printed, published: Cell, datasets: dict) -> list[str]:
    """What ``row`` prints that the rule refuses, against the paper's ``published`` cell (empty: none)."""
    found = []
    if row.verdict and (why := verdict_allowed(row.scale, row.ours, published, datasets)):
        found.append(
            f"a verdict from `{row.record}` ({row.scale} scale, {row.ours}, {PROTOCOL_NAMES[row.ours.protocol]}): {why}"
        )
    if row.gap and not comparable(row.ours, published, datasets):
        found.append(f"a gap between {stand_in(row.ours, published, datasets)} and the published {published}")
    if row.ours.protocol != published.protocol:
        found.append(
            f"a headline at {PROTOCOL_NAMES[row.ours.protocol]} where the paper reports "
            f"{PROTOCOL_NAMES[published.protocol]}"
        )
    if not row.vectors.strip():
        found.append("no word vectors named")
    return found
