"""The canonical tables every dataset is converted into (DESIGN.md, principle 3).

A dataset directory holds:
  questions.parquet        qid, text, tokens (list[str]), category (str or null)
  answers.parquet          aid, text, tokens (list[str])
  candidates-<split>.parquet   qid, aid, label (0/1); one file per split
  manifest.json            size and sha256 of every file above (and of vocab.json), checked at
                           every load (``ansel.data.manifest``): an edit by hand is refused
Training examples are the ``train`` split's rows: positives are label 1, and the
trainer draws negatives from the labelled pool or the whole answer set (per config).
Models and the trainer never see a dataset's raw format.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from ansel.data.manifest import MANIFEST, check_processed, write_manifest
from ansel.files import save_atomic
from ansel.memory import arrow_uses_malloc
from ansel.settings import InputError

QUESTION_COLUMNS = ["qid", "text", "tokens", "category"]
ANSWER_COLUMNS = ["aid", "text", "tokens"]
CANDIDATE_COLUMNS = ["qid", "aid", "label"]


class DatasetError(ValueError, InputError):
    """A dataset violates the canonical format; the message names the table and row."""


@dataclass
class Dataset:
    name: str
    questions: pd.DataFrame
    answers: pd.DataFrame
    splits: dict[str, pd.DataFrame] = field(default_factory=dict)

    def validate(self) -> "Dataset":
        _require_columns(self.questions, QUESTION_COLUMNS, f"{self.name}/questions")
        _require_columns(self.answers, ANSWER_COLUMNS, f"{self.name}/answers")
        _require_unique(self.questions, "qid", f"{self.name}/questions")
        _require_unique(self.answers, "aid", f"{self.name}/answers")
        qids, aids = set(self.questions.qid), set(self.answers.aid)
        for split, cands in self.splits.items():
            where = f"{self.name}/candidates-{split}"
            _require_columns(cands, CANDIDATE_COLUMNS, where)
            bad = ~cands.label.isin([0, 1])
            if bad.any():
                i = int(bad.idxmax())
                raise DatasetError(f"{where}: row {i}: label {cands.label[i]!r} is not 0/1")
            for col, known in (("qid", qids), ("aid", aids)):
                unknown = ~cands[col].isin(known)
                if unknown.any():
                    i = int(unknown.idxmax())
                    raise DatasetError(f"{where}: row {i}: unknown {col} {cands[col][i]!r}")
            dup = cands.duplicated(["qid", "aid"])
            if dup.any():
                i = int(dup.idxmax())
                raise DatasetError(f"{where}: row {i}: duplicate pair ({cands.qid[i]}, {cands.aid[i]})")
        return self

    def save(self, directory: str | os.PathLike) -> None:
        """Write every table atomically (temp file + rename) after validating, then the directory's
        manifest: the sha256 of each of its files (the vocabulary too, when written first)."""
        self.validate()
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        _write(self.questions[QUESTION_COLUMNS], directory / "questions.parquet")
        _write(self.answers[ANSWER_COLUMNS], directory / "answers.parquet")
        for split, cands in self.splits.items():
            _write(cands[CANDIDATE_COLUMNS], directory / f"candidates-{split}.parquet")
        write_manifest(directory / MANIFEST)

    @classmethod
    def load(cls, directory: str | os.PathLike, name: str | None = None) -> "Dataset":
        """The tables ``save`` wrote, refused (ManifestError, naming the file) where one changed since;
        in a job of the warm-job server, the tables it preloaded from these very files (``preload``)."""
        arrow_uses_malloc()
        directory = Path(directory)
        written = check_processed(directory)
        entries, preloaded = _preloaded.pop(directory.resolve(), (None, None))
        if preloaded is not None and entries == written:
            return replace(preloaded, name=name or directory.name)
        return cls._read(directory, written, name)

    @classmethod
    def _read(cls, directory: Path, written: dict, name: str | None) -> "Dataset":
        splits = {
            Path(p).stem.removeprefix("candidates-"): pd.read_parquet(directory / p)
            for p in sorted(written)
            if re.fullmatch(r"candidates-[^/]+\.parquet", p)
        }
        return cls(
            name=name or directory.name,
            questions=pd.read_parquet(directory / "questions.parquet"),
            answers=pd.read_parquet(directory / "answers.parquet"),
            splits=splits,
        )


# {folder: (its manifest's entries, its tables)}: what the warm-job server (``ansel.forkserver``) loaded
# before forking the job that reads it; a job takes its entry (never shared within a process).
_preloaded: dict[Path, tuple[dict, Dataset]] = {}


def preload(directory: str | os.PathLike) -> None:
    """Load the processed dataset at ``directory`` into this process for the processes it forks next,
    unless its manifest lists the files loaded already: each job then finds its tables in memory (after
    its own check of their checksums, so the files are hashed here only as they are loaded) instead of
    reading them, ~25 ms a smoke job. A dataset that cannot be loaded is left for the job to read,
    which names what is wrong."""
    arrow_uses_malloc()
    directory = Path(directory).resolve()
    try:
        if _preloaded.get(directory, (None,))[0] != json.loads((directory / MANIFEST).read_text(encoding="utf-8")):
            written = check_processed(directory)
            _preloaded[directory] = (written, Dataset._read(directory, written, None))
    except Exception:  # any fault is the job's to report, in its own words
        _preloaded.pop(directory, None)


def _require_columns(df: pd.DataFrame, columns: list[str], where: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DatasetError(f"{where}: missing column(s) {missing}")


def _require_unique(df: pd.DataFrame, col: str, where: str) -> None:
    dup = df[col].duplicated()
    if dup.any():
        i = int(dup.idxmax())
        raise DatasetError(f"{where}: row {i}: duplicate {col} {df[col][i]!r}")


def _write(df: pd.DataFrame, path: Path) -> None:
    save_atomic(path, lambda tmp: df.reset_index(drop=True).to_parquet(tmp, index=False))
