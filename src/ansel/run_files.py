"""A run's run file in either of its two forms: plain where the run was made (``results/runs/...``),
gzipped where a record keeps it (``reports/<record>/runs/...``), which renders its tables from there
as it is (``ansel.records.render``); and its log.csv, read whole or refused (``read_log``)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING

from ansel.settings import InputError

if TYPE_CHECKING:
    import pandas as pd


class LogFileError(ValueError, InputError):
    """A run's log.csv that is not whole (cut off, a field too many or too few, a value that is no
    number), or lacks what a table or figure reads of it (a column, an epoch); the message names the
    file, the line or column, and the fix."""


def stored(path: str | Path) -> Path:
    """The file ``path`` (a run's ``run.trec``, say) as its directory holds it: itself, or ``path``.gz
    where only that is there; ``path`` where neither is (the workflow has yet to write it)."""
    path = Path(path)
    gz = path.with_name(path.name + ".gz")
    return gz if not path.exists() and gz.exists() else path


def rebuild_log(path: str | Path) -> str:
    """How to replace a run's log.csv that is not whole: only its training writes one."""
    return f"delete it and rerun its target (snakemake {path}): training writes it, so the run is trained again"


def read_log(path: Path) -> pd.DataFrame:
    """A run's log.csv as pandas reads it (one row per epoch), once it is whole: training writes it
    at once, every line ended, every row of the header's fields, each a number or empty (an epoch
    without a cadence evaluation). A write cut off, which pandas would read as empty fields (the
    last epoch's value missing from a table, a seed from a figure's point), is refused naming the
    file and the line; tables and figures read every log.csv through here."""
    import pandas as pd

    fix = rebuild_log(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise LogFileError(f"{path}: not a text file ({e}); {fix}") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, [])
        for fields in reader:
            where = f"{path}, line {reader.line_num}"
            if fields and len(fields) != len(header):
                raise LogFileError(
                    f"{where}: {len(fields)} fields where the header has {len(header)} (a cut-off write?); {fix}"
                )
            for column, value in zip(header, fields):
                if value and not is_number(value):
                    raise LogFileError(f"{where}: {column} {value!r} is not a number; {fix}")
    except csv.Error as e:
        raise LogFileError(f"{path}, line {reader.line_num}: not CSV ({e}); {fix}") from None
    if not text.endswith("\n"):  # the writer ends every line, the last too (a number cut short has no other sign)
        raise LogFileError(f"{path}, line {reader.line_num or 1}: no line end (a cut-off write?); {fix}")
    return pd.read_csv(io.StringIO(text))


def is_number(value: str) -> bool:
    """Whether ``value`` reads as a float ('nan' and 'inf' too, as pandas reads them)."""
    try:
        float(value)
    except ValueError:
        return False
    return True
