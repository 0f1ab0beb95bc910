"""Writing a file or a directory atomically: a killed or failed writer never leaves half a file (or
half a record) under its name."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import os
import secrets
import shutil
from pathlib import Path
from typing import Callable, Iterator

SAVE_CAUSES = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied (operation not permitted)",
    errno.EROFS: "read-only file system",
}


@contextlib.contextmanager
def atomic_path(dest: Path, prefix: str = ".") -> Iterator[Path]:
    """Yield a temporary path next to ``dest`` (``<prefix><name>.<hex>.part``); rename it to ``dest``
    only if the block succeeds, and remove it on any failure (a partial file would keep a full disk full).

    The temporary is created with the mode ``open()`` gives under the umask (not mkstemp's
    0600), so outputs are as readable in a shared project directory as any other file.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f"{prefix}{dest.name}.{secrets.token_hex(6)}.part")
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # O_EXCL: never another's temporary
    try:
        yield tmp
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def remove_temporaries(dest: Path, prefix: str = ".") -> None:
    """Remove the temporaries ``atomic_path`` made for ``dest`` that a killed writer left (SIGKILL and
    SIGTERM run no ``finally``). Only where no other writer of ``dest`` runs: a job that owns the file."""
    for tmp in dest.parent.glob(f"{glob.escape(prefix + dest.name)}.{'[0-9a-f]' * 12}.part"):
        tmp.unlink(missing_ok=True)


def save_atomic(path: Path | str, write: Callable[[Path], None], prefix: str = ".") -> None:
    """``write(tmp)`` into a temporary that replaces ``path`` once complete (``atomic_path``). On
    failure ``path`` is left as it was, no partial file stays, and an OSError names ``path`` and
    the cause."""
    save_atomic_together([(Path(path), write)], prefix)


def save_atomic_together(writes: list[tuple[Path, Callable[[Path], None]]], prefix: str = ".") -> None:
    """``save_atomic`` of several files as one: each written to its temporary before any replaces its
    file, so a kill leaves them all as they were or all new (but for the renames' microseconds)."""
    path = None
    try:
        with contextlib.ExitStack() as renames:
            for path, write in writes:
                write(renames.enter_context(atomic_path(path, prefix)))
    except BaseException as e:
        cause = e  # torch's zip writer, failing again as it closes, hides the OSError in the context
        while cause is not None and not isinstance(cause, OSError):
            cause = cause.__context__
        if cause is None:
            raise
        reason = SAVE_CAUSES.get(cause.errno, cause.strerror or str(cause))
        raise OSError(cause.errno, f"cannot save {path}: {reason}") from cause


def write_text_atomic(path: Path, text: str, prefix: str = ".") -> None:
    """``path.write_text(text)`` (UTF-8) through ``save_atomic``: every text file a run, a record or a plan writes."""
    save_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"), prefix)


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock (``flock``) on ``directory`` (created if missing): a second holder, another
    process included, waits. Released when the block ends or the process dies."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def replace_tree(staged: Path, dest: Path) -> None:
    """The directory ``staged`` (on ``dest``'s filesystem) in place of ``dest``, by renames: ``dest`` is
    whole before and whole after, never half of each (a failed rename puts the old one back)."""
    old = dest.with_name(f".{dest.name}.{secrets.token_hex(6)}.old")
    if dest.exists():
        os.replace(dest, old)
    try:
        os.replace(staged, dest)
    except BaseException:
        if old.exists():
            os.replace(old, dest)
        raise
    shutil.rmtree(old, ignore_errors=True)
