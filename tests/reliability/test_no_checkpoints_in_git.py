"""No checkpoint enters git (git keeps every byte forever): a cut GPU run's `state.pt` placed in a
record by `make gpu-unpack` stays on the machine that unpacked it, ignored, and resumes the run in
the next kit built there; a weights file belongs to DVC or nowhere."""

import shutil
import subprocess

import pytest

CHECKPOINTS = ("state.pt", "model.pt")


def git(repo_root, *args):
    return subprocess.run(["git", *args], cwd=repo_root, capture_output=True, text=True)


@pytest.fixture
def checkout(repo_root):
    if shutil.which("git") is None or git(repo_root, "rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout")
    return repo_root


def test_no_checkpoint_is_tracked(checkout):
    tracked = git(checkout, "ls-files").stdout.splitlines()
    assert [p for p in tracked if p.rsplit("/", 1)[-1] in CHECKPOINTS] == []


@pytest.mark.parametrize(
    "path", ["reports/device/rec/runs/wikiqa/m/seed1/state.pt", "reports/paper-apnet/runs/wikiqa/m/seed1/model.pt"]
)
def test_a_checkpoint_in_a_record_is_ignored(checkout, path):
    assert git(checkout, "check-ignore", "--no-index", "-q", path).returncode == 0, f"{path} is not ignored"
