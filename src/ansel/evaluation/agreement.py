"""A run's metrics.json checked against its run file (DESIGN.md principle 14): every metric the run
file can give (ranking metrics per split, or a classification's accuracy and F1) is recomputed from
its scores and the processed dataset's labels by the evaluation's own code, and must be the value
metrics.json reports. The ``table`` and ``figure`` verbs check every metrics.json they read, and an
unpacked or collected record every run it takes: a cell never shows a number its run file does not give.
"""

from __future__ import annotations

import functools
import math
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from ansel.evaluation.metrics import read_trec_run, split_metrics
from ansel.jsonfile import read_json
from ansel.run_files import stored
from ansel.settings import InputError


class RunFileError(ValueError, InputError):
    """A run file that is not whole, or that its metrics.json does not agree with: the message names
    the files and the fix, and ``ansel`` prints that one line."""


_FIRST = ("MAP",)  # named first where several disagree (the table's usual column)


def read_run_file(path: Path) -> pd.DataFrame:
    """qid, aid, rank, score of a run.trec (or run.trec.gz), with a message naming it where it is not
    a whole run file (not gzip, cut short, a line not of six fields)."""
    try:
        rows = read_trec_run(path)
    except FileNotFoundError:
        raise  # its message names the file
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError, pd.errors.ParserError) as e:
        raise RunFileError(f"{path}: not a whole run file ({type(e).__name__}: {e})") from None
    if rows.score.isna().any() or rows.aid.isna().any():
        raise RunFileError(f"{path}: not a whole run file (a line without its answer or score, or a NaN score)")
    twice = rows.duplicated(["qid", "aid"]).to_numpy()
    if twice.any():  # trec_eval refuses such a run; scored, the answer would be ranked and counted twice
        first = rows[twice].iloc[0]
        raise RunFileError(f"{path}: question {first.qid} answer {first.aid} is listed twice; rerun its evaluation")
    return rows


@functools.cache
def _labels(processed: Path, split: str, stamp: int) -> tuple[pd.Index, np.ndarray]:
    path = processed / f"candidates-{split}.parquet"
    frame = pd.read_parquet(path, columns=["qid", "aid", "label"])
    keys = _keys(frame.qid.astype(str), frame.aid.astype(str))
    if not keys.is_unique:  # never in a split ansel wrote (canonical.Dataset refuses it)
        raise RunFileError(
            f"{path}: a (question, answer) pair listed twice; preprocess it again (snakemake {processed})"
        )
    return keys, frame.label.to_numpy()


def _keys(qid: pd.Series, aid: pd.Series) -> pd.Index:
    """One key per (question, answer) pair: a lookup of ~800 pairs in this index took a third of the
    time of joining the two frames (2026-11-30). Ids hold no NUL (the run file is text)."""
    return pd.Index(qid + "\0" + aid)


def split_labels(processed: Path, split: str) -> tuple[pd.Index, np.ndarray]:
    """(a key per candidate of a processed dataset's split, its label; read once while the file is unchanged)."""
    path = processed / f"candidates-{split}.parquet"
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing: the labels its run file is scored against (snakemake {processed})")
    return _labels(processed.resolve(), split, path.stat().st_mtime_ns)


def recomputed(trec: Path, processed: Path, splits: list[str], eval_cfg: dict) -> dict[str, dict]:
    """{split: metrics} of the run file's scores against the dataset's labels."""
    rows = read_run_file(trec)
    out = {}
    for split in splits:
        part = rows[rows.qid.str.startswith(f"{split}:")]
        if part.empty:
            raise RunFileError(f"{trec}: no rows of split {split!r}")
        part = part.assign(qid=part.qid.str.slice(len(split) + 1))
        keys, labels = split_labels(processed, split)
        found = keys.get_indexer(_keys(part.qid, part.aid))
        if (found < 0).any():
            first = part.iloc[int(np.argmax(found < 0))]
            raise RunFileError(
                f"{trec}: question {first.qid} answer {first.aid} of split {split!r} is not a candidate of {processed}"
            )
        out[split] = split_metrics(
            part.assign(label=labels[found].astype(int)),
            eval_cfg.get("task", "ranking"),
            eval_cfg.get("no_positive", "drop"),
        )
    return out


def check_run(run_dir: Path, processed: Path, trec: Path | None = None, metrics_path: Path | None = None) -> dict:
    """The run's metrics (``metrics_path``, default metrics.json), once every value its run file
    (``trec``, default ``run.trec``) gives agrees with them; else RunFileError naming both files and the
    first value that differs. The last epoch's pair: run_last.trec and metrics_last.json."""
    metrics_path, trec = metrics_path or run_dir / "metrics.json", trec or run_dir / "run.trec"
    metrics, cfg = read_json(metrics_path), read_json(run_dir / "config.json")
    if not isinstance(metrics, dict) or not all(isinstance(v, dict) for v in metrics.values()):
        raise RunFileError(f"{metrics_path}: expected {{split: {{metric: value}}}}")
    for split, values in recomputed(trec, processed, list(metrics), cfg.get("eval", {})).items():
        reported = {k: metrics[split][k] for k in values if k in metrics[split]}  # an older run: fewer counts
        if not reported:
            raise RunFileError(f"{metrics_path}: {split} reports none of {', '.join(values)}")
        for key in sorted(reported, key=lambda k: (k not in _FIRST, k)):
            if not isinstance(reported[key], (int, float)) or not math.isclose(
                reported[key], values[key], rel_tol=1e-9, abs_tol=1e-9
            ):
                raise RunFileError(
                    f"{trec}: its {split} scores give {key} {values[key]:.6f} where {metrics_path} "
                    f"reports {reported[key]!r}: the two files are not of one evaluation; rerun it "
                    f"(snakemake --forcerun {metrics_path})"
                )
    return metrics


@functools.cache
def _checked(run_dir: Path, processed: Path, key: tuple) -> dict:
    return check_run(run_dir, processed)


def checked_metrics(run_dir: Path, processed: Path) -> dict:
    """``check_run`` of a run (its run.trec, plain or gzipped), once while its files are unchanged."""
    files = (run_dir / "metrics.json", stored(run_dir / "run.trec"), run_dir / "config.json")
    key = (run_dir.resolve(), processed.resolve(), *(p.stat().st_mtime_ns if p.exists() else None for p in files))
    return _checked(run_dir, processed, key)


def check_runs(runs) -> None:
    """``checked_metrics`` of each pipeline run (``ansel.targets.Run``; paths from the checkout root)."""
    from ansel.targets import processed_dir

    for run in runs:
        checked_metrics(Path(run.dir), Path(processed_dir(run.dataset)))
