"""What a table's runs changed from the papers' settings, for the table's notes.

The papers' settings are params.yaml as written (``preset: full``); what a run used is its
``config.json``. Listing the difference key by key makes every preset deviation (fewer epochs,
negatives, filters ...) visible next to the numbers it produced, with no hand-kept list to drift.
"""

from __future__ import annotations

import json
from pathlib import Path

from ansel.config import model_config, run_config
from ansel.models.registry import is_trained
from ansel.report.tables import grid_choice
from ansel.specs import TableSpec
from ansel.targets import runs

# which run it is, not how it was trained; and the vocabulary file, a path derived from the dataset and
# the `embeddings` (a deviation of those is one already; the table's settings carry no embeddings block)
IDENTITY = {"dataset", "model", "seed", "vocab"}


def flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in d.items():
        if isinstance(value, dict) and value:
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def differences(paper: dict, used: dict) -> list[str]:
    """``key paper → used`` for every setting that differs (— where one side lacks the key)."""
    p, u = flatten(paper), flatten(used)
    return [
        f"{k} {p.get(k, '—')} → {u.get(k, '—')}"
        for k in sorted(p.keys() | u.keys())
        if k not in IDENTITY and p.get(k) != u.get(k)
    ]


Cell = tuple[str, str | None]  # (row label, dataset: None when the table has one dataset)


def who(cells: list[Cell], total: int) -> str:
    """The rows a note applies to: "every row", or each label once with the datasets it applies on,
    labels sharing the same datasets listed together ("A, B on wikiqa, trecqa and C on trecqa")."""
    if len(cells) == total:
        return "every row"
    datasets: dict[str, list[str | None]] = {}
    for label, dataset in cells:
        datasets.setdefault(label, []).append(dataset)
    groups: dict[tuple, list[str]] = {}
    for label, ds in datasets.items():
        groups.setdefault(tuple(ds), []).append(label)
    return " and ".join(
        ", ".join(labels) + ("" if ds == (None,) else f" on {', '.join(ds)}") for ds, labels in groups.items()
    )


def deviation_notes(rows: list[tuple[Cell, dict, dict]]) -> list[str]:
    """Notes for rows given as ((label, dataset), paper run config, used run config); rows
    that changed the same settings are listed together ("every row" when all did)."""
    by_diff: dict[tuple[str, ...], list[Cell]] = {}
    for cell, paper, used in rows:
        diff = tuple(differences(paper, used))
        if diff:
            by_diff.setdefault(diff, []).append(cell)
    if not by_diff:
        return ["Runs use the paper's settings (params.yaml) unchanged."]
    return [
        "Deviations from the paper's settings (params.yaml → this preset): "
        + "; ".join(f"{who(cells, len(rows))}: {', '.join(diff)}" for diff, cells in by_diff.items())
    ]


def embeddings_note(rows: list[tuple[Cell, dict]]) -> str:
    """Which word vectors each row's runs started from ((label, dataset), used run config)."""
    by_kind: dict[str, list[Cell]] = {}
    for cell, used in rows:
        kind = used.get("embeddings")
        if not is_trained(used["arch"]):
            name = "none (no parameters)"
        elif kind:
            name = f"{kind}-{used['hparams'].get('embedding_dim')}"
        else:
            name = "random initialisation"
        if kind == "word2vec":
            name += " (gensim, trained on the dataset's training split)"
        by_kind.setdefault(name, []).append(cell)
    return "Word embeddings: " + "; ".join(f"{k}: {who(v, len(rows))}" for k, v in by_kind.items())


def table_setting_notes(config: dict, table: TableSpec, papers_config: dict) -> list[str]:
    """Deviation and embeddings notes for a table of runs, from each (row, dataset)'s first seed
    (context rows left out).

    ``papers_config`` is params.yaml without a preset (``ansel.config.load(preset="full")``).
    """
    cells = {
        (c.row.label, c.model, c.column.dataset, c.dataset) for c in table.cells if not c.row.context
    }  # a lexical context row trains nothing: no settings to compare
    several = len({c[2] for c in cells}) > 1
    rows, used_by_label = [], []
    for label, model, dataset, resolved in sorted(cells, key=lambda c: (c[2], c[0])):
        _, shown, _ = grid_choice(config, model, resolved)  # the lr-grid point the table shows
        path = Path(runs(config, resolved, shown)[0].dir) / "config.json"
        used = json.loads(path.read_text())
        name = (label, dataset if several else None)
        paper = run_config(papers_config, dataset, model, used["seed"])
        if used["train"].get("lr") in model_config(papers_config, model)["train"].get("lr_grid", []):
            paper["train"]["lr"] = used["train"]["lr"]  # a point of the paper's own grid (see the grid note)
        rows.append((name, paper, used))
        used_by_label.append((name, used))
    return deviation_notes(rows) + [embeddings_note(used_by_label)] if rows else []
