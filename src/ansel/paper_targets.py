"""What the papers ask for: each spec's tables and figures (through their kinds, ``ansel.table_kinds``
and ``ansel.figure_kinds``), as runs and output files (DESIGN.md, principles 5 and 10).

The Snakefile, the CLI and the tests derive every target from the paper specs through these
functions, so adding a row to a spec adds its runs. The runs and their files are ``ansel.targets``'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from ansel.config import ConfigError, load, load_paper, papers_dir, preset_names, root, typo_of
from ansel.figure_kinds import kind_of as figure_kind_of
from ansel.figure_kinds import where as figure_where
from ansel.published import check_read
from ansel.specs import NoSuchItem, TableSpec, figure_spec, table_spec
from ansel.table_kinds import kind_of, spec_table
from ansel.targets import PUBLISHED_RESULTS, Run, benchmark_file

TABLE_EXTENSIONS = ("csv", "md", "tex", "html", "json")
FIGURE_EXTENSIONS = ("png", "pdf")


def spec_figure(config: dict, paper: str, figure_id: str) -> dict:
    """A figure's spec (``ansel.specs.figure_spec``: ``paper`` set, by which a preset's
    ``papers.<paper>.sweeps`` is looked up, and its dataset resolved), its kind's checks passed."""
    figures = load_paper(paper).get("figures", [])
    for fig in figures:
        if fig["id"] == figure_id:
            spec = figure_spec(config, paper, fig)
            figure_kind_of(spec).check(spec)
            return spec
    raise NoSuchItem(f"papers.{paper}: spec has no figure {figure_id!r} ({', '.join(f['id'] for f in figures)})")


def check_built(config: dict, kind: str, paper: str, item_id: str) -> None:
    """Refuse a table or figure (``kind``) the preset does not build, naming what it builds of the
    paper and the presets that do: asked for alone, it would plan runs and downloads the preset
    never makes (data it cannot fetch), as a run outside the preset is refused."""
    if item_id in _built_ids(config, kind, paper):
        return
    others = [p for p in preset_names() if p != config["preset"] and item_id in _built_ids(load(preset=p), kind, paper)]
    raise ConfigError(
        f"{kind} {paper}/{item_id}: not a {kind} the preset {config['preset']!r} builds "
        f"(its {kind}s of {paper}: {', '.join(_built_ids(config, kind, paper)) or 'none'}); "
        + (f"--config preset={' or preset='.join(others)} builds it" if others else "no preset builds it")
    )


def _built_ids(config: dict, kind: str, paper: str) -> list[str]:
    """The ids of the tables or figures (``kind``) the preset builds of a paper (``paper_items``)."""
    if paper not in config.get("papers", {}):
        return []
    key = f"{kind}s"
    return config["papers"][paper].get(key, [item["id"] for item in load_paper(paper).get(key, [])])


def paper_items(config: dict, paper: str) -> tuple[list[TableSpec], list[dict]]:
    """The specs of the tables and figures the preset asks of a paper; a paper without a
    ``tables`` (``figures``) list asks for all of its spec's."""
    spec, wanted = load_paper(paper), config["papers"][paper]
    tables = [spec_table(config, paper, t) for t in wanted.get("tables", [t["id"] for t in spec.get("tables", [])])]
    figures = [spec_figure(config, paper, f) for f in wanted.get("figures", [f["id"] for f in spec.get("figures", [])])]
    _check_models(config, tables, figures)
    return tables, figures


def _named_models(config: dict, tables: list[TableSpec], figures: list[dict]) -> list[tuple[str, str]]:
    """(where, model) of every model the tables' rows, the tables and the figures name."""
    named = [(f"{t.where}: row {r.label!r}", m) for t in tables for r in t.rows for m in r.run_models]
    named += [(t.where, m) for t in tables for m in kind_of(t).models(t)]
    return named + [(figure_where(f), m) for f in figures for m in figure_kind_of(f).models(config, f)]


def _check_models(config: dict, tables: list[TableSpec], figures: list[dict]) -> None:
    """Every model a table or figure names is configured: refused naming the spec file, the item and
    the row, not later by the first run's config."""
    for where, model in _named_models(config, tables, figures):
        if model not in config["models"]:
            raise ConfigError(
                f"{where}: model {model!r} is not configured{typo_of(model, config['models'])}; "
                "the models are the keys of params.yaml's models"
            )


