"""One table job: the notes every table starts with, then its kind's rendering (``ansel.table_kinds``).

The job's config (``--config``) is the slice of the resolved config the table depends on
(``TableKind.job_config``). Nothing here reads params.yaml.
"""

from __future__ import annotations

from pathlib import Path

from ansel.specs import TableSpec
from ansel.table_kinds import kind_of


def build_table(config: dict, table: TableSpec, published: Path, out_prefix: Path) -> None:
    """``table`` (``ansel.table_kinds.spec_table``) rendered to out_prefix.{csv,md,tex,html,json}."""
    kind = kind_of(table)
    aliases = {d: config["dataset_alias"][d] for d in kind.datasets(table) if d in config.get("dataset_alias", {})}
    notes = [kind.preset_note(config, table)]
    if aliases:
        notes.append(
            "datasets replaced by the preset (ours only; published values are the paper's): "
            + ", ".join(f"{k} → {v}" for k, v in sorted(aliases.items()))
        )
    kind.render(config, table, published, notes, out_prefix)
