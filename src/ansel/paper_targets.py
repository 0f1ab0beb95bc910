"""What the papers ask for: each spec's tables (through their kinds, ``ansel.table_kinds``) and figures,
as runs and output files (DESIGN.md, principles 5 and 10).

The Snakefile, the CLI and the tests derive every target from the paper specs through these
functions, so adding a row to a spec adds its runs. The runs and their files are ``ansel.targets``'.
"""

from __future__ import annotations

from typing import Callable, Iterable

from ansel.config import ConfigError, load_paper
from ansel.specs import TableSpec, figure_spec, table_spec
from ansel.table_kinds import kind_of, spec_table
from ansel.targets import (
    PUBLISHED_RESULTS,
    Run,
    Variant,
    processed_dir,
    reading_metrics,
    runs,
    spec_seed,
    sweep_models,
    value_file,
    with_run_files,
)

TABLE_EXTENSIONS = ("csv", "md", "tex", "html", "json")
FIGURE_EXTENSIONS = ("png", "pdf")
# What each figure kind reads from a run directory, and whether it reads the processed dataset.
FIGURE_RUN_FILES = {
    "learning_curves": ["log.csv"],
    "accuracy_by_length": ["run.trec"],
    "attention_maps": ["config.json", "model.pt", "run.trec"],
    "sweep": [],  # its metric's file (value_file)
    "accuracy_bars": [],  # its metric's file (value_file)
    "heatmap": [],  # its table's files (TableKind.inputs)
}
FIGURES_READING_DATA = {"accuracy_by_length", "attention_maps"}


def spec_figure(config: dict, paper: str, figure_id: str) -> dict:
    """A figure's spec (``ansel.specs.figure_spec``: ``paper`` set, by which a preset's
    ``papers.<paper>.sweeps`` is looked up, and its dataset resolved)."""
    for fig in load_paper(paper).get("figures", []):
        if fig["id"] == figure_id:
            return figure_spec(config, paper, fig)
    raise KeyError(f"papers.{paper}: spec has no figure {figure_id!r}")


def figure_metrics_runs(config: dict, figure: dict) -> list[Run]:
    """``metrics_runs`` of a figure (a heatmap's: its table's)."""
    if table := heatmap_table(config, figure):
        return kind_of(table).metrics_runs(config, table)
    return reading_metrics(_figure_inputs(config, figure), figure_runs(config, figure))


def figure_models(config: dict, figure: dict) -> list[str]:
    """The params.yaml models a figure reads (a sweep: the base of its derived runs), in spec order."""
    if figure["kind"] == "attention_maps":
        return [figure["model"]]
    if figure["kind"] == "sweep":
        swept = [p["model"] for p in figure["points"]] if "points" in figure else [figure["base_model"]]
        return list(dict.fromkeys([*swept, figure["reference_model"]]))
    if table := heatmap_table(config, figure):
        return kind_of(table).models(table)
    return list(dict.fromkeys([*figure["models"], *filter(None, [figure.get("reference_model")])]))


def figure_runs(config: dict, figure: dict) -> list[Run]:
    """The runs a figure reads, by kind."""
    kind = figure["kind"]
    if kind not in FIGURE_RUN_FILES:
        raise ConfigError(f"figure {figure['id']}: unknown kind {kind!r}; known: {', '.join(FIGURE_RUN_FILES)}")
    if table := heatmap_table(config, figure):
        return kind_of(table).runs(config, table)
    ds = figure["run_dataset"]
    if kind == "attention_maps":
        return [
            Run(ds, Variant(figure["model"]), spec_seed(config, figure.get("seed", 1), figure["id"], [figure["model"]]))
        ]
    if kind == "sweep":
        variants = [v for _, v in sweep_models(config, figure)] + [Variant(figure["reference_model"])]
    else:
        variants = [Variant(m) for m in figure_models(config, figure)]
    return sorted({r for v in variants for r in runs(config, ds, v)})


def heatmap_table(config: dict, figure: dict) -> TableSpec | None:
    """A heatmap's table, whose runs and files it reads (``figure_table``); None for other kinds."""
    return figure_table(config, figure) if figure["kind"] == "heatmap" else None


def figure_table(config: dict, figure: dict) -> TableSpec:
    """The metrics table of its paper whose cells a heatmap figure draws (spec key ``table``)."""
    table = table_spec(config, figure["paper"], figure["table"])
    if not kind_of(table).metric_grid:
        raise ConfigError(
            f"figure {figure['id']}: table {figure['table']!r} is of kind {kind_of(table).name!r}; "
            "a heatmap draws a metrics table"
        )
    return table


def figure_inputs(config: dict, figure: dict) -> list[str]:
    """``_figure_inputs``, with the run file and labels of every metrics.json read (``with_run_files``)."""
    if table := heatmap_table(config, figure):
        return kind_of(table).inputs(config, table)
    return with_run_files(_figure_inputs(config, figure), figure_metrics_runs(config, figure))


def _figure_inputs(config: dict, figure: dict) -> list[str]:
    files = [f"{r.dir}/{name}" for r in figure_runs(config, figure) for name in FIGURE_RUN_FILES[figure["kind"]]]
    if figure["kind"] in ("sweep", "accuracy_bars"):
        splits = figure["splits"] if figure["kind"] == "sweep" else [figure["split"]]
        files += dict.fromkeys(
            value_file(r, split, figure["metric"], figure.get("protocol", "dev"))
            for r in figure_runs(config, figure)
            for split in splits
        )
    if figure["kind"] in FIGURES_READING_DATA:
        files.append(processed_dir(figure["run_dataset"]))
    if "reference_published" in figure or "published_table" in figure:
        files.append(PUBLISHED_RESULTS)
    return files


def paper_items(config: dict, paper: str) -> tuple[list[TableSpec], list[dict]]:
    """The specs of the tables and figures the preset asks of a paper; a paper without a
    ``tables`` (``figures``) list asks for all of its spec's."""
    spec, wanted = load_paper(paper), config["papers"][paper]
    tables = [spec_table(config, paper, t) for t in wanted.get("tables", [t["id"] for t in spec.get("tables", [])])]
    figures = [spec_figure(config, paper, f) for f in wanted.get("figures", [f["id"] for f in spec.get("figures", [])])]
    return tables, figures


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
    """Every file the preset's tables and figures read (run files, statistics, processed data)."""
    return sorted(_gathered(config, lambda t: kind_of(t).inputs(config, t), lambda f: figure_inputs(config, f)))


def paper_runs(config: dict) -> list[Run]:
    """Every run the preset's tables and figures read."""
    return sorted(_gathered(config, lambda t: kind_of(t).runs(config, t), lambda f: figure_runs(config, f)))


def _gathered(config: dict, of_table: Callable[[TableSpec], Iterable], of_figure: Callable[[dict], Iterable]) -> set:
    """The union of ``of_table`` over the preset's tables and ``of_figure`` over its figures."""
    found: set = set()
    for paper in config["papers"]:
        tables, figures = paper_items(config, paper)
        found.update(x for t in tables for x in of_table(t))
        found.update(x for f in figures for x in of_figure(f))
    return found
