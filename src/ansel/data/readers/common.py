"""Parsing helpers shared by the readers: every error names the file and the line."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
import pandas as pd

from ansel.data.canonical import Dataset
from ansel.data.download import TEMP_PREFIX, fetch_dataset
from ansel.data.preprocess import ReadOptionError, apply_options, check_options, from_pairs
from ansel.files import save_atomic
from ansel.settings import InputError
from ansel.typos import typo_of


class RawFormatError(ValueError, InputError):
    """A raw file does not have its documented format; the message names file and line."""


class Reader:
    """What every reader shares: its registered ``name`` (set by ``@source``), its own read
    ``options`` (COMMON_OPTIONS besides) and ``read``: the reader's ``pairs`` as canonical tables,
    then the common options. A reader writes ``pairs`` and, where it needs them, the hooks below;
    its class statement names its default ``tokenizer`` where that is not English."""

    name = ""
    options: dict[str, str] = {}
    tokenizer = "english"  # the default of read option ``tokenizer``
    produces: tuple[str, ...] = ()  # the split names it produces whatever its options, where fixed
    # the read option ({split: fraction}, the rest train) by which it splits at random, where it does
    fractions = ""
    ids_global = False  # from_pairs: one question may stand in several splits
    categories = False  # its questions carry a category (what MTAS's second task classifies)

    def __init_subclass__(cls, tokenizer: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if tokenizer:
            cls.tokenizer = tokenizer

    def fetch(self, raw_dir: Path, mirror: Path | None, options: dict[str, Any]) -> None:
        """The files ``sources.yaml`` lists under the reader's name (option ``files`` restricts)."""
        fetch_dataset(self.name, raw_dir, mirror, options)

    def splits(self, options: dict[str, Any], fetch: dict[str, Any] | None) -> tuple[str, ...]:
        """The split names ``read`` produces under read ``options`` and the download's ``fetch`` options
        (None: not known here), told before any file is read; () where they are not known."""
        return fraction_splits(options, self.fractions) if self.fractions else self.produces

    def check(self, options: dict[str, Any], fetch: dict[str, Any] | None = None) -> None:
        """Refuse a read option the reader does not know, naming the reader, or one it cannot apply
        (a split it names that the reader will not produce)."""
        check_options(self.name, options, self.options, self.splits(options, fetch))

    def read(self, raw_dir: Path, options: dict[str, Any]) -> Dataset:
        self.check(options)
        options = {**self.defaults(options), **options}
        return apply_options(self.tables(raw_dir, options), options)

    def pairs(self, raw_dir: Path, options: dict[str, Any]) -> pd.DataFrame:
        """One row per (question, candidate): the columns ``from_pairs`` reads."""
        raise NotImplementedError(f"{self.name}: a reader defines pairs or its own read")

    def defaults(self, options: dict[str, Any]) -> dict[str, Any]:
        """Read options the reader sets where the dataset's config does not (none by default)."""
        return {}

    def tables(self, raw_dir: Path, options: dict[str, Any]) -> Dataset:
        """The canonical tables of ``pairs``, before the common options."""
        tokenizer = options.get("tokenizer", self.tokenizer)
        return from_pairs(options.get("name", self.name), self.pairs(raw_dir, options), tokenizer, self.ids_global)


# The random split of a reader without an official one: read option ``split``'s default.
FRACTIONS = {"dev": 0.1, "test": 0.1}


def fraction_splits(options: dict[str, Any], key: str) -> tuple[str, ...]:
    """The splits of a reader that splits at random by read option ``key`` ({name: fraction}, the rest
    train): train and the option's names. Refused before any file is read, naming the key: anything but
    fractions in (0, 1) of splits other than train that leave train some (a sum below 1)."""
    fractions = options.get(key, FRACTIONS)
    if not isinstance(fractions, dict) or not fractions:
        raise ReadOptionError(f"{key}: {fractions!r} does not map split names to fractions, e.g. {FRACTIONS}")
    if "train" in fractions:
        raise ReadOptionError(f"{key}.train: train is what the other splits leave; give only their fractions")
    for name, share in fractions.items():
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
            raise ReadOptionError(f"{key}.{name}: {share!r} is not a fraction in (0, 1)")
    if (total := sum(fractions.values())) >= 1:
        raise ReadOptionError(
            f"{key}: the fractions sum to {total:g}, leaving nothing to train (the rest): keep them below 1"
        )
    return ("train", *fractions)


