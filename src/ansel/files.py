"""Writing a file atomically: a killed or failed writer never leaves half a file under its name."""
from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def atomic_path(dest: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``dest``; rename it to ``dest`` only if the block succeeds,
    and remove it on any failure (a partial file would keep a full disk full).

    The temporary is created with the mode ``open()`` gives under the umask (not mkstemp's
    0600), so outputs are as readable in a shared project directory as any other file.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{secrets.token_hex(6)}.part")
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # O_EXCL: never another's temporary
    try:
        yield tmp
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: Path, text: str) -> None:
    """``path.write_text(text)`` through ``atomic_path`` (``ansel.models.io.save_text`` imports torch)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
