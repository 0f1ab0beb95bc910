"""A metrics table's paired significance tests: every row with a model against the spec's
``baseline`` row, and the paper's orderings (``claims: ["A > B", "C < D", ...]``), over the questions
of each tested column's split (``ansel.targets.significance_columns``; the tests:
``ansel.report.paired_tests``).

- pooled: each question's value averaged over a row's seeds, then one paired test over questions;
- per seed: seed k of one row against seed k of the other (the seeds both have);
- seed bootstrap (claims): questions and each row's seeds resampled together, so a claim does not
  hold on two seeds of five that happen to agree (``paired_tests.seed_bootstrap``).
Two Holm families per table, each per scope (pooled; each seed): the baseline's comparisons (the
marks), and the claims (the paper's statements, so a verdict does not depend on unrelated rows).
The spec's ``significance.test`` (default the t-test) and ``alpha`` (default 0.05) decide the marks
-- ▲ (▼) where a row is better (worse) than the baseline, pooled, Holm-adjusted p < alpha -- and the
per-seed counts; each claim's verdict per tested column comes from the seed bootstrap: holds, does
not hold (the reverse is significant) or not significant. The .json twin keeps every p value.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ansel.data.canonical import Dataset
from ansel.evaluation.agreement import check_run, checked_metrics
from ansel.report.paired_tests import RESAMPLES, SEED, TESTS, holm, paired_tests, question_values, seed_bootstrap
from ansel.report.tables import PROTOCOL_SUFFIX, grid_choice, split_labels, split_run
from ansel.specs import Column, TableSpec
from ansel.targets import Run, processed_dir, run_file, runs, significance_columns

MARKS = {1: "▲", -1: "▼"}
TEST_NAMES = {"t": "paired t-test", "randomisation": "paired randomisation test"}
# {test}_holm: Holm over the baseline's comparisons; claims_holm: over the claims' (the claim test's p:
# the seed bootstrap pooled, the spec's test per seed); NaN where a comparison is not in that family
RESULT_COLUMNS = [
    "row",
    "versus",
    "column",
    "scope",
    "n",
    "difference",
    *TESTS,
    "bootstrap",
    *(f"{t}_holm" for t in TESTS),
    "claims_holm",
]


def _question_reader(config: dict):
    """(run, split, protocol) -> per-question metrics of the run's file at that protocol (``run_file``:
    run.trec, or run_last.trec of the last epoch), each run and dataset read once."""

    @functools.cache
    def dataset(name: str) -> Dataset:
        return Dataset.load(processed_dir(name))

    @functools.cache
    def values(run: Run, split: str, protocol: str) -> pd.DataFrame:
        path = Path(run_file(config, run, protocol))
        no_positive = json.loads((Path(run.dir) / "config.json").read_text()).get("eval", {}).get("no_positive", "drop")
        labels = split_labels(dataset(run.dataset), split, str(path))
        processed = Path(processed_dir(run.dataset))
        if path.name == "run_last.trec":  # the last epoch's run file, scored into metrics_last.json
            check_run(Path(run.dir), processed, path, path.parent / "metrics_last.json")
        else:  # the cells' metrics.json: the same ranking
            checked_metrics(Path(run.dir), processed)
        return question_values(split_run(path, split), labels, no_positive, str(path))

    return values


def compare(config: dict, table: TableSpec) -> pd.DataFrame:
    """One row per (row, versus, column, scope): scope "pooled" or "seed<k>"; n questions, the mean
    difference row − versus, each test's p value and its Holm-adjusted value (``RESULT_COLUMNS``)."""
    read = _question_reader(config)
    models = {row.label: row.model for row in table.rows}
    claims = {frozenset(pair) for pair in table.claim_pairs.values()}
    claimed = {pair for pair in table.compared_pairs if frozenset(pair) in claims}
    records = []
    for col in significance_columns(config, table):
        ds = col.run_dataset
        for row, versus in table.compared_pairs:
            a, b = (_seed_values(config, read, str(models[label]), ds, col) for label in (row, versus))
            key = {"row": row, "versus": versus, "column": col.label}
            pairs = [("pooled", _pooled(a), _pooled(b))] + [
                (f"seed{s}", a[s], b[s]) for s in sorted(a.keys() & b.keys())
            ]
            for scope, x, y in pairs:
                try:
                    record = {**key, "scope": scope, **paired_tests(x, y)}
                    if scope == "pooled" and (row, versus) in claimed:
                        record["bootstrap"] = seed_bootstrap(pd.DataFrame(a), pd.DataFrame(b))["bootstrap"]
                except ValueError as e:
                    raise ValueError(f"table {table.id}: {row} vs {versus} on {key['column']} ({scope}): {e}") from None
                records.append(record)
    results = pd.DataFrame.from_records(records, columns=[c for c in RESULT_COLUMNS if not c.endswith("_holm")])
    baseline = table.baseline
    in_baseline = (results.versus == baseline) | (results.row == baseline) if baseline else results.row != results.row
    in_claims = pd.Series(
        [(r, v) in claimed for r, v in zip(results.row, results.versus)], index=results.index, dtype=bool
    )
    test = table.test
    for name in TESTS:
        results[f"{name}_holm"] = _holm_within(results, in_baseline, results[name])
    claim_p = results["bootstrap"].where(results.scope == "pooled", results[test])
    results["claims_holm"] = _holm_within(results, in_claims, claim_p)
    return results


