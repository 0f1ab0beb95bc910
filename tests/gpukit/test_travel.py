"""`make gpu-travel` / `make gpu-home` around a device call: reports/ out of git's index and back."""

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.email=test@ansel", "-c", "user.name=test"]


def make(target: str, repo: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-s", target], cwd=repo, capture_output=True, text=True)


def committed_record(repo: Path) -> None:
    """A git repository of the Makefile and one record under reports/, committed."""
    (repo / "reports").mkdir(parents=True)
    shutil.copy(ROOT / "Makefile", repo)
    (repo / "reports/r.md").write_text("a record\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run([*GIT, "add", "."], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "r"], cwd=repo, check=True)


def test_a_second_travel_or_a_home_with_nothing_saved_says_why(tmp_path):
    """A new user's audit: a second `make gpu-travel` failed with a bare `Error 1`, no message."""
    repo = tmp_path / "repo"
    committed_record(repo)
    index = (repo / ".git/index").read_bytes()
    assert make("gpu-travel", repo).returncode == 0
    again = make("gpu-travel", repo)
    assert again.returncode != 0 and again.stderr.splitlines()[0] == (
        "make gpu-travel: already travelled (.git/ansel-index-before-gpu holds the index saved then): "
        "run make gpu-home first"
    )
    assert make("gpu-home", repo).returncode == 0 and (repo / ".git/index").read_bytes() == index
    home = make("gpu-home", repo)
    assert home.returncode != 0 and home.stderr.splitlines()[0] == (
        "make gpu-home: nothing to put back (no .git/ansel-index-before-gpu: make gpu-travel saves it)"
    )


def test_a_worktree_travels_and_comes_home(tmp_path):
    """A worktree's .git is a file: the saved index and the excludes are where git keeps them."""
    repo, tree = tmp_path / "repo", tmp_path / "tree"
    committed_record(repo)
    subprocess.run(["git", "worktree", "add", "-q", str(tree)], cwd=repo, check=True)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True).stdout
    travel = make("gpu-travel", tree)
    assert travel.returncode == 0, travel.stderr
    listed = subprocess.run(["git", "ls-files"], cwd=tree, capture_output=True, text=True).stdout
    assert "reports/r.md" not in listed and "Makefile" in listed
    home = make("gpu-home", tree)
    assert home.returncode == 0, home.stderr
    assert subprocess.run(["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True).stdout == status
    assert "ansel gpu-travel" not in (repo / ".git/info/exclude").read_text()
