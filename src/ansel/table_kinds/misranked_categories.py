"""Tables of kind misranked_categories (MTAS's Table 7): the categories of a random draw of the
questions a model ranks wrongly (``ansel.report.misranked_categories``)."""

from __future__ import annotations

from pathlib import Path

from ansel import targets as T
from ansel.specs import TableSpec
from ansel.table_kinds import table_kind
from ansel.table_kinds.base import TableKind


@table_kind("misranked_categories")
class MisrankedCategories(TableKind):
    # published_results.csv: the questions per category

    def models(self, table: TableSpec) -> list[str]:
        return [table.model]

    def runs(self, config: dict, table: TableSpec) -> list[T.Run]:
        """Every seed of the model."""
        return T.runs(config, table.run_dataset, T.Variant(table.model))

    def files(self, config: dict, table: TableSpec) -> list[str]:
        """The processed dataset and every seed's run.trec."""
        return [T.processed_dir(table.run_dataset)] + [f"{r.dir}/run.trec" for r in self.runs(config, table)]

    def render(self, config: dict, table: TableSpec, published: Path, notes: list[str], prefix: Path) -> None:
        from ansel.report.misranked_categories import render_misranked  # pandas: in a table job only

        render_misranked(table, self.runs(config, table), notes, prefix)
