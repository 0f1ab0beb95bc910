"""A paper table's spec as typed objects (DESIGN.md, principle 5): parsed once from
workflow/papers/<paper>.yaml (validated against its schema by ``ansel.config.load_paper``), with
every dataset it names resolved under the preset's aliases, and its cross-references checked (a
row's per-dataset ``models`` name a column's dataset; ``baseline`` and ``claims`` name rows with
runs). The table kinds (``ansel.table_kinds``) and the report read these, never the spec's dict.

A spec's ``dataset`` is the paper's name (what a published value is looked up under, what a
column is headed by); ``run_dataset`` is the dataset the runs use under the preset
(``dataset_alias``: the smoke preset maps every dataset onto a synthetic corpus).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ansel.config import dataset_name, load_paper, papers_dir
from ansel.report.printable import PROTOCOL_SUFFIX
from ansel.settings import ConfigError, InputError


@dataclass(frozen=True)
class Datasets:
    """The preset's datasets and aliases: what a spec's dataset names resolve against."""

    aliases: tuple[tuple[str, str], ...]
    configured: frozenset[str]

    @classmethod
    def of(cls, config: dict) -> Datasets:
        return cls(tuple(sorted(config.get("dataset_alias", {}).items())), frozenset(config.get("datasets", {})))

    def resolve(self, dataset: str) -> str:
        return dataset_name({"dataset_alias": dict(self.aliases), "datasets": self.configured}, dataset)


@dataclass(frozen=True)
class Column:
    """A metrics table's column: (dataset, split, metric) at a protocol, and where its published
    values are (default: the same cell)."""

    dataset: str
    run_dataset: str
    split: str
    metric: str
    protocol: str = "dev"
    published_dataset: str = ""
    published_split: str = ""
    published_metric: str = ""

    @property
    def label(self) -> str:
        """The column's header: dataset, split, metric, and the protocol unless ``dev``."""
        return f"{self.dataset} {self.split} {self.metric}{PROTOCOL_SUFFIX[self.protocol]}"

    def published_cell(self, row_label: str) -> tuple[str, str, str, str]:
        """(dataset, split, row label, metric): where a row's published value in this column is, in its
        table's rows of published_results.csv (``ansel.report.tables.published_lookup``)."""
        return (self.published_dataset, self.published_split, row_label, self.published_metric)


@dataclass(frozen=True)
class Row:
    """A table's row: a model's (``model``, or per column dataset ``models``), a row kept as
    published (no model), a context row or a computed (``expected``) one; a dataset_stats row names
    a ``dataset`` and its ``splits``."""

    label: str
    model: str | None = None
    models: Mapping[str, str | None] = field(default_factory=dict)
    context: bool = False
    expected: str | None = None
    dataset: str | None = None
    run_dataset: str | None = None
    splits: tuple[str, ...] | None = None
    published: Mapping[str, str] = field(default_factory=dict)

    @property
    def run_models(self) -> list[str]:
        """The models the row runs: its ``model`` and its per-dataset ``models``."""
        return [m for m in [self.model, *self.models.values()] if m]

    def model_on(self, col: Column) -> str | None:
        """The model the row runs on a column's dataset: its ``models`` entry for it where there is
        one (null: no model of the row applies there), else its ``model``."""
        return self.models.get(col.dataset, self.model)

    def not_applicable(self, col: Column) -> bool:
        """A cell of a row with runs where none of its models applies: rendered n/a."""
        return self.model_on(col) is None and bool(self.run_models)


class Cell(NamedTuple):
    """A cell that is run: the row, the column and the model the row runs there."""

    row: Row
    column: Column
    model: str

    @property
    def dataset(self) -> str:
        return self.column.run_dataset