def _holm_within(results: pd.DataFrame, family: pd.Series, p: pd.Series) -> pd.Series:
    """Holm-adjusted ``p`` within ``family``, separately per scope (pooled; each seed); NaN outside it."""
    out = pd.Series(np.nan, index=results.index)
    for _, rows in results[family].groupby("scope"):
        out[rows.index] = holm(p[rows.index].to_numpy())
    return out


def _seed_values(config: dict, read, model: str, dataset: str, col: Column) -> dict[int, pd.Series]:
    """{seed: per-question values} of a row's column, at the lr point its cells show (chosen on dev)."""
    variant = grid_choice(config, model, dataset)[1]
    return {r.seed: read(r, col.split, col.protocol)[col.metric] for r in runs(config, dataset, variant)}


def _pooled(seeds: dict[int, pd.Series]) -> pd.Series:
    """Each question's value averaged over the seeds (the questions every seed scores)."""
    return pd.concat(seeds.values(), axis=1, join="inner").mean(axis=1)


def _direction(r, test: str, alpha: float) -> int:
    """+1 (row significantly better than versus), −1 (worse) or 0, after Holm."""
    return int(np.sign(r["difference"])) if r[f"{test}_holm"] < alpha else 0


def mark_cells(cells: pd.DataFrame, results: pd.DataFrame, table: TableSpec) -> pd.DataFrame:
    """``cells`` with a ``mark`` column: ▲/▼ where the row differs significantly from the baseline
    (pooled, Holm-adjusted); empty on the baseline row, untested columns, rows without a model and a
    cell without a mean (the tests read the run files: a mark there would qualify a value not shown)."""
    alpha, test = table.alpha, table.test
    pooled = results[(results.scope == "pooled") & (results.versus == table.baseline)]
    marks = {(r["row"], r["column"]): MARKS.get(_direction(r, test, alpha), "") for _, r in pooled.iterrows()}
    shown = cells["mean"].notna()
    return cells.assign(mark=[marks.get(key, "") if s else "" for key, s in zip(zip(cells.row, cells.column), shown)])


def claim_verdicts(results: pd.DataFrame, table: TableSpec) -> dict[str, dict[str, dict]]:
    """{claim: {column: {verdict, p, p_holm, difference, n, seeds_for, seeds_against, seeds}}}: verdict
    "holds", "does not hold" (the reverse is significant) or "not significant", from the seed
    bootstrap, Holm-adjusted over the table's claims; the seeds' counts from the per-seed tests (the
    claims' family of each seed); difference = better − worse as the claim reads."""
    alpha = table.alpha
    out: dict[str, dict[str, dict]] = {}
    for claim, (better, worse) in table.claim_pairs.items():
        same = (results.row == better) & (results.versus == worse)
        rows = results[same | ((results.row == worse) & (results.versus == better))]
        for column, found in rows.groupby("column", sort=False):
            sign = 1 if same[found.index].all() else -1  # the pair may be stored the other way round
            pooled = found[found.scope == "pooled"].iloc[0]
            per_seed = [sign * _direction(r, "claims", alpha) for _, r in found[found.scope != "pooled"].iterrows()]
            verdict = {1: "holds", -1: "does not hold", 0: "not significant"}[
                sign * _direction(pooled, "claims", alpha)
            ]
            out.setdefault(claim, {})[column] = {
                "verdict": verdict,
                "p_holm": float(pooled["claims_holm"]),
                "p": float(pooled["bootstrap"]),
                "difference": sign * float(pooled["difference"]),
                "n": int(pooled["n"]),
                "seeds_for": per_seed.count(1),
                "seeds_against": per_seed.count(-1),
                "seeds": len(per_seed),
            }
    return out


def claim_sentence(claim: str, column: str, v: dict, test: str) -> str:
    """'AP-CNN > QA-CNN on wikiqa test MAP: holds (pooled paired t-test p = 0.003, Holm-adjusted; ...)'."""
    stats = (
        f"seed bootstrap p = {v['p_holm']:.2g}, Holm-adjusted over the claims; mean difference "
        f"{v['difference']:+.4f} over {v['n']} questions"
    )
    seeds = {
        "holds": f"{v['seeds_for']}/{v['seeds']} seeds significant",
        "does not hold": f"{v['seeds_against']}/{v['seeds']} seeds significant the reverse way",
        "not significant": f"per seed {v['seeds_for']}/{v['seeds']} significant for it, "
        f"{v['seeds_against']}/{v['seeds']} against",
    }[v["verdict"]]
    reverse = "the reverse is significant: " if v["verdict"] == "does not hold" else ""
    return f"{claim} on {column}: {v['verdict']} ({reverse}{stats}; {seeds})"


