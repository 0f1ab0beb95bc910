"""Tables of kind metrics (the default): per row (a model, or a row kept as published) and column
(dataset, split, metric), ours as mean ± std over seeds beside the published value."""

from __future__ import annotations

from pathlib import Path

from ansel import targets as T
from ansel.config import ConfigError, model_config, run_config
from ansel.specs import TableSpec
from ansel.table_kinds import table_kind
from ansel.table_kinds.base import TableKind


@table_kind("metrics")
class Metrics(TableKind):
    metric_grid = True

    def datasets(self, table: TableSpec) -> set[str]:
        return {col.dataset for col in table.columns}

    def models(self, table: TableSpec) -> list[str]:
        return list(dict.fromkeys(m for r in table.rows for m in r.run_models))

    def runs(self, config: dict, table: TableSpec) -> list[T.Run]:
        """Every seed of each cell's model on the column's dataset, at every point of its lr grid."""
        return sorted(
            {
                r
                for cell in table.cells
                for _, v in T.grid_points(config, cell.model)
                for r in T.runs(config, cell.dataset, v)
            }
        )

    def files(self, config: dict, table: TableSpec) -> list[str]:
        """The runs' metrics (dev ones choose the lr), each column's file (``value_file``: a timing, or
        log.csv under ``protocol: last``) and configs (the notes list how they deviate from the paper's
        settings); the context rows' published values; with an ``expected`` row, the columns' processed
        datasets; provenance and the paired tests' files."""
        files: list[str] = []
        found = self.runs(config, table)
        for r in found:
            files += dict.fromkeys(
                [
                    f"{r.dir}/config.json",
                    f"{r.dir}/metrics.json",
                    *(T.value_file(r, c.split, c.metric, c.protocol) for c in table.columns),
                ]
            )
        files += [T.CONTEXT_PUBLISHED] * any(row.context for row in table.rows)
        if any(row.expected for row in table.rows):  # computed from the columns' candidate pools
            files += [T.processed_dir(c.run_dataset) for c in table.columns]
        return list(dict.fromkeys(files + T.provenance_inputs(config, found) + T.significance_inputs(config, table)))

    def published_keys(self, table: TableSpec) -> set[tuple]:
        """Each cell's but a context row's (those are context_results.csv's)."""
        return {
            (table.paper, table.published_table, *col.published_cell(row.label))
            for row in table.rows
            if not row.context
            for col in table.columns
        }

    def check(self, config: dict, table: TableSpec) -> None:
        """The columns name a metric the runs report and a split their dataset evaluates (a timing: the
        training split), before any run trains for a table that could not render."""
        timed = {metric: split for split, metric in T.TIMING_METRICS}
        known = T.REPORTED_METRICS
        for i, col in enumerate(table.columns):
            if col.metric not in known:
                raise ConfigError(
                    f"{table.where}: columns[{i}].metric: {col.metric!r} is not a metric the runs report "
                    f"(known: {', '.join(known)})"
                )
            if col.protocol == "benchmark" and col.metric not in timed:
                raise ConfigError(
                    f"{table.where}: columns[{i}].protocol: benchmark times training steps; "
                    f"metric {col.metric!r} is not a timing ({', '.join(sorted(timed))})"
                )
            if col.metric in timed:
                if col.split != timed[col.metric]:
                    raise ConfigError(
                        f"{table.where}: columns[{i}].split: {col.split!r}: {col.metric} is timed on "
                        f"{timed[col.metric]!r}"
                    )
                continue
            evaluated = config["datasets"][col.run_dataset].get("eval", {}).get("splits")  # a job's config has none
            if evaluated is not None and col.split not in evaluated:
                raise ConfigError(
                    f"{table.where}: columns[{i}].split: {col.split!r} is not evaluated on dataset "
                    f"{col.run_dataset!r} (its eval.splits: {', '.join(evaluated)})"
                )

    def benchmark_configs(self, config: dict, table: TableSpec) -> tuple[str | None, dict[str, dict]]:
        """The ``protocol: benchmark`` column's: the rows' first-seed configs on its dataset (a timing
        depends on neither the seed nor the lr)."""
        columns = [c for c in table.columns if c.protocol == "benchmark"]
        if not columns:
            return None, {}
        datasets = {c.run_dataset for c in columns}
        if len(datasets) > 1:
            raise ConfigError(
                f"table {table.id}: benchmark columns on {', '.join(sorted(datasets))}: one dataset a table"
            )
        dataset = datasets.pop()
        models = dict.fromkeys(cell.model for cell in table.cells if cell.column in columns)
        return dataset, {m: run_config(config, dataset, m, T.seeds(config, T.Variant(m))[0]) for m in models}

    def job_config(self, config: dict, papers: dict, table: TableSpec) -> dict:
        """With the papers' settings the notes compare the runs against (``paper_settings``); with an
        ``expected`` row, the columns' datasets' ``eval`` too: it is computed on the questions the
        runs score."""
        cfg = {**super().job_config(config, papers, table), "paper_settings": paper_settings(papers, table)}
        if any(row.expected for row in table.rows):
            for d in {c.run_dataset for c in table.columns}:
                cfg["datasets"][d] = {**cfg["datasets"][d], "eval": config["datasets"][d].get("eval", {})}
        return cfg

    def seed_count(self, config: dict, table: TableSpec) -> str:
        """How many seeds a cell averages ("2-5" where models differ); context rows run once."""
        return T.seed_count(config, list(dict.fromkeys(m for r in table.rows if not r.context for m in r.run_models)))

    def preset_note(self, config: dict, table: TableSpec) -> str:
        n = self.seed_count(config, table)
        return f"{super().preset_note(config, table)}; {n} seed{'s' * (n != '1')} per cell"

    def render(self, config: dict, table: TableSpec, published: Path, notes: list[str], prefix: Path) -> None:
        # the report's modules load pandas, ranx and matplotlib: in a table job, not while the DAG is built
        from ansel.report.notes import context_notes, expected_notes, table_setting_notes
        from ansel.report.provenance import provenance_note, table_provenance
        from ansel.report.significance import annotate
        from ansel.report.tables import aggregate, benchmark, grid_notes, protocol_notes, published_lookup
        from ansel.report.tables import render as render_cells

        cells = aggregate(config, table, published_lookup(published, table.paper, table.published_table))
        notes = (
            notes
            + grid_notes(config, table)
            + protocol_notes(table, benchmark(table))
            + context_notes(config, table)
            + expected_notes(config, table)
            + table_setting_notes(config, table)
        )
        cells, significance_notes, significance_json = annotate(config, table, cells)  # baseline and claims
        provenance = table_provenance(config, table)
        render_cells(
            cells,
            table,
            notes + significance_notes + [provenance_note(list(provenance.values()))],
            prefix,
            extra_json=significance_json,
            provenance=provenance,
            show_n="-" in self.seed_count(config, table),
        )


