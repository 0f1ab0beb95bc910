"""Tables of kind top_answers (the aMV-LSTM paper's Table 4): one question's answers as each model ranks them.

The question is found by its text among the split's questions, case, punctuation and spacing
ignored (the paper prints "Where do crocodiles live?", WikiQA stores "where do crocodiles live").
Rows = the ``reference`` model's ``top`` first answers; per model "score (rank)" from its run.trec
at the table's ``seed`` (a model with an lr grid: the point chosen on dev, as in the metrics tables)
and the true label. The notes give each model's rank of the correct answer, ours and published
(published_results.csv rows of the table with metric ``correct_rank``, by the model's label).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from ansel.data.canonical import Dataset
from ansel.evaluation.metrics import rank
from ansel.report.tables import grid_choice, split_labels, split_run, write_table
from ansel.specs import TableSpec
from ansel.targets import Run, processed_dir, spec_seed


def _normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def find_question(data: Dataset, split: str, text: str, where: str) -> str:
    """The qid of the one question of ``split`` whose text reads ``text``."""
    questions = data.questions[data.questions.qid.isin(set(split_labels(data, split, where).qid))]
    hits = questions[questions.text.map(_normalise) == _normalise(text)]
    if hits.empty:
        raise KeyError(
            f"{where}: no {split} question of {data.name} reads {text!r} (compared without case and punctuation)"
        )
    if len(hits) > 1:
        raise KeyError(f"{where}: question {text!r} is ambiguous in {data.name} {split}: qids {', '.join(hits.qid)}")
    return hits.qid.iloc[0]


def ranked_answers(config: dict, table: TableSpec, models: list[str]) -> pd.DataFrame:
    """(qid, aid, answer, label, model, run, score, rank): every candidate of the table's question
    as each of ``models`` (the reference first) ranks it in ``run`` (its directory)."""
    ds, split, where = table.run_dataset, table.split, f"table {table.id}"
    seed = spec_seed(config, table.seed, table.id, models)
    data = Dataset.load(processed_dir(ds))
    qid = find_question(data, split, table.question, where)
    frames = []
    for model in models:
        path = Path(Run(ds, grid_choice(config, model, ds)[1], seed).dir) / "run.trec"
        run = split_run(path, split)
        if not (run.qid == qid).any():
            raise KeyError(f"{path}: no candidate of {split} question {qid}")
        frames.append(rank(run[run.qid == qid]).assign(model=model, run=str(path.parent)))
    qrels = data.splits[split]
    ranked = pd.concat(frames).merge(qrels[qrels.qid == qid][["aid", "label"]], on="aid", how="left")
    return ranked.assign(answer=ranked.aid.map(data.answers.set_index("aid").text))[
        ["qid", "aid", "answer", "label", "model", "run", "score", "rank"]
    ]


def render_top_answers(
    config: dict,
    table: TableSpec,
    models: list[str],
    published: dict[str, float | None],
    notes: list[str],
    prefix: Path,
) -> None:
    """prefix.{csv,md,tex,json}: the reference's ``top`` first answers, "score (rank)" per model;
    ``published``: each model's published rank (None: none)."""
    ranked, ref = ranked_answers(config, table, models), table.reference
    labels = {m: table.labels.get(m, m) for m in models}
    top = ranked[ranked.model == ref].nsmallest(table.top, "rank").aid.tolist()
    shown = ranked[ranked.aid.isin(top)].assign(model_label=lambda f: f.model.map(labels))
    cell = shown.set_index(["aid", "model"])
    rows, as_json = [], {}
    for aid in top:
        label = _label(cell.loc[(aid, ref), "label"])
        per_model = {
            labels[m]: {"score": float(cell.loc[(aid, m), "score"]), "rank": int(cell.loc[(aid, m), "rank"])}
            for m in labels
        }
        rows.append(
            {
                "answer": cell.loc[(aid, ref), "answer"],
                **{k: f"{v['score']:.4f} ({v['rank']})" for k, v in per_model.items()},
                "label": label,
            }
        )
        as_json[aid] = {"label": label, **per_model}
    correct = ranked[ranked.label == 1].groupby("model")["rank"].min()
    as_json["correct_rank"] = {
        labels[m]: {
            "ours": int(correct[m]) if m in correct else None,
            "published": published.get(m),
        }
        for m in labels
    }

    def listed(which: str) -> str:
        return ", ".join(
            f"{label} {'—' if r[which] is None else f'{r[which]:g}'}" for label, r in as_json["correct_rank"].items()
        )

    candidates = ranked[ranked.model == ref]
    notes = notes + [
        f"Question {candidates.qid.iloc[0]} of {table.run_dataset} {table.split}: "
        f"{len(candidates)} candidates, {int((candidates.label == 1).sum())} correct; seed "
        f"{spec_seed(config, table.seed, table.id, models)}. Rows: {labels[ref]}'s {len(top)} first answers; "
        "cells: score (rank) per model; label: 1 = correct.",
        f"Rank of the correct answer (the best-ranked one): ours {listed('ours')}; published {listed('published')}.",
    ]
    write_table(shown, pd.DataFrame(rows).set_index("answer"), as_json, table, notes, prefix)


def _label(x) -> int | None:
    """A candidate's 0/1 label; None for an answer the split does not label."""
    return None if isinstance(x, float) and math.isnan(x) else int(x)
