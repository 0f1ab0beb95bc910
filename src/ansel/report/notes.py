"""The notes a metrics table is headed by, after its preset's and its lr grids': what its context rows
are (``context: true``: not the paper's rows; their published values are other sources'), what its
computed rows are (``expected``: ``ansel.report.expected``), and what its runs changed from the
papers' settings.

The papers' settings are params.yaml as written (``preset: full``), resolved into each cell's run
config when the DAG is built (``Metrics.job_config``: the job's ``paper_settings``); what a run used
is its ``config.json``. Listing the difference key by key makes every preset deviation (fewer epochs,
negatives, filters ...) visible next to the numbers it produced, with no hand-kept list to drift.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from ansel.models.registry import is_trained
from ansel.report.expected import EXPECTED, pools
from ansel.report.tables import context_results, eval_candidates, grid_choice
from ansel.specs import Row, TableSpec
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


def table_setting_notes(config: dict, table: TableSpec) -> list[str]:
    """Deviation and embeddings notes for a table of runs, from each (row, dataset)'s first seed
    (context rows left out), against the config's ``paper_settings`` (``Metrics.job_config``)."""
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
        settings = config["paper_settings"]  # a cell's run config in two parts (``Metrics.job_config``)
        paper = copy.deepcopy({**settings["models"][model], **settings["datasets"][dataset]})
        if used["train"].get("lr") in settings["lr_grids"][model]:
            paper["train"]["lr"] = used["train"]["lr"]  # a point of the paper's own grid (see the grid note)
        rows.append((name, paper, used))
        used_by_label.append((name, used))
    return deviation_notes(rows) + [embeddings_note(used_by_label)] if rows else []


def context_notes(config: dict, table: TableSpec) -> list[str]:
    """What the table's context rows are and where their published values come from: the untrained
    (lexical) rows, and rows trained here that the paper does not report (another source's setting)."""
    rows = [row for row in table.rows if row.context]
    if not rows:
        return []
    results = context_results()
    results = results[results.dataset.isin({c.published_dataset for c in table.columns})]

    def named(group: list[Row]) -> tuple[str, str]:
        sources = [
            f"{row.label}: {'; '.join(dict.fromkeys(results[results.model == row.model].source))}"
            for row in group
            if (results.model == row.model).any()
        ]
        return ", ".join(row.label for row in group), (": " + " | ".join(sources) if sources else "")

    untrained = [row for row in rows if not is_trained(config["models"][row.model]["arch"])]
    trained = [row for row in rows if row not in untrained]
    notes = []
    if untrained:
        labels, sources = named(untrained)
        notes.append(
            f"Context rows ({labels}): deterministic lexical baselines computed by the pipeline from the "
            "canonical tokens (ansel.evaluation.lexical; one run), not the paper's; their published values "
            f"are other papers' (workflow/papers/context_results.csv){sources}."
        )
    if trained:
        labels, sources = named(trained)
        notes.append(
            f"Context rows trained here ({labels}): not the paper's rows, trained by the pipeline in "
            "another source's setting (params.yaml says which), so the deviations below leave them out; "
            f"their published values are that source's (workflow/papers/context_results.csv){sources}."
        )
    return notes


def expected_notes(config: dict, table: TableSpec) -> list[str]:
    """What each computed row is, and the pools it was computed from (questions, candidates and
    positives per question), per column dataset and split."""
    rows = [row for row in table.rows if row.expected]
    if not rows:
        return []
    pools_seen = []
    for resolved, split in dict.fromkeys((c.run_dataset, c.split) for c in table.columns):
        cands, no_positive = eval_candidates(config, resolved, split)
        q = pools(cands)
        scored = q if no_positive == "zero" else q[q.k > 0]
        shapes = scored.groupby(["n", "k"]).size().sort_values(ascending=False, kind="stable")
        listed = ", ".join(
            f"{c} with {n} candidate{'s' * (n != 1)} / {k} positive{'s' * (k != 1)}"
            for (n, k), c in shapes.head(4).items()
        )
        more = f", {shapes.iloc[4:].sum()} of {len(shapes) - 4} other shapes" if len(shapes) > 4 else ""
        pools_seen.append(f"{resolved} {split}: {len(scored)} questions scored ({listed}{more})")
    return [
        f"{row.label} (ours) is computed, not run: {EXPECTED[str(row.expected)]} (P@1 = k/n; MRR = "
        "E[1/rank of the first positive] = sum_r (1/r) C(n-r, k-1)/C(n, k) for n candidates, k positives; "
        "ansel.report.expected), averaged over the questions the runs are scored on; " + "; ".join(pools_seen)
        for row in rows
    ]
