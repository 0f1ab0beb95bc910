"""A save that fails says which file and why, removes its partial temporary file (which would keep
a full disk full) and leaves the previous file whole: every file `ansel train` and `ansel evaluate`
write goes through ansel.files.save_atomic.

Failures are injected where the OS reports them, at the opened file: a write that raises ENOSPC
after some bytes landed, an open refused with EACCES/EPERM (this container runs as root, which file
modes do not stop; the real read-only directory test runs only as another user). A real full disk
is a small tmpfs, where mounting one is allowed (root)."""

import builtins
import errno
import io
import os
import subprocess
from pathlib import Path

import pytest
import torch

from ansel.models.io import save_torch

RUN_FILES = [
    "state.pt",
    "model.pt",
    "log.csv",
    "config.json",
    "seed1.json",
    "dev_scores.pt",
    "metrics.json",
    "run.trec",
]  # in the order they are first written; seed1.json: the timings


class _FullDisk(io.FileIO):
    """A file on a disk that fills up: a few bytes land, then ENOSPC."""

    def write(self, b):
        super().write(bytes(b)[:64])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _full_disk(file, mode):
    raw = _FullDisk(file, "w")
    return raw if "b" in mode else io.TextIOWrapper(io.BufferedWriter(raw))


def _refused(code):
    def fail(file, mode):
        raise PermissionError(code, os.strerror(code), str(file))

    return fail


def _break_saves(monkeypatch, name: str, fail, skip: int = 0) -> None:
    """Opening the temporary of ``name`` (``.<name>.<hex>.part``, ansel.files.atomic_path) for writing
    goes through ``fail(file, mode)``, after ``skip`` good saves."""
    real, seen = builtins.open, []

    def fake(file, mode="r", *args, **kwargs):
        if (
            isinstance(file, (str, os.PathLike))
            and Path(file).name.startswith(f".{name}.")
            and Path(file).suffix == ".part"
            and "w" in mode
        ):
            seen.append(file)
            if len(seen) > skip:
                return fail(file, mode)
        return real(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake)
    monkeypatch.setattr(io, "open", fake)  # pathlib's write_text


def _tmp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.suffix in (".part", ".tmp")]


@pytest.mark.parametrize("name", RUN_FILES)
def test_a_full_disk_names_the_file_and_leaves_no_partial_file(train_and_evaluate, tmp_path, monkeypatch, name):
    _break_saves(monkeypatch, name, _full_disk)
    with pytest.raises(
        OSError,
        match=rf"^\[Errno {errno.ENOSPC}\] cannot save {tmp_path}/\S*{name}: "
        "no space left on device$",
    ) as e:
        train_and_evaluate(tmp_path / "run", tmp_path / "timings/seed1.json")
    assert e.value.errno == errno.ENOSPC
    assert _tmp_files(tmp_path) == []


def test_a_full_disk_keeps_the_previous_state_and_the_rerun_resumes_from_it(
    train_and_evaluate, tmp_path, monkeypatch, capsys
):
    _break_saves(monkeypatch, "state.pt", _full_disk, skip=1)  # epoch 1's state is saved, epoch 2's is not
    with pytest.raises(OSError, match="state.pt: no space left on device"):
        train_and_evaluate(tmp_path / "run", tmp_path / "timings/seed1.json")
    assert _tmp_files(tmp_path) == []
    assert torch.load(tmp_path / "run/state.pt", weights_only=True)["epoch"] == 1
    monkeypatch.undo()
    train_and_evaluate(tmp_path / "run", tmp_path / "timings/seed1.json")
    assert "resuming from epoch 1 of 2" in capsys.readouterr().out
    assert (tmp_path / "run/metrics.json").exists() and not (tmp_path / "run/state.pt").exists()


@pytest.mark.parametrize("code", [errno.EPERM, errno.EACCES])
def test_a_refused_save_names_the_file_and_the_permission(train_and_evaluate, tmp_path, monkeypatch, code):
    _break_saves(monkeypatch, "state.pt", _refused(code))
    with pytest.raises(OSError, match=rf"cannot save {tmp_path}/run/state.pt: permission denied") as e:
        train_and_evaluate(tmp_path / "run", tmp_path / "timings/seed1.json")
    assert e.value.errno == code and _tmp_files(tmp_path) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_run_directory_names_the_file_and_the_permission(train_and_evaluate, tmp_path):
    run = tmp_path / "run"
    (run / "dvclive").mkdir(parents=True)  # the logger's own directory stays writable
    run.chmod(0o555)
    try:
        with pytest.raises(OSError, match=rf"cannot save {run}/state.pt: permission denied"):
            train_and_evaluate(tmp_path / "run", tmp_path / "timings/seed1.json")
    finally:
        run.chmod(0o755)


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs (needs the right to mount: root)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    yield disk
    subprocess.run(["umount", str(disk)], check=True)


def test_a_really_full_disk_names_the_file_and_keeps_the_previous_one(small_disk):
    # torch.save's zip writer, failing again as it closes, raises a RuntimeError that hides the OSError
    save_torch({"w": torch.ones(100)}, small_disk / "state.pt")
    with pytest.raises(OSError, match=rf"cannot save {small_disk}/state.pt: no space left on device"):
        save_torch({"w": torch.ones(100_000)}, small_disk / "state.pt")
    assert [p.name for p in small_disk.iterdir()] == ["state.pt"]
    assert torch.equal(torch.load(small_disk / "state.pt", weights_only=True)["w"], torch.ones(100))