def unused_model_overrides(config: dict, overrides: dict, origin: Callable[..., str]) -> list[str]:
    """A warning for each model ``overrides`` (``--config``, ``--configfile``; ``origin`` names which) sets
    that no table or figure of the preset names: its settings reach no job, so the command would change
    nothing without saying so."""
    used = {m for paper in config["papers"] for _, m in _named_models(config, *paper_items(config, paper))}
    return [
        f"warning: {origin(('models', model))}: models.{model}: no table or figure of the preset "
        f"{config['preset']!r} runs {model!r}, so this override changes nothing"
        for model in sorted(set(overrides.get("models") or {}) - used)
    ]


def items_by_id(config: dict, paper: str) -> tuple[dict[str, TableSpec], dict[str, dict]]:
    """``paper_items`` by id."""
    tables, figures = paper_items(config, paper)
    return {t.id: t for t in tables}, {f["id"]: f for f in figures}


def paper_outputs(config: dict, papers: list[str] | None = None) -> list[str]:
    """The tables' and figures' files of the papers (default: every paper the preset asks for)."""
    out = []
    for paper in papers or config["papers"]:
        tables, figures = paper_items(config, paper)
        out += [f"results/tables/{paper}/{t.id}.{ext}" for t in tables for ext in TABLE_EXTENSIONS]
        out += [f"figures/{paper}/{f['id']}.{ext}" for f in figures for ext in FIGURE_EXTENSIONS]
    return out


def paper_inputs(config: dict) -> list[str]:
    """Every file the preset's tables and figures read (run files, statistics, processed data, step times)."""
    return sorted(_gathered(config, lambda t: _table_reads(config, t), lambda f: figure_kind_of(f).inputs(config, f)))


def _table_reads(config: dict, table: TableSpec) -> list[str]:
    """A table job's inputs (``TableKind.inputs``) and its step-times file where a column is timed."""
    timed = kind_of(table).benchmark_configs(config, table)[0] is not None
    return [*kind_of(table).inputs(config, table), *[benchmark_file(table.paper, table.id)] * timed]


def paper_runs(config: dict) -> list[Run]:
    """Every run the preset's tables and figures read."""
    return sorted(_gathered(config, lambda t: kind_of(t).runs(config, t), lambda f: figure_kind_of(f).runs(config, f)))


def _gathered(config: dict, of_table: Callable[[TableSpec], Iterable], of_figure: Callable[[dict], Iterable]) -> set:
    """The union of ``of_table`` over the preset's tables and ``of_figure`` over its figures."""
    found: set = set()
    for paper in config["papers"]:
        tables, figures = paper_items(config, paper)
        found.update(x for t in tables for x in of_table(t))
        found.update(x for f in figures for x in of_figure(f))
    return found


def published_keys(config: dict, paper: str) -> set[tuple]:
    """The keys of published_results.csv that the tables and figures of a paper's spec look up (every
    item of the spec: a preset that builds fewer must not refuse the rows the others read)."""
    spec = load_paper(paper)
    keys: set[tuple] = set()
    for t in spec.get("tables", []):
        table = table_spec(config, paper, t["id"])
        keys |= kind_of(table).published_keys(table)
    for fig in spec.get("figures", []):
        f = figure_spec(config, paper, fig)
        keys |= figure_kind_of(f).published_keys(config, f)
    return keys


def check_published(config: dict, papers: Iterable[str], path: Path | None = None) -> None:
    """Every row of published_results.csv (``path``, default the checkout's) of one of ``papers`` is looked
    up by a table or figure of its spec, and none names a paper without a spec: a misspelt label matches
    no cell, whose published value would silently show "—" (``ansel.published.check_read`` names the
    line and the nearest label)."""
    papers = list(papers)
    specs = [p.stem for p in papers_dir().glob("*.yaml")]
    keys = {k for p in papers for k in published_keys(config, p)}
    check_read(path or root() / PUBLISHED_RESULTS, keys, papers, specs)
