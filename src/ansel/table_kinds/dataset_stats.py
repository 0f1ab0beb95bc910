"""Tables of kind dataset_stats: our canonical datasets' statistics beside the papers'
(``ansel.report.dataset_stats``); they read no run."""

from __future__ import annotations

from pathlib import Path

from ansel import targets as T
from ansel.config import dataset_name
from ansel.table_kinds import table_kind
from ansel.table_kinds.base import TableKind


@table_kind("dataset_stats")
class DatasetStats(TableKind):
    published = "workflow/papers/dataset_stats_published.csv"

    def datasets(self, table: dict) -> set[str]:
        return {row["dataset"] for row in table["rows"]}

    def models(self, table: dict) -> list[str]:
        return []

    def runs(self, config: dict, table: dict) -> list[T.Run]:
        return []

    def files(self, config: dict, table: dict) -> list[str]:
        """Its datasets' statistics (rule dataset_stats)."""
        return sorted({T.stats_file(dataset_name(config, row["dataset"])) for row in table["rows"]})

    def job_config(self, config: dict, papers: dict, paper: str, table: dict) -> dict:
        """No dataset's settings: there is no run to compare with the paper's."""
        cfg = super().job_config(config, papers, paper, table)
        cfg["paper_settings"]["datasets"] = {}
        return cfg

    def render(self, config: dict, paper: str, table: dict, published: Path, notes: list[str], prefix: Path) -> None:
        from ansel.report import dataset_stats as S  # pandas: in a table job, not while the DAG is built
        from ansel.report.tables import render as render_cells

        cells = S.aggregate_stats(config, paper, table, S.published_stats(published))
        render_cells(cells, table, notes + [S.sources_note(paper, table)], prefix, S.LEGEND)