def significance_notes(results: pd.DataFrame, table: TableSpec) -> list[str]:
    """The method, the marks' legend, the untested columns and why, and one sentence per claim and column."""
    alpha, test = table.alpha, table.test
    tested_labels = set(results.column)
    tested = [c for c in table.columns if c.label in tested_labels]
    untested = [c for c in table.columns if c not in tested]
    notes = []
    if not tested:
        return [f"Significance: not tested; no column of this table has per-question values ({_why(untested)})."]
    pooled = results[results.scope == "pooled"]
    notes.append(
        f"Significance: paired tests over each column's questions, two-sided: t-test (scipy.stats.ttest_rel) and "
        f"randomisation test (scipy.stats.permutation_test, sign flips, {RESAMPLES} resamples, seed {SEED}); pooled = "
        f"each question's value averaged over a row's seeds, per seed = seed k against seed k; alpha = {alpha}; "
        f"every p value is in the table's .json."
    )
    if table.baseline:
        notes.append(
            f"▲/▼ = significantly better/worse than {table.baseline} (pooled {TEST_NAMES[test]}, "
            f"Holm-adjusted over the baseline's {int(pooled.t_holm.notna().sum())} comparisons)."
        )
    if table.claims:
        notes.append(
            f"Claims (the paper's statements) are their own Holm family ({int(pooled.claims_holm.notna().sum())} "
            f"tests), judged by a two-level paired bootstrap that resamples the questions and each row's seeds "
            f"({RESAMPLES} resamples, seed {SEED}): 'holds' needs the difference to stand out from the spread "
            f"between seeds as well as between questions; per-seed counts use the {TEST_NAMES[test]} within each "
            f"seed's claims."
        )
    if untested:
        notes.append(f"Significance: not tested on {', '.join(c.label for c in untested)} ({_why(untested)}).")
    notes += [
        claim_sentence(claim, column, v, test)
        for claim, columns in claim_verdicts(results, table).items()
        for column, v in columns.items()
    ]
    return notes


def _why(columns: list[Column]) -> str:
    reasons = []
    epochs = [
        suffix.strip()
        for protocol, suffix in PROTOCOL_SUFFIX.items()
        if protocol not in ("dev", "benchmark") and any(c.protocol == protocol for c in columns)
    ]
    if epochs:
        reasons.append(
            f"a {' or '.join(epochs)} column has no run file of its epoch: its rows' runs keep the last "
            "epoch's only with train.keep_last, the best epoch's never"
        )
    other = sorted({c.metric for c in columns if c.protocol in ("dev", "benchmark")})
    if other:
        reasons.append(f"{', '.join(other)}: no per-question value")
    return "; ".join(reasons)


def significance_json(results: pd.DataFrame, table: TableSpec) -> dict:
    """The table .json's "significance": settings, every comparison's p values (raw and Holm-adjusted,
    per test and scope) and the claims' verdicts."""
    alpha, test = table.alpha, table.test
    comparisons: dict[str, dict] = {}
    for _, r in results.iterrows():
        comparisons.setdefault(f"{r['row']} vs {r['versus']}", {}).setdefault(r["column"], {})[r["scope"]] = {
            "n_questions": int(r["n"]),
            "difference": float(r["difference"]),
            **{t: {"p": float(r[t]), "p_holm": _number(r[f"{t}_holm"])} for t in TESTS},
            **(
                {"bootstrap": {"p": float(r["bootstrap"]), "p_holm_claims": _number(r["claims_holm"])}}
                if pd.notna(r["bootstrap"])
                else {}
            ),
        }
    return {
        "test": test,
        "alpha": alpha,
        "baseline": table.baseline,
        "randomisation": f"scipy.stats.permutation_test, sign flips, {RESAMPLES} resamples, seed {SEED}",
        "comparisons": comparisons,
        "claims": claim_verdicts(results, table),
    }


def _number(value) -> float | None:
    """A p value for the .json: null where the comparison is not in that family."""
    return None if pd.isna(value) else float(value)


def annotate(config: dict, table: TableSpec, cells: pd.DataFrame) -> tuple[pd.DataFrame, list[str], dict]:
    """(cells with marks, notes, the .json's extra keys) of a table; unchanged for a table that
    declares neither a baseline nor claims."""
    if not table.compared_pairs:
        return cells, [], {}
    results = compare(config, table)
    return (
        mark_cells(cells, results, table),
        significance_notes(results, table),
        {"significance": significance_json(results, table)},
    )
