"""One table job: the cells of a spec table, its notes, and the rendered files.

The job's config (``--config``) is the slice of the resolved config the table depends on, plus
``paper_settings``: params.yaml as written (``preset: full``) for the same models and datasets,
which the notes compare the runs against. Nothing here reads params.yaml.
"""
from __future__ import annotations

from pathlib import Path

from ansel.report import dataset_stats as S
from ansel.report.deviations import table_setting_notes
from ansel.report.tables import aggregate, grid_notes, published_lookup, render
from ansel.targets import seed_count, spec_table, table_kind


def build_table(config: dict, paper: str, table_id: str, published: Path, out_prefix: Path) -> None:
    table = spec_table(config, paper, table_id)
    stats = table_kind(table) == "dataset_stats"
    datasets = {r["dataset"] for r in table["rows"]} if stats else {c["dataset"] for c in table["columns"]}
    aliases = {d: config["dataset_alias"][d] for d in datasets if d in config.get("dataset_alias", {})}
    models = [r["model"] for r in table["rows"] if r.get("model")]
    notes = [f"preset {config.get('preset', 'full')}" + ("" if stats else f"; {seed_count(config, models)} seeds")]
    if aliases:
        notes.append("datasets replaced by the preset (ours only; published values are the paper's): "
                     + ", ".join(f"{k} → {v}" for k, v in sorted(aliases.items())))
    if stats:
        cells = S.aggregate_stats(config, paper, table, S.published_stats(published))
        render(cells, table, notes + [S.sources_note(paper, table)], out_prefix, S.LEGEND)
        return
    cells = aggregate(config, paper, table, published_lookup(published, paper, table_id))
    notes += grid_notes(config, table) + table_setting_notes(config, table, config["paper_settings"])
    render(cells, table, notes, out_prefix)
