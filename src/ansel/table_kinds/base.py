"""The interface of a table kind: what a table's runs are, what its job reads and is given, how it renders."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from ansel import targets as T
from ansel.specs import TableSpec


class TableKind(ABC):
    """One kind of paper table. Methods take the config (the whole one while the DAG is built, a
    table job's slice when it renders) and the table's parsed spec (``ansel.specs``); the instance
    holds no state."""

    name: str  # the spec's ``kind``, set by ``@table_kind``
    published = T.PUBLISHED_RESULTS  # the CSV of the paper's values shown beside ours
    metric_grid = False  # cells = runs' metrics, a row (model) by a column: a heatmap draws it, the plan prices it

    def datasets(self, table: TableSpec) -> set[str]:
        """The datasets the table names (the spec's names, before the preset's aliases): its one ``dataset``."""
        return {table.dataset}

    @abstractmethod
    def models(self, table: TableSpec) -> list[str]:
        """The params.yaml models whose runs the table reads, in spec order."""

    @abstractmethod
    def runs(self, config: dict, table: TableSpec) -> list[T.Run]:
        """Every run the table reads."""

    @abstractmethod
    def files(self, config: dict, table: TableSpec) -> list[str]:
        """The files the table reads, less the run files and labels that check its metrics (``inputs``)."""

    @abstractmethod
    def render(self, config: dict, table: TableSpec, published: Path, notes: list[str], prefix: Path) -> None:
        """prefix.{csv,md,tex,html,json}, the table headed by ``notes``; ``published``: the kind's
        ``published`` file."""

    def published_keys(self, table: TableSpec) -> set[tuple]:
        """The keys (``ansel.published.PUBLISHED_KEY``) of published_results.csv the table looks up: a
        row no table or figure looks up is refused (``ansel.paper_targets.check_published``)."""
        return set()

    def check(self, config: dict, table: TableSpec) -> None:  # noqa: B027 (a kind may check nothing)
        """Refuses, while the DAG is built, a spec the config cannot render (naming file, table and key)."""

    def inputs(self, config: dict, table: TableSpec) -> list[str]:
        """The table job's inputs: ``files``, with the run file and labels of every metrics.json read."""
        return T.with_run_files(self.files(config, table), self.metrics_runs(config, table))

    def metrics_runs(self, config: dict, table: TableSpec) -> list[T.Run]:
        """The runs whose metrics.json the table reads: the ``table`` verb checks each against its run
        file before it renders (``ansel.evaluation.agreement.check_runs``)."""
        return T.reading_metrics(self.files(config, table), self.runs(config, table))

    def benchmark_configs(self, config: dict, table: TableSpec) -> tuple[str | None, dict[str, dict]]:
        """(dataset, {model: run config}) of the training steps the table times; (None, {}): none."""
        return None, {}

    def job_config(self, config: dict, papers: dict, table: TableSpec) -> dict:
        """The slice of the config the table job reads (so only it triggers re-rendering): the report's
        and the models' configs (a row with an lr grid shows its point best on dev); ``papers``:
        params.yaml as written, for a kind whose notes compare the runs against the papers' settings."""
        return {**T.report_config(config), **T.models_config(config, sorted(self.models(table)))}

    def preset_note(self, config: dict, table: TableSpec) -> str:
        """The table's first note: the preset it was made under."""
        return f"preset {config.get('preset', 'full')}"
