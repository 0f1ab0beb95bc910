"""Files of published values (workflow/papers/published_results.csv and its siblings) read as CSV text,
and the check that each row of published_results.csv is one a table or figure looks up: a misspelt label
matches no cell, whose published value then silently shows "—". Light on purpose (csv, no pandas): the
DAG build checks the file (``ansel.paper_targets.check_published``)."""

from __future__ import annotations

import csv
from collections.abc import Collection
from pathlib import Path

from ansel.evaluation.config import CATEGORY_METRICS, CLASSIFICATION_METRICS, METRICS
from ansel.settings import InputError
from ansel.typos import typo_of

# a row's key; the file's columns are these and value, reported_from, in_seed_text
PUBLISHED_KEY = ["paper", "table", "dataset", "split", "model", "metric"]

# Our spelling of each metric, by its case-folded name: a paper may print ndcg@3 for our nDCG@3.
METRIC_NAMES = {m.casefold(): m for m in METRICS + CLASSIFICATION_METRICS + CATEGORY_METRICS}


class PublishedFileError(ValueError, InputError):
    """A file of published values that cannot be read as one: the message names it and the line."""


def metric_key(metric: str) -> str:
    """A published metric as the lookups key it: ours where it is ours but for case."""
    return METRIC_NAMES.get(metric.casefold(), metric)


def read_lines(path: Path, columns: list[str]) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """(header, [(line number, fields)]) of a CSV file of published values that has at least ``columns``.
    One missing, not CSV, without one of the columns, or with a line of more or fewer fields than its
    header (cut short, a stray comma) is refused naming it and the line; a blank line is no row."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f)
            header, rows = next(reader, []), []
            for fields in reader:
                if not fields:
                    continue
                if len(fields) != len(header):
                    raise PublishedFileError(
                        f"{path}, line {reader.line_num}: {len(fields)} fields where its header has {len(header)} "
                        "(a line cut short, or a comma too many?)"
                    )
                rows.append((reader.line_num, fields))
    except FileNotFoundError:
        raise PublishedFileError(f"{path}: no such file") from None
    except (UnicodeDecodeError, csv.Error) as e:
        raise PublishedFileError(f"{path}: not a CSV file ({e})") from None
    missing = [c for c in columns if c not in header]
    if missing:
        raise PublishedFileError(f"{path}: missing column(s) {', '.join(missing)}; it has {', '.join(header)}")
    return header, rows


def check_read(path: Path, read: Collection[tuple], papers: Collection[str], specs: Collection[str]) -> None:
    """Every row of ``path`` (published_results.csv) whose paper is one of ``papers`` is a key of ``read``
    (``PUBLISHED_KEY``, metric as ``metric_key`` spells it: what those papers' tables and figures look
    up), and no row names a paper without a spec (``specs``). A row that is not is refused naming the
    file, its line and the first label no lookup continues it with, the nearest one that would."""
    header, rows = read_lines(path, [*PUBLISHED_KEY, "value"])
    for line, fields in rows:
        row = dict(zip(header, fields))
        key = tuple(row[c] for c in PUBLISHED_KEY[:-1]) + (metric_key(row["metric"]),)
        if key in read or (key[0] in specs and key[0] not in papers):
            continue  # looked up, or another paper's (a check of it runs with its tables)
        for i, column in enumerate(PUBLISHED_KEY):
            known = sorted({k[i] for k in read if k[:i] == key[:i]} if i else specs)
            if key[i] not in known:
                under = " ".join(key[:i])
                raise PublishedFileError(
                    f"{path}, line {line}: {','.join(fields)}: no table or figure of the paper specs reads "
                    f"{column} {row[column]!r}{' of ' + under if under else ''}{typo_of(key[i], known)}; "
                    f"they read: {', '.join(known) or 'none'}"
                )
