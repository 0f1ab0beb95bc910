"""What the papers ask for, as run directories and output files (DESIGN.md, principle 5).

The Snakefile, the CLI and the tests derive every target from the paper specs through these
functions, so adding a row to a spec adds its runs.
"""
from __future__ import annotations

from ansel.config import dataset_name, load_paper


def seeds(config: dict) -> list[int]:
    return list(range(1, int(config["seeds"]) + 1))


def run_dir(dataset: str, model: str, seed: int) -> str:
    return f"results/runs/{dataset}/{model}/seed{seed}"


def spec_table(config: dict, paper: str, table_id: str) -> dict:
    for table in load_paper(paper).get("tables", []):
        if table["id"] == table_id:
            return table
    raise KeyError(f"papers.{paper}: spec has no table {table_id!r}")


def spec_figure(paper: str, figure_id: str) -> dict:
    for fig in load_paper(paper).get("figures", []):
        if fig["id"] == figure_id:
            return fig
    raise KeyError(f"papers.{paper}: spec has no figure {figure_id!r}")


def table_cells(config: dict, table: dict) -> list[tuple[dict, dict, str]]:
    """(row, column, resolved dataset) for every cell that is run (rows with a model)."""
    return [(row, col, dataset_name(config, col["dataset"]))
            for row in table["rows"] if row.get("model") for col in table["columns"]]


def table_runs(config: dict, table: dict) -> list[str]:
    dirs = {run_dir(ds, row["model"], s) for row, _, ds in table_cells(config, table) for s in seeds(config)}
    return sorted(dirs)


def figure_runs(config: dict, figure: dict) -> list[str]:
    models = figure.get("models", [])
    dirs = {run_dir(dataset_name(config, figure["dataset"]), m, s) for m in models for s in seeds(config)}
    return sorted(dirs)


def paper_outputs(config: dict) -> list[str]:
    out = []
    for paper, wanted in config["papers"].items():
        out += [f"results/tables/{paper}/{t}.{ext}" for t in wanted.get("tables", []) for ext in ("csv", "md", "tex")]
        out += [f"figures/{paper}/{f}.{ext}" for f in wanted.get("figures", []) for ext in ("png", "pdf")]
    return out
