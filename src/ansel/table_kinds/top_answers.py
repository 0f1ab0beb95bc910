"""Tables of kind top_answers (the aMV-LSTM paper's Table 4): one question's answers as each model
ranks them (``ansel.report.top_answers``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ansel import targets as T
from ansel.specs import TableSpec
from ansel.table_kinds import table_kind
from ansel.table_kinds.base import TableKind


@table_kind("top_answers")
class TopAnswers(TableKind):
    # published_results.csv: the rank of the correct answer (metric correct_rank)

    def models(self, table: TableSpec) -> list[str]:
        """The ``reference`` model, then the others."""
        return list(dict.fromkeys([table.reference, *table.models]))

    def runs(self, config: dict, table: TableSpec) -> list[T.Run]:
        """Each model's at the table's seed, at every point of its lr grid; where the grid has several
        points, every seed's (their dev metrics choose the point, as in the metrics tables)."""
        ds, models = table.run_dataset, self.models(table)
        seed = T.spec_seed(config, table.seed, table.id, models)
        found: set[T.Run] = set()
        for model in models:
            points = T.grid_points(config, model)
            found.update(
                r for _, v in points for r in (T.runs(config, ds, v) if len(points) > 1 else [T.Run(ds, v, seed)])
            )
        return sorted(found)

    def files(self, config: dict, table: TableSpec) -> list[str]:
        """The processed dataset and the runs' run.trec at the table's seed (metrics.json where an lr
        grid is chosen on dev)."""
        seed = T.spec_seed(config, table.seed, table.id, self.models(table))
        files = [T.processed_dir(table.run_dataset)]
        for r in self.runs(config, table):
            files += [f"{r.dir}/metrics.json"] * (len(T.grid_points(config, r.variant.model)) > 1)
            files += [f"{r.dir}/run.trec"] * (r.seed == seed)
        return files

    def published_key(self, table: TableSpec, model: str) -> tuple:
        """The key of a model's published rank: its label's row, metric correct_rank."""
        return (
            table.paper,
            table.id,
            table.published_dataset,
            table.split,
            table.labels.get(model, model),
            "correct_rank",
        )

    def published_keys(self, table: TableSpec) -> set[tuple]:
        return {self.published_key(table, m) for m in self.models(table)}

    def job_config(self, config: dict, papers: dict, table: TableSpec) -> dict:
        """With the preset's question, where it names another (smoke: one of the synthetic corpus)."""
        questions = config["papers"][table.paper].get("questions", {})
        return {**super().job_config(config, papers, table), "papers": {table.paper: {"questions": questions}}}

    def render(self, config: dict, table: TableSpec, published: Path, notes: list[str], prefix: Path) -> None:
        from ansel.report.tables import published_values  # pandas: in a table job, not while the DAG is built
        from ansel.report.top_answers import render_top_answers

        values = published_values(published)
        question = config.get("papers", {}).get(table.paper, {}).get("questions", {}).get(table.id, table.question)
        render_top_answers(
            config,
            replace(table, question=question),
            self.models(table),
            {m: values.get(self.published_key(table, m)) for m in self.models(table)},
            notes,
            prefix,
        )
