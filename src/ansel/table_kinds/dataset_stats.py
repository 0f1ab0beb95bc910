"""Tables of kind dataset_stats: our canonical datasets' statistics beside the papers'
(``ansel.report.dataset_stats``); they read no run."""

from __future__ import annotations

from pathlib import Path

from ansel import targets as T
from ansel.specs import TableSpec
from ansel.table_kinds import table_kind
from ansel.table_kinds.base import TableKind


@table_kind("dataset_stats")
class DatasetStats(TableKind):
    published = "workflow/papers/dataset_stats_published.csv"

    def datasets(self, table: TableSpec) -> set[str]:
        return {row.dataset for row in table.rows if row.dataset}

    def models(self, table: TableSpec) -> list[str]:
        return []

    def runs(self, config: dict, table: TableSpec) -> list[T.Run]:
        return []

    def files(self, config: dict, table: TableSpec) -> list[str]:
        """Its datasets' statistics (rule dataset_stats)."""
        return sorted({T.stats_file(row.run_dataset) for row in table.rows if row.run_dataset})

    def job_config(self, config: dict, papers: dict, table: TableSpec) -> dict:
        """With every dataset's splits: what a line of the published file is checked against (a paper's
        split name may be another dataset's: MTAS's InsuranceQA "test")."""
        splits = sorted({s for ds in config["datasets"].values() for s in ds["splits"]})
        return {**super().job_config(config, papers, table), "splits": splits}

    def render(self, config: dict, table: TableSpec, published: Path, notes: list[str], prefix: Path) -> None:
        from ansel.report import dataset_stats as S  # pandas: in a table job, not while the DAG is built
        from ansel.report.tables import render as render_cells

        cells = S.aggregate_stats(
            table, S.published_stats(published, [*config["datasets"], *config["dataset_alias"]], config["splits"])
        )
        render_cells(cells, table, notes + [S.sources_note(table)], prefix, S.LEGEND)
