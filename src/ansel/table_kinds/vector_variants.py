"""Tables of kind vector_variants: one model trained from several word-vector variants, with the
vectors' measurements and the first epoch's collapse (``ansel.report.vector_variants``)."""

from __future__ import annotations

from pathlib import Path

from ansel import targets as T
from ansel.config import embeddings_file
from ansel.specs import TableSpec
from ansel.table_kinds import table_kind
from ansel.table_kinds.base import TableKind


@table_kind("vector_variants")
class VectorVariants(TableKind):
    # published_results.csv has none of its values: the paper has no such table

    def models(self, table: TableSpec) -> list[str]:
        return [r.model for r in table.rows if r.model]

    def runs(self, config: dict, table: TableSpec) -> list[T.Run]:
        return sorted(r for m in self.models(table) for r in T.runs(config, table.run_dataset, T.Variant(m)))

    def files(self, config: dict, table: TableSpec) -> list[str]:
        """Each run's curve and metrics, and what its vectors measured."""
        found = self.runs(config, table)
        vectors = [str(Path(f).with_suffix(".json")) for r in found if (f := embeddings_file(r.config(config)))]
        return list(
            dict.fromkeys(
                [T.processed_dir(table.run_dataset)]  # vocab.json
                + [f"{r.dir}/{name}" for r in found for name in ("config.json", "log.csv", "metrics.json")]
                + vectors
                + T.provenance_inputs(config, found)
            )
        )

    def metrics_runs(self, config: dict, table: TableSpec) -> list[T.Run]:
        """Every run: its other inputs need whole run configs, which a table job's config does not carry."""
        return self.runs(config, table)

    def render(self, config: dict, table: TableSpec, published: Path, notes: list[str], prefix: Path) -> None:
        from ansel.report.vector_variants import render_vector_variants  # pandas: in a table job only

        render_vector_variants(config, table, notes, prefix)
