"""A metrics table's paired significance tests: every row with a model against the spec's
``baseline`` row, and the paper's orderings (``claims: ["A > B", ...]``), over the questions of each
tested column's split (``ansel.targets.significance_columns``; the tests:
``ansel.report.paired_tests``).

- pooled: each question's value averaged over a row's seeds, then one paired test over questions;
- per seed: seed k of one row against seed k of the other (the seeds both have).
Holm's correction runs over the table's comparisons (every compared pair × tested column), once for
the pooled tests and once per seed. The spec's ``significance.test`` (default the t-test) and
``alpha`` (default 0.05) decide the marks -- ▲ (▼) where a row is better (worse) than the baseline,
pooled, Holm-adjusted p < alpha -- and each claim's sentence per tested column: holds, does not hold
(the reverse is significant) or not significant. The .json twin keeps every p value, raw and adjusted.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ansel.config import dataset_name
from ansel.data.canonical import Dataset
from ansel.report.paired_tests import RESAMPLES, SEED, TESTS, holm, paired_tests, question_values
from ansel.report.tables import PROTOCOL_SUFFIX, column_label, grid_choice, split_labels, split_run
from ansel.targets import Run, claim_pair, compared_pairs, processed_dir, runs, significance_columns

MARKS = {1: "▲", -1: "▼"}
TEST_NAMES = {"t": "paired t-test", "randomisation": "paired randomisation test"}
RESULT_COLUMNS = ["row", "versus", "column", "scope", "n", "difference", *TESTS, *(f"{t}_holm" for t in TESTS)]


def settings(table: dict) -> tuple[float, str]:
    """(alpha, test) of the spec's ``significance`` block."""
    block = table.get("significance", {})
    return block.get("alpha", 0.05), block.get("test", "t")


def _question_reader():
    """(run, split) -> per-question metrics of the run's run.trec, each run and dataset read once."""
    @functools.cache
    def dataset(name: str) -> Dataset:
        return Dataset.load(processed_dir(name))

    @functools.cache
    def values(run: Run, split: str) -> pd.DataFrame:
        path = Path(run.dir) / "run.trec"
        no_positive = json.loads((Path(run.dir) / "config.json").read_text()).get("eval", {}).get("no_positive", "drop")
        labels = split_labels(dataset(run.dataset), split, str(path))
        return question_values(split_run(path, split), labels, no_positive, str(path))

    return values


def compare(config: dict, table: dict) -> pd.DataFrame:
    """One row per (row, versus, column, scope): scope "pooled" or "seed<k>"; n questions, the mean
    difference row − versus, each test's p value and its Holm-adjusted value (``RESULT_COLUMNS``)."""
    read = _question_reader()
    models = {row["label"]: row.get("model") for row in table["rows"]}
    records = []
    for col in significance_columns(table):
        ds = dataset_name(config, col["dataset"])
        for row, versus in compared_pairs(table):
            a, b = (_seed_values(config, read, models[label], ds, col) for label in (row, versus))
            key = {"row": row, "versus": versus, "column": column_label(col)}
            pairs = [("pooled", _pooled(a), _pooled(b))] + [(f"seed{s}", a[s], b[s]) for s in sorted(a.keys() & b.keys())]
            for scope, x, y in pairs:
                try:
                    records.append({**key, "scope": scope, **paired_tests(x, y)})
                except ValueError as e:
                    raise ValueError(f"table {table['id']}: {row} vs {versus} on {key['column']} ({scope}): {e}") from None
    results = pd.DataFrame.from_records(records, columns=[c for c in RESULT_COLUMNS if not c.endswith("_holm")])
    for test in TESTS:  # each scope is a family: the pooled tests, and each seed's
        results[f"{test}_holm"] = results.groupby("scope")[test].transform(holm)
    return results


def _seed_values(config: dict, read, model: str, dataset: str, col: dict) -> dict[int, pd.Series]:
    """{seed: per-question values} of a row's column, at the lr point its cells show (chosen on dev)."""
    variant = grid_choice(config, model, dataset)[1]
    return {r.seed: read(r, col["split"])[col["metric"]] for r in runs(config, dataset, variant)}


def _pooled(seeds: dict[int, pd.Series]) -> pd.Series:
    """Each question's value averaged over the seeds (the questions every seed scores)."""
    return pd.concat(seeds.values(), axis=1, join="inner").mean(axis=1)


def _direction(r, test: str, alpha: float) -> int:
    """+1 (row significantly better than versus), −1 (worse) or 0, after Holm."""
    return int(np.sign(r["difference"])) if r[f"{test}_holm"] < alpha else 0


def mark_cells(cells: pd.DataFrame, results: pd.DataFrame, table: dict) -> pd.DataFrame:
    """``cells`` with a ``mark`` column: ▲/▼ where the row differs significantly from the baseline
    (pooled, Holm-adjusted); empty on the baseline row, untested columns and rows without a model."""
    alpha, test = settings(table)
    pooled = results[(results.scope == "pooled") & (results.versus == table.get("baseline"))]
    marks = {(r["row"], r["column"]): MARKS.get(_direction(r, test, alpha), "") for _, r in pooled.iterrows()}
    return cells.assign(mark=[marks.get(key, "") for key in zip(cells.row, cells.column)])


