"""A record's items: a paper's tables and figures, named ``paper/item`` on the command line and
``{paper: [item, ...]}`` in a record, each with the file its rule writes and the runs it reads."""

from __future__ import annotations

from ansel import paper_targets as P
from ansel import targets as T
from ansel.config import ConfigError
from ansel.figure_kinds import kind_of as figure_kind_of
from ansel.table_kinds import kind_of


def parse_items(items: list[str]) -> dict[str, list[str]]:
    """``["amvlstm/table3", ...]`` as {paper: [item, ...]}."""
    spec: dict[str, list[str]] = {}
    for text in items:
        paper, _, item = text.partition("/")
        if not paper or not item:
            raise ConfigError(f"--items: {text!r}: write paper/item (e.g. amvlstm/table3)")
        spec.setdefault(paper, []).append(item)
    return spec


def item_runs(config: dict, paper: str, item: str) -> tuple[str, list[T.Run]]:
    """A table's or figure's output file (.md / .png) and the runs it reads (none: dataset statistics)."""
    tables, figures = P.paper_items(config, paper)
    for t in tables:
        if t.id == item:
            return f"results/tables/{paper}/{item}.md", kind_of(t).runs(config, t)
    for f in figures:
        if f["id"] == item:
            return f"figures/{paper}/{item}.png", figure_kind_of(f).runs(config, f)
    raise ConfigError(
        f"{paper}: no table or figure {item!r} under preset {config['preset']!r} "
        f"({', '.join([t.id for t in tables] + [f['id'] for f in figures])})"
    )
