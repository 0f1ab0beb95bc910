"""A directory's manifest, ``manifest.json``: the size and sha256 of every file in it, written
once its files are complete and checked before any of them is read.

Two directories carry one: ``data/raw/<source>/`` (written by ``ansel download`` once every file
verified, checked by ``ansel preprocess`` before a reader opens any of them) and
``data/processed/<dataset>/`` (written by ``Dataset.save``, checked by ``Dataset.load``: every job
that reads a processed dataset; ``check_processed``).

Format: ``{relpath: {"size": bytes, "sha256": hex}}`` for every file under the directory
(extracted archive members included; not a raw file the download set aside as ``<name>.rejected``, nor
a temporary a killed download left: ``download.is_left_out``; nor Snakemake's ``.snakemake_timestamp``, which
it adds to a processed dataset after preprocessing listed it). A manifest of the older format, ``{relpath: sha256}``,
is checked by sha256 alone. ``python -m ansel.data.manifest DIR`` lists a folder as it is (``--help``).

Checking compares each listed file's size first, then its sha256. A listed file that is
missing or differs is an error naming it, what differs and how to restore it; a file the
manifest does not list is ignored (the download lists everything it wrote, so readers only
open listed files; anything else was put there by hand), except that a processed dataset's manifest
must list each of its tables. Hashing costs about 7 ms for the
largest raw file of the mirror (TREC-QA's TRAIN-ALL, 10 MB), so it runs at every read, uncached.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ansel.data.download import FetchError, is_left_out, sha256_of
from ansel.files import write_text_atomic

MANIFEST = "manifest.json"
SNAKEMAKE_MARKER = ".snakemake_timestamp"  # in data/processed/<dataset>, the preprocess rule's directory() output


class ManifestError(FetchError):
    """A raw or processed file no longer matches its manifest; the message names it and the fix."""


def write_manifest(path: Path, temp_prefix: str = ".") -> dict:
    """List size and sha256 of every file under ``path``'s directory into ``path`` (atomically, through a
    temporary named ``temp_prefix...``); returns the entries."""
    raw = path.parent
    files = sorted(p for p in raw.rglob("*") if p.is_file() and p != path and not _left_out(p.relative_to(raw)))
    entries = {str(p.relative_to(raw)): {"size": p.stat().st_size, "sha256": sha256_of(p)} for p in files}
    write_text_atomic(path, json.dumps(entries, indent=1, sort_keys=True) + "\n", temp_prefix)
    return entries


def _left_out(rel: Path) -> bool:
    """A file kept aside or a download's temporary, or one in a folder so named (DVC leaves it out too);
    or Snakemake's marker of a directory output, which it writes after the step listed the folder."""
    return rel == Path(SNAKEMAKE_MARKER) or any(is_left_out(part) for part in rel.parts)


def check_manifest(raw: Path) -> None:
    """Raise ManifestError unless every file ``raw/manifest.json`` lists is there, unchanged."""
    # Removing the manifest is what reruns Snakemake's download job; fetch_file then keeps each
    # file that matches sources.yaml and fetches again one that does not.
    _check(
        raw,
        "the download verified it",
        "the raw files were not written by the download step; run it first (snakemake, or `ansel download`)",
        f"to restore the downloaded files, delete {raw / MANIFEST} and rerun snakemake (its download job "
        "checks every raw file against sources.yaml again and re-fetches any that differ)",
    )


def require_processed(processed: Path) -> None:
    """Raise ManifestError unless ``processed`` is a folder: a command names it before reading any of
    it (its files are checked as ``Dataset.load`` reads them)."""
    if not processed.is_dir():
        raise ManifestError(
            f"{processed}: no such folder: a processed dataset is what `ansel preprocess` writes (the pipeline's "
            "data/processed/<dataset>, e.g. `snakemake --profile workflow/profiles/local data/processed/wikiqa`)"
        )


def check_processed(processed: Path) -> dict:
    """Raise ManifestError unless every file of the processed dataset is as its preprocessing wrote it;
    returns the manifest's entries (the files written)."""
    rebuild = f"delete {processed} and rerun snakemake (every job that read it runs again after it)"
    # a dataset preprocessed before manifests existed: rebuilding it retrains every run of it, so
    # whoever knows its files untouched may list them as they are (which plans nothing new)
    seal = f"python -m ansel.data.manifest {processed}"
    require_processed(processed)
    entries = _check(
        processed,
        "its preprocessing wrote it",
        f"the dataset was not written by `ansel preprocess`, or by one before processed data carried "
        f"checksums: to preprocess it again, {rebuild}; or, if its files are surely as an earlier "
        f"preprocessing left them, list them as they are: {seal}",
        f"to preprocess it again, {rebuild}",
    )
    # Preprocessing lists every table it writes: an unlisted one would be read unchecked (a split's
    # candidates silently not at all: Dataset.load reads the splits the manifest lists). The
    # vocabulary, which a hand-built dataset may write after its tables, is checked where listed.
    written = ("questions.parquet", "answers.parquet", "candidates-*.parquet")
    unlisted = [p.name for g in written for p in sorted(processed.glob(g)) if p.name not in entries]
    if unlisted:
        raise ManifestError(
            f"{processed / MANIFEST}: does not list {', '.join(unlisted)}, which preprocessing writes and "
            f"lists; to preprocess it again, {rebuild}"
        )
    return entries


def _check(directory: Path, writer: str, missing: str, fix: str) -> dict:
    path = directory / MANIFEST
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{path}: missing: {missing}") from None
    except ValueError as e:
        raise ManifestError(f"{path}: not valid JSON ({e}); {fix}") from None
    if not isinstance(entries, dict):
        raise ManifestError(f"{path}: not a manifest (a JSON object of files); {fix}")
    for rel, entry in entries.items():
        expected = {"sha256": entry} if isinstance(entry, str) else entry
        if not (isinstance(expected, dict) and isinstance(expected.get("sha256"), str)):
            raise ManifestError(f"{path}: entry {rel!r}: not {{size, sha256}} but {entry!r}; {fix}")
        file = directory / rel
        if not file.is_file():
            raise ManifestError(f"{file}: listed in {path} but missing; {fix}")
        if "size" in expected and (size := file.stat().st_size) != expected["size"]:
            raise ManifestError(
                f"{file}: changed since {writer}: size {size} bytes, expected {expected['size']}; {fix}"
            )
        if (digest := sha256_of(file)) != expected["sha256"]:
            raise ManifestError(
                f"{file}: changed since {writer}: sha256 {digest}, expected {expected['sha256']}; {fix}"
            )
    return entries


def main(argv: list[str] | None = None) -> None:
    """``python -m ansel.data.manifest DIR``: DIR's files listed as they are now into DIR/manifest.json."""
    parser = argparse.ArgumentParser(
        prog="python -m ansel.data.manifest",
        description=f"List the size and sha256 of every file in FOLDER as it is now into FOLDER/{MANIFEST}, "
        "which every job reading the folder then checks: for a processed dataset made before processed data "
        "carried manifests, whose files are surely as its preprocessing left them (docs/data.md, 'Edits by hand'). "
        "An existing manifest is replaced.",
    )
    parser.add_argument(
        "folder", type=Path, metavar="FOLDER", help="data/processed/<dataset> (or a raw source's data/raw/<source>)"
    )
    folder = parser.parse_args(argv).folder
    if not folder.is_dir():
        parser.error(f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}")
    listed = write_manifest(folder / MANIFEST)
    print(f"{folder / MANIFEST}: {len(listed)} file(s) listed")


if __name__ == "__main__":
    main()