def claim_verdicts(results: pd.DataFrame, table: dict) -> dict[str, dict[str, dict]]:
    """{claim: {column: {verdict, p_holm, difference, n, seeds_for, seeds_against, seeds}}}: verdict
    "holds", "does not hold" (the reverse is significant) or "not significant", from the pooled test;
    the seeds' counts from the per-seed tests; difference = better − worse as the claim reads."""
    alpha, test = settings(table)
    out: dict[str, dict[str, dict]] = {}
    for claim in table.get("claims", []):
        better, worse = claim_pair(claim)
        same = (results.row == better) & (results.versus == worse)
        rows = results[same | ((results.row == worse) & (results.versus == better))]
        for column, found in rows.groupby("column", sort=False):
            sign = 1 if same[found.index].all() else -1  # the pair may be stored the other way round
            pooled = found[found.scope == "pooled"].iloc[0]
            per_seed = [sign * _direction(r, test, alpha) for _, r in found[found.scope != "pooled"].iterrows()]
            verdict = {1: "holds", -1: "does not hold", 0: "not significant"}[sign * _direction(pooled, test, alpha)]
            out.setdefault(claim, {})[column] = {
                "verdict": verdict, "p_holm": float(pooled[f"{test}_holm"]), "difference": sign * float(pooled["difference"]),
                "n": int(pooled["n"]), "seeds_for": per_seed.count(1), "seeds_against": per_seed.count(-1),
                "seeds": len(per_seed)}
    return out


def claim_sentence(claim: str, column: str, v: dict, test: str) -> str:
    """'AP-CNN > QA-CNN on wikiqa test MAP: holds (pooled paired t-test p = 0.003, Holm-adjusted; ...)'."""
    stats = (f"pooled {TEST_NAMES[test]} p = {v['p_holm']:.2g}, Holm-adjusted; mean difference "
             f"{v['difference']:+.4f} over {v['n']} questions")
    seeds = {"holds": f"{v['seeds_for']}/{v['seeds']} seeds significant",
             "does not hold": f"{v['seeds_against']}/{v['seeds']} seeds significant the reverse way",
             "not significant": f"per seed {v['seeds_for']}/{v['seeds']} significant for it, "
                                f"{v['seeds_against']}/{v['seeds']} against"}[v["verdict"]]
    reverse = "the reverse is significant: " if v["verdict"] == "does not hold" else ""
    return f"{claim} on {column}: {v['verdict']} ({reverse}{stats}; {seeds})"


def significance_notes(results: pd.DataFrame, table: dict) -> list[str]:
    """The method, the marks' legend, the untested columns and why, and one sentence per claim and column."""
    alpha, test = settings(table)
    tested = significance_columns(table)
    untested = [c for c in table["columns"] if c not in tested]
    notes = []
    if not tested:
        return [f"Significance: not tested; no column of this table has per-question values ({_why(untested)})."]
    pooled = results[results.scope == "pooled"]
    notes.append(
        f"Significance: paired tests over each column's questions, two-sided: t-test (scipy.stats.ttest_rel) and "
        f"randomisation test (scipy.stats.permutation_test, sign flips, {RESAMPLES} resamples, seed {SEED}); pooled = "
        f"each question's value averaged over a row's seeds, per seed = seed k against seed k; Holm-adjusted over the "
        f"table's {len(pooled)} comparisons (pooled, and within each seed); alpha = {alpha}; marks and claims use the "
        f"{TEST_NAMES[test]}; every p value is in the table's .json.")
    if table.get("baseline"):
        notes.append(f"▲/▼ = significantly better/worse than {table['baseline']} (pooled {TEST_NAMES[test]}, "
                     f"Holm-adjusted p < {alpha}).")
    if untested:
        notes.append(f"Significance: not tested on {', '.join(column_label(c) for c in untested)} ({_why(untested)}).")
    notes += [claim_sentence(claim, column, v, test)
              for claim, columns in claim_verdicts(results, table).items() for column, v in columns.items()]
    return notes


def _why(columns: list[dict]) -> str:
    reasons = []
    epochs = [suffix.strip() for protocol, suffix in PROTOCOL_SUFFIX.items()
              if protocol != "dev" and any(c.get("protocol") == protocol for c in columns)]
    if epochs:
        reasons.append(f"a {' or '.join(epochs)} column has no run.trec of its epoch: only the checkpoint selected "
                       "on dev is scored per question")
    other = sorted({c["metric"] for c in columns if c.get("protocol", "dev") == "dev"})
    if other:
        reasons.append(f"{', '.join(other)}: no per-question value")
    return "; ".join(reasons)


def significance_json(results: pd.DataFrame, table: dict) -> dict:
    """The table .json's "significance": settings, every comparison's p values (raw and Holm-adjusted,
    per test and scope) and the claims' verdicts."""
    alpha, test = settings(table)
    comparisons: dict[str, dict] = {}
    for _, r in results.iterrows():
        comparisons.setdefault(f"{r['row']} vs {r['versus']}", {}).setdefault(r["column"], {})[r["scope"]] = {
            "n_questions": int(r["n"]), "difference": float(r["difference"]),
            **{t: {"p": float(r[t]), "p_holm": float(r[f"{t}_holm"])} for t in TESTS}}
    return {"test": test, "alpha": alpha, "baseline": table.get("baseline"),
            "randomisation": f"scipy.stats.permutation_test, sign flips, {RESAMPLES} resamples, seed {SEED}",
            "comparisons": comparisons, "claims": claim_verdicts(results, table)}


def annotate(config: dict, table: dict, cells: pd.DataFrame) -> tuple[pd.DataFrame, list[str], dict]:
    """(cells with marks, notes, the .json's extra keys) of a table; unchanged for a table that
    declares neither a baseline nor claims."""
    if not compared_pairs(table):
        return cells, [], {}
    results = compare(config, table)
    return (mark_cells(cells, results, table), significance_notes(results, table),
            {"significance": significance_json(results, table)})
