"""E7: the committed run files of every record on the ``wikiqa`` dataset (126 dev / 243 test questions:
those with a correct answer) rescored on the official filtered question set (122 / 237: also without the
questions whose every candidate is correct), the set of ``WikiQA-{dev,test}-filtered.ref`` and of the
``wikiqa_filtered`` dataset. Writes ``question_set.md`` and prints it.

    python reports/gap-wikiqa/question_set.py [--processed DIR] [--ref-dir DIR]

``--processed`` holds ``wikiqa`` and ``wikiqa_filtered`` as ``ansel preprocess`` writes them (default
``data/processed``); ``--ref-dir`` the WikiQA release's ``.ref`` files and ``--raw`` its .tsv files (defaults:
``$ANSEL_DATA_MIRROR/wikiqa``, ``data/raw/wikiqa``). Each filtered .ref is checked against ``wikiqa_filtered``
before anything is scored, and each run's 243-question metrics against its ``metrics.json``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pandas as pd

from ansel.data.readers.wikiqa import read_split
from ansel.evaluation.agreement import check_run, read_run_file
from ansel.evaluation.metrics import ranking_metrics

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
METRICS = ("MAP", "MRR")


def ref_candidates(ref: Path, tsv: Path) -> pd.DataFrame:
    """(qid, aid, label) of a .ref file, whose lines are ``<question's 1-based order in the .tsv> 0
    <candidate's order in its question> <label>``, named by the ids of the release's .tsv."""
    pairs = read_split(tsv)
    pairs["q"] = pd.factorize(pairs.qid)[0] + 1
    pairs["c"] = pairs.groupby("q").cumcount()
    lines = pd.read_csv(ref, sep=" ", header=None, names=["q", "zero", "c", "label"])
    found = lines.merge(pairs, on=["q", "c"], how="left", suffixes=("", "_tsv"), indicator=True)
    wrong = found[(found._merge != "both") | (found.label != found.label_tsv)]
    if len(wrong):
        i = wrong.index[0]
        raise ValueError(f"{ref}: line {i + 1} names no candidate of {tsv} with its label")
    return found[["qid", "aid", "label"]]


def check_filtered(processed: Path, ref_dir: Path, raw: Path) -> None:
    """The filtered .ref's candidates are the ``wikiqa_filtered`` split's, label for label."""

    def triples(frame: pd.DataFrame) -> set:
        return set(zip(frame.qid.astype(str), frame.aid.astype(str), frame.label.astype(int)))

    for split in ("dev", "test"):
        ref = ref_dir / f"WikiQA-{split}-filtered.ref"
        ours = pd.read_parquet(processed / "wikiqa_filtered" / f"candidates-{split}.parquet")
        if triples(ours) != triples(ref_candidates(ref, raw / f"WikiQA-{split}.tsv")):
            raise ValueError(f"{ref}: its candidates are not those of {processed / 'wikiqa_filtered'} {split}")


def filtered_metrics(run: Path, processed: Path) -> dict:
    """Test metrics of the run file's scores on the candidates of ``wikiqa_filtered``'s test split."""
    rows = read_run_file(run / "run.trec")
    rows = rows[rows.qid.str.startswith("test:")].assign(qid=lambda r: r.qid.str.removeprefix("test:"))
    labels = pd.read_parquet(processed / "wikiqa_filtered" / "candidates-test.parquet")
    scored = labels.merge(rows, on=["qid", "aid"], how="left")
    if scored.score.isna().any():
        raise ValueError(f"{run}: its run file scores no answer {scored[scored.score.isna()].aid.iloc[0]}")
    return ranking_metrics(scored)


def cell(values: pd.Series) -> str:
    return f"{values.mean():.4f}" + (f" ± {values.std():.4f}" if len(values) > 1 else "")


def table(processed: Path) -> pd.DataFrame:
    runs = []
    # every run file of a record's runs/wikiqa (gap-wikiqa's own are under runs/<experiment>/wikiqa)
    for run in sorted(r.parent for r in ROOT.glob("reports/**/runs/wikiqa/*/seed*/run.trec.gz")):
        full = check_run(run, processed / "wikiqa")["test"]
        part = filtered_metrics(run, processed)
        runs.append(
            {"record": str(run.parents[3].relative_to(ROOT / "reports")), "model": run.parent.name}
            | {"n": (full["n_questions"], part["n_questions"])}
            | {f"{m} {n}": v[m] for m in METRICS for n, v in ((243, full), (237, part))}
        )
    frame = pd.DataFrame(runs)
    rows = []
    for (record, model), g in frame.groupby(["record", "model"], sort=False):
        if set(g.n) != {(243, 237)}:
            raise ValueError(f"{record} {model}: test questions {set(g.n)}, not 243 and 237")
        row = {"record": record, "model": model, "seeds": len(g)}
        for m in METRICS:
            row[f"test {m}, 243 q"] = cell(g[f"{m} 243"])
            row[f"test {m}, 237 q"] = cell(g[f"{m} 237"])
            row[f"{m} 237 − 243 (paired)"] = cell(g[f"{m} 237"] - g[f"{m} 243"])
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processed", type=Path, default=ROOT / "data" / "processed")
    parser.add_argument("--ref-dir", type=Path, default=Path(os.environ.get("ANSEL_DATA_MIRROR", "")) / "wikiqa")
    parser.add_argument("--raw", type=Path, default=ROOT / "data" / "raw" / "wikiqa")
    args = parser.parse_args()
    check_filtered(args.processed, args.ref_dir, args.raw)
    text = table(args.processed).to_markdown(index=False)
    (HERE / "question_set.md").write_text(
        "Test MAP and MRR of each record's committed runs on WikiQA's 243 test questions with a correct answer\n"
        "(the `wikiqa` dataset) and on the 237 of `WikiQA-test-filtered.ref`; mean ± std over seeds.\n"
        "`python reports/gap-wikiqa/question_set.py`\n\n" + text + "\n"
    )
    print(text)


if __name__ == "__main__":
    main()