@dataclass(frozen=True)
class TableSpec:
    """One table of a paper spec; the fields a kind does not use keep their defaults (the schema
    requires those it uses)."""

    paper: str
    id: str
    kind: str = "metrics"
    caption: str = ""
    notes: tuple[str, ...] = ()
    rows: tuple[Row, ...] = ()
    columns: tuple[Column, ...] = ()
    statistics: tuple[str, ...] = ()  # dataset_stats: its columns
    dataset: str = ""
    run_dataset: str = ""
    split: str = ""
    metric: str = ""
    model: str = ""  # misranked_categories
    models: tuple[str, ...] = ()  # top_answers
    reference: str = ""
    question: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    top: int = 3
    seed: int = 1
    sample: int = 0
    published_dataset: str = ""
    published_table: str = ""
    baseline: str | None = None
    claims: tuple[str, ...] = ()
    alpha: float = 0.05
    test: str = "t"

    @property
    def where(self) -> str:
        return f"{papers_dir() / f'{self.paper}.yaml'}: table {self.id}"

    @property
    def cells(self) -> list[Cell]:
        """Every cell that is run, row by row."""
        return [Cell(row, col, model) for row in self.rows for col in self.columns if (model := row.model_on(col))]

    @property
    def claim_pairs(self) -> dict[str, tuple[str, str]]:
        """{claim: (better, worse) row labels}."""
        return {claim: claim_pair(claim) for claim in self.claims}

    @property
    def compared_pairs(self) -> list[tuple[str, str]]:
        """(row, other) label pairs the paired tests compare: each row with a model against the
        ``baseline``, then each claim's (better, worse) not compared already (either way round)."""
        pairs: dict[frozenset, tuple[str, str]] = {}
        if self.baseline:
            for row in self.rows:
                if row.model and row.label != self.baseline:
                    pairs.setdefault(frozenset((row.label, self.baseline)), (row.label, self.baseline))
        for a, b in self.claim_pairs.values():
            pairs.setdefault(frozenset((a, b)), (a, b))
        return list(pairs.values())


def claim_pair(claim: str) -> tuple[str, str]:
    """(better, worse) row labels of a spec's claim, written as the paper states it: "A > B" (A's
    metric is higher than B's) or "A < B" (lower: ("B", "A"))."""
    for sign, order in ((" > ", 1), (" < ", -1)):
        parts = claim.split(sign)
        if (
            len(parts) == 2
            and all(p.strip() for p in parts)
            and not any(o in claim for o in (" > ", " < ") if o != sign)
        ):
            better, worse = (p.strip() for p in parts[::order])
            return better, worse
    raise ConfigError(f"claim {claim!r}: expected '<row label> > <row label>' or '<row label> < <row label>'")


class NoSuchItem(KeyError, InputError):
    """A table or figure its paper's spec does not have (a KeyError: a lookup that failed); ``ansel``
    prints the message as it is, unquoted."""

    def __str__(self) -> str:
        return str(self.args[0])


def table_spec(config: dict, paper: str, table_id: str) -> TableSpec:
    """A table of a paper's spec, parsed once per spec file and preset's datasets."""
    path = papers_dir() / f"{paper}.yaml"
    mtime = path.stat().st_mtime_ns if path.exists() else 0  # load_paper names a missing spec
    return _table_spec(path, mtime, paper, table_id, Datasets.of(config))


@functools.lru_cache(maxsize=None)
def _table_spec(path: Path, mtime_ns: int, paper: str, table_id: str, datasets: Datasets) -> TableSpec:
    tables = load_paper(paper).get("tables", [])
    for table in tables:
        if table["id"] == table_id:
            return _parse(paper, table, datasets)
    raise NoSuchItem(f"papers.{paper}: spec has no table {table_id!r} ({', '.join(t['id'] for t in tables)})")


def parse_table(config: dict, paper: str, table: dict) -> TableSpec:
    """A table spec given as a dict (what a paper's YAML holds for it), parsed against the config's
    datasets: the tests' tables, written inline."""
    return _parse(paper, table, Datasets.of(config))


