"""Tables of kind vector_variants: one model trained from several word-vector variants.

A row per model (its ``embeddings`` name the variant). What the vectors are, measured once per
variant by the embeddings rule (``ansel.embeddings.isotropy`` over the 2,000 most frequent training
words; coverage of the training vocabulary; the run's vocabulary size); how the first epoch went,
per seed from log.csv (the loss against the margin, and the mean score of the positives minus that
of their drawn negatives where the epoch ended), and the last epoch's loss; and the table's metric
on its split (mean ± sample std over seeds).

A run collapsed when its first epoch ends with the loss at the margin (within 5 %) and the
positives scoring no better than their negatives (s+ - s- below 5 % of the margin): the state of
reports/apnet-training-collapse.md, where every score is near 1 and the gradient vanishes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ansel.config import embeddings_file
from ansel.data.vocab import run_vocab_file
from ansel.report.provenance import cell_provenance, provenance_note
from ansel.report.tables import run_log, run_metric, write_table
from ansel.settings import ConfigError
from ansel.specs import TableSpec
from ansel.targets import Run, Variant, processed_dir, runs

COLLAPSE_TOLERANCE = 0.05  # of the margin


def _read_json(path: Path, what: str):
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing ({what}); make it first (snakemake {path})")
    return json.loads(path.read_text())


def _epochs(run: Run, margin: float) -> tuple[float, float, bool, float]:
    """(loss, s+ - s- where it ended, collapsed) of a run's first epoch, and its last epoch's loss."""
    log = run_log(run, ["loss", "pos_score", "neg_score"])  # the scores: pairwise losses, logged since issue 20
    first = log.iloc[0]
    gap = float(first.pos_score - first.neg_score)
    collapsed = first.loss >= (1 - COLLAPSE_TOLERANCE) * margin and gap < COLLAPSE_TOLERANCE * margin
    return float(first.loss), gap, bool(collapsed), float(log.loss.iloc[-1])


def _mean_std(values: list[float], digits: int) -> str:
    v = np.asarray(values, dtype=float)
    std = v.std(ddof=1) if len(v) > 1 else 0.0
    return f"{v.mean():.{digits}f} ± {std:.{digits}f}"


def variant_rows(config: dict, table: TableSpec) -> list[dict]:
    """One record per row: the vectors' measurements and the runs' first epochs and metric."""
    ds, split, metric = table.run_dataset, table.split, table.metric
    records = []
    for row in table.rows:
        found = runs(config, ds, Variant(str(row.model)))  # every vector_variants row has one (the schema)
        cfg = _read_json(Path(found[0].dir) / "config.json", "the run's resolved config")  # what it ran with
        if cfg["train"].get("loss") != "hinge":
            raise ConfigError(
                f"table {table.id}: row {row.label!r}: model {row.model} trains with loss "
                f"{cfg['train'].get('loss')!r}; the collapse is measured against a hinge margin"
            )
        vectors = embeddings_file(cfg)
        info = _read_json(Path(vectors).with_suffix(".json"), "the vectors' measurements") if vectors else {}
        vocab = _read_json(run_vocab_file(cfg, processed_dir(ds)), "the run's vocabulary")
        iso = info.get("isotropy_top_2000", {})
        epochs = [_epochs(r, cfg["train"]["margin"]) for r in found]
        records.append(
            {
                "variant": row.label,
                "model": row.model,
                "vectors": cfg["embeddings"] or "random",
                "vocabulary": len(vocab),
                "coverage": info.get("coverage"),
                "mean_norm_ratio": iso.get("mean_norm_ratio"),
                "mean_pair_cosine": iso.get("mean_pair_cosine"),
                "epoch1_loss": [e[0] for e in epochs],
                "epoch1_gap": [e[1] for e in epochs],
                "collapsed": sum(e[2] for e in epochs),
                "last_epoch_loss": [e[3] for e in epochs],
                "seeds": len(found),
                "margin": cfg["train"]["margin"],
                f"{split}_{metric}": [run_metric(r, split, metric) for r in found],
                "provenance": cell_provenance(config, found),
            }
        )
    return records


def render_vector_variants(config: dict, table: TableSpec, notes: list[str], prefix: Path) -> None:
    """prefix.{csv,md,tex,html,json}: a row per variant."""
    records = variant_rows(config, table)
    split, metric = table.split, table.metric
    key = f"{split}_{metric}"

    def fmt(value, digits=3):
        return "—" if value is None else f"{value:.{digits}f}"

    wide = pd.DataFrame(
        [
            {
                "vectors": r["vectors"],
                "vocabulary": f"{r['vocabulary']:,}",
                "coverage": fmt(r["coverage"]),
                "‖mean‖ / mean ‖v‖": fmt(r["mean_norm_ratio"]),
                "mean cosine": fmt(r["mean_pair_cosine"]),
                "epoch-1 loss (margin)": f"{_mean_std(r['epoch1_loss'], 4)} ({r['margin']:g})",
                "epoch-1 s+ − s−": _mean_std(r["epoch1_gap"], 4),
                "collapsed": f"{'yes' if r['collapsed'] == r['seeds'] else 'no' if not r['collapsed'] else 'partly'} "
                f"({r['collapsed']}/{r['seeds']})",
                "last-epoch loss": _mean_std(r["last_epoch_loss"], 4),
                f"{split} {metric}": _mean_std(r[key], 4),
            }
            for r in records
        ],
        index=[r["variant"] for r in records],
    )
    long = pd.DataFrame(
        [{k: (json.dumps(v) if isinstance(v, list) else v) for k, v in r.items() if k != "provenance"} for r in records]
    )
    notes = notes + [
        "Vectors measured over the 2,000 most frequent training words (ansel.embeddings.isotropy): ‖mean‖ / "
        "mean ‖v‖ (1: every vector alike; 0: centred) and the mean cosine of 10,000 random word pairs; coverage: "
        "training words with a vector; vocabulary: the run's (training words, or every word the vectors cover).",
        f"Per seed from log.csv (mean ± std): epoch 1's hinge loss (its mean over the epoch), s+ − s− where "
        f"epoch 1 ended (the mean score of the positives minus that of their drawn negatives over its last tenth "
        f"of batches), and the last epoch's loss. Collapsed: epoch-1 loss ≥ {1 - COLLAPSE_TOLERANCE:g} × "
        f"margin and s+ − s− < {COLLAPSE_TOLERANCE:g} × margin.",
        f"{split} {metric}: mean ± sample std over seeds, checkpoint chosen on dev.",
        provenance_note([r["provenance"] for r in records]),
    ]
    as_json = {r["variant"]: {k: v for k, v in r.items() if k != "variant"} for r in records}
    write_table(long, wide, as_json, table, notes, prefix)
