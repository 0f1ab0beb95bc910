"""One table job: the cells of a spec table, its notes, and the rendered files.

The job's config (``--config``) is the slice of the resolved config the table depends on, plus
``paper_settings``: params.yaml as written (``preset: full``) for the same models and datasets,
which the notes compare the runs against. Nothing here reads params.yaml.
"""

from __future__ import annotations

from pathlib import Path

from ansel.report import dataset_stats as S
from ansel.report.context import context_notes
from ansel.report.deviations import table_setting_notes
from ansel.report.expected import expected_notes
from ansel.report.misranked_categories import render_misranked
from ansel.report.provenance import provenance_note, table_provenance
from ansel.report.significance import annotate
from ansel.report.tables import aggregate, benchmark, grid_notes, protocol_notes, published_lookup, render
from ansel.report.top_answers import render_top_answers
from ansel.report.vector_variants import render_vector_variants
from ansel.targets import seed_count, spec_table, table_datasets, table_kind, table_models


def build_table(config: dict, paper: str, table_id: str, published: Path, out_prefix: Path) -> None:
    table = spec_table(config, paper, table_id)
    kind = table_kind(table)
    aliases = {d: config["dataset_alias"][d] for d in table_datasets(table) if d in config.get("dataset_alias", {})}
    seeded = {**table, "rows": [r for r in table.get("rows", []) if not r.get("context")]}  # context rows: 1 run
    n_seeds = seed_count(config, table_models(seeded)) if kind == "metrics" else ""
    notes = [
        f"preset {config.get('preset', 'full')}"
        + (f"; {n_seeds} seed{'s' * (n_seeds != '1')} per cell" if kind == "metrics" else "")
    ]
    if aliases:
        notes.append(
            "datasets replaced by the preset (ours only; published values are the paper's): "
            + ", ".join(f"{k} → {v}" for k, v in sorted(aliases.items()))
        )
    if kind == "dataset_stats":
        cells = S.aggregate_stats(config, paper, table, S.published_stats(published))
        render(cells, table, notes + [S.sources_note(paper, table)], out_prefix, S.LEGEND)
        return
    if kind == "top_answers":  # a preset may name another question (smoke: one of the synthetic corpus)
        question = config.get("papers", {}).get(paper, {}).get("questions", {}).get(table_id, table["question"])
        render_top_answers(
            config, {**table, "question": question}, published_lookup(published, paper, table_id), notes, out_prefix
        )
        return
    if kind == "misranked_categories":
        render_misranked(config, table, notes, out_prefix)
        return
    if kind == "vector_variants":
        render_vector_variants(config, table, notes, out_prefix)
        return
    cells = aggregate(config, paper, table, published_lookup(published, paper, table.get("published_table", table_id)))
    notes += (
        grid_notes(config, table)
        + protocol_notes(table, benchmark(paper, table))
        + context_notes(config, table)
        + expected_notes(config, table)
        + table_setting_notes(config, table, config["paper_settings"])
    )
    cells, significance_notes, significance_json = annotate(config, table, cells)  # baseline and claims
    provenance = table_provenance(config, table)
    render(
        cells,
        table,
        notes + significance_notes + [provenance_note(list(provenance.values()))],
        out_prefix,
        extra_json=significance_json,
        provenance=provenance,
        show_n="-" in n_seeds,
    )