def _parse(paper: str, t: dict, datasets: Datasets) -> TableSpec:
    kind = t.get("kind", "metrics")
    # a column is a (dataset, split, metric) mapping, or a statistic's name (dataset_stats: the schema)
    statistics = tuple(c for c in t.get("columns", []) if isinstance(c, str))
    column_specs: list[dict] = [c for c in t.get("columns", []) if isinstance(c, dict)]
    columns = tuple(
        Column(
            c["dataset"],
            datasets.resolve(c["dataset"]),
            c["split"],
            c["metric"],
            c.get("protocol", "dev"),
            c.get("published_dataset", c["dataset"]),
            c.get("published_split", c["split"]),
            c.get("published_metric", c["metric"]),
        )
        for c in column_specs
    )
    rows = tuple(
        Row(
            r["label"],
            r.get("model"),
            r.get("models", {}),
            r.get("context", False),
            r.get("expected"),
            r.get("dataset"),
            datasets.resolve(r["dataset"]) if "dataset" in r else None,
            tuple(r["splits"]) if "splits" in r else None,
            r.get("published", {}),
        )
        for r in t.get("rows", [])
    )
    significance = t.get("significance", {})
    spec = TableSpec(
        paper=paper,
        id=t["id"],
        kind=kind,
        caption=t.get("caption", t["id"]),
        notes=tuple(t.get("notes", [])),
        rows=rows,
        columns=columns,
        statistics=statistics,
        dataset=t.get("dataset", ""),
        run_dataset=datasets.resolve(t["dataset"]) if "dataset" in t else "",
        split=t.get("split", ""),
        metric=t.get("metric", ""),
        model=t.get("model", ""),
        models=tuple(t.get("models", [])),  # a table's own list (top_answers); a row's are its own
        reference=t.get("reference", ""),
        question=t.get("question", ""),
        labels=t.get("labels", {}),
        top=t.get("top", 3),
        seed=t.get("seed", 1),
        sample=t.get("sample", 0),
        published_dataset=t.get("published_dataset", t.get("dataset", "")),
        published_table=t.get("published_table", t["id"]),
        baseline=t.get("baseline"),
        claims=tuple(t.get("claims", [])),
        alpha=significance.get("alpha", 0.05),
        test=significance.get("test", "t"),
    )
    _check_row_models(spec)
    _check_significance_rows(spec)
    return spec


def figure_spec(config: dict, paper: str, figure: dict) -> dict:
    """A figure of a paper's spec, with ``paper`` set and, where it names a dataset, ``run_dataset``:
    the dataset its runs use under the preset's aliases, resolved here once. A figure kind is the
    report's (``ansel.report.figures``' registry): its keys stay the spec's."""
    resolved = {"run_dataset": Datasets.of(config).resolve(figure["dataset"])} if "dataset" in figure else {}
    return {**figure, "paper": paper, **resolved}


def _check_row_models(table: TableSpec) -> None:
    """A row's ``models`` name datasets of the columns: a typo would silently run its ``model``."""
    datasets = {col.dataset for col in table.columns}
    for row in table.rows:
        if unknown := sorted(set(row.models) - datasets):
            raise ConfigError(
                f"table {table.id}: row {row.label!r}: models names {', '.join(unknown)}, "
                f"not a dataset of the table's columns ({', '.join(sorted(datasets))})"
            )


def _check_significance_rows(table: TableSpec) -> None:
    """The rows a table's ``baseline`` and ``claims`` name must be rows of it, with runs: refused
    while the DAG is built, naming the spec file, the table and the label."""
    models = {row.label: row.model for row in table.rows}
    named = [("baseline", table.baseline)] if table.baseline is not None else []
    for claim in table.claims:
        try:
            better, worse = claim_pair(claim)
        except ConfigError as e:
            raise ConfigError(f"{table.where}: {e}") from None
        if better == worse:
            raise ConfigError(f"{table.where}: claim {claim!r} compares a row with itself")
        named += [(f"claim {claim!r}", better), (f"claim {claim!r}", worse)]
    for key, label in named:
        if label not in models:
            raise ConfigError(
                f"{table.where}: {key} names {label!r}, not a row of the table (rows: {', '.join(map(repr, models))})"
            )
        if not models[label]:
            raise ConfigError(
                f"{table.where}: {key} names {label!r}, a row kept as published (no model): it has no runs to test"
            )