# The settings a run's config takes from its dataset (``ansel.config.run_config``); the rest is its
# model's, but for ``dataset`` and ``vocab`` (a path under it), which the notes leave out (its identity).
RUN_DATASET_KEYS = ("max_len_q", "max_len_a", "eval")


def paper_settings(papers: dict, table: TableSpec) -> dict[str, dict]:
    """The run configs of the paper's cells (a context row is not the paper's) under the papers'
    settings (``papers``: params.yaml as written; the spec's datasets), resolved while the DAG is
    built, so that the table job (``ansel.report.notes``) resolves none: ``models``' part of a
    cell's run config and its ``datasets``' (less ``dataset`` and ``vocab``), kept apart so that a
    table of many cells carries each once, and the models' ``lr_grids``."""
    models: dict[str, dict] = {}
    datasets: dict[str, dict] = {}
    lr_grids: dict[str, list] = {}
    for cell in table.cells:
        if cell.row.context:
            continue
        model, dataset = cell.model, cell.column.dataset
        run = run_config(papers, dataset, model, T.seeds(papers, T.Variant(model))[0])
        own = {k: v for k, v in run.items() if k not in (*RUN_DATASET_KEYS, "dataset", "vocab")}
        if models.setdefault(model, own) != own:
            raise ValueError(
                f"models.{model}: its run config depends on the dataset beyond {RUN_DATASET_KEYS}; see run_config"
            )
        datasets[dataset] = {k: run[k] for k in RUN_DATASET_KEYS}
        lr_grids[model] = model_config(papers, model)["train"].get("lr_grid", [])
    return {"models": models, "datasets": datasets, "lr_grids": lr_grids}