def file_splits(options: dict[str, Any], known: Iterable[str], key: str = "splits") -> tuple[str, ...]:
    """Read option ``key``: which of the ``known`` splits' files to read (default all), refused unless
    a list of them."""
    known = tuple(known)
    names = options.get(key, list(known))
    if not isinstance(names, list):
        raise ReadOptionError(f"{key}: {names!r} is not of type list")
    if bad := [s for s in names if s not in known]:
        raise ReadOptionError(f"{key}: unknown split(s) {bad}{typo_of(bad[0], known)}; known: {', '.join(known)}")
    return tuple(names)


def assign_splits(n: int, fractions: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """A split name for each of ``n`` items: in one random order, round(fraction * n) items to each
    named split in turn, the rest to train."""
    order = rng.permutation(n)
    names = np.full(n, "train", dtype=object)
    start = 0
    for name, frac in fractions.items():
        k = int(round(frac * n))
        names[order[start : start + k]] = name
        start += k
    return names


def write_tsv(path: Path, fields: list[str], rows: Iterable[dict]) -> None:
    """A generated raw file (header, then ``rows``), written atomically (through a download's temporary)."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fields, delimiter="\t", lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)

    save_atomic(path, write, TEMP_PREFIX)


class MissingRawFile(FileNotFoundError, InputError):
    """A raw file a reader needs is not in the source's download folder (``ansel preprocess`` names
    what the download did fetch)."""

    def __init__(self, path: Path):
        super().__init__(f"{path}: raw file missing (run the download step / fetch first)")
        self.path = path


def require(path: Path) -> Path:
    if not path.exists():
        raise MissingRawFile(path)
    return path


def read_text(path: Path, encoding: str = "utf-8") -> str:
    """The whole file decoded strictly; a decoding error names the line."""
    data = require(path).read_bytes()
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise RawFormatError(f"{path}: line {line}: not valid {encoding}: {e.reason} at byte {e.start}") from e


def lines(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """(line number, line without its CR/LF ending) for every line of the file."""
    text = read_text(path, encoding)
    for i, line in enumerate(text.split("\n"), 1):
        if line.endswith("\r"):
            line = line[:-1]
        if line or i <= text.count("\n"):  # no phantom empty line after the final newline
            yield i, line


def fields(
    path: Path, sep: str, n: int | None, encoding: str = "utf-8", skip_header: bool = False
) -> Iterator[tuple[int, list[str]]]:
    """Split each non-empty line on ``sep``; require exactly ``n`` fields (if given), and a line at all:
    an empty file would leave its split missing, and the option naming that split blamed."""
    read = 0
    for i, line in lines(path, encoding):
        if skip_header and i == 1 or not line.strip():
            continue
        parts = line.split(sep)
        if n is not None and len(parts) != n:
            raise RawFormatError(f"{path}: line {i}: expected {n} fields separated by {sep!r}, got {len(parts)}")
        read += 1
        yield i, parts
    if not read:
        raise RawFormatError(f"{path}: no data rows" + (" (only the header line)" if skip_header else " (empty)"))


def csv_records(path: Path, columns: list[str], encoding: str = "utf-8") -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, record) of a CSV file with a header (quoted fields may span lines)."""
    reader = csv.DictReader(io.StringIO(read_text(path, encoding), newline=""))
    missing = [c for c in columns if c not in (reader.fieldnames or [])]
    if missing:
        raise RawFormatError(f"{path}: line 1: missing column(s) {missing}; header: {reader.fieldnames}")
    read = 0
    try:
        for rec in reader:
            if None in rec or any(rec[c] is None for c in columns):
                raise RawFormatError(f"{path}: line {reader.line_num}: expected {len(reader.fieldnames)} fields")
            read += 1
            yield reader.line_num, rec
    except csv.Error as e:
        raise RawFormatError(f"{path}: line {reader.line_num}: {e}") from e
    if not read:  # as fields
        raise RawFormatError(f"{path}: no data rows (only the header line)")


def once(key: str, line: int, seen: dict[str, int], path: Path, what: str = "") -> None:
    """Refuse an id given twice in a file (one of its texts would silently win), naming both lines."""
    if key in seen:
        raise RawFormatError(f"{path}: line {line}: {what}{key!r} already given at line {seen[key]}")
    seen[key] = line


def label(value: str, path: Path, line: int) -> int:
    value = value.strip()
    if value not in ("0", "1"):
        raise RawFormatError(f"{path}: line {line}: label {value!r} is not 0/1")
    return int(value)
