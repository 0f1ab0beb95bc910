"""The code a training run depends on, as one digest (the train rule's param, so an edit of it
reruns exactly the runs it trains; each run's timings record it), and the commit it came from.

The modules: what ``ansel train`` runs (``ansel.training.command``: resolving and checking the
config, loading the data and vectors, the trainer, the dev evaluation that selects the epoch),
the run's architecture module (where it is registered), and every ``ansel`` module they import,
transitively, at module level or inside a function (builders import their building blocks when
called; the sampler's scoring of negatives is among them). Two are not followed: the evaluate
stage's ``ansel.evaluation.evaluate`` (the dev evaluator the command hands the trainer; it and the
metrics it imports are the evaluate rule's inputs, so an edit of them re-scores and does not
retrain: DESIGN principle 8, evaluation is a stage of its own), and ``commands.py``, which parses every
verb's command line and hands the train command its arguments.
The registry finds the architectures by listing their package, not by importing them by name, so
the other architectures are not among them: an edit of one architecture retrains only its runs
(and those of the architectures that import it). The digest is over the modules' bytes: an edit
that changes no behaviour (a comment) also retrains, as Snakemake's own ``code`` trigger does for
a rule's command. Read from ``src/ansel`` of the checkout; no import runs.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import subprocess
from pathlib import Path

PACKAGE = Path(__file__).parent
ENTRIES = ("ansel.training.command",)
OWN_STAGE = frozenset({"ansel.evaluation.evaluate"})  # imported by the command, digested by the evaluate rule


def module_file(name: str) -> Path | None:
    """The source of an ``ansel`` module (a package: its ``__init__.py``), or None outside ansel."""
    if name != "ansel" and not name.startswith("ansel."):
        return None
    path = PACKAGE.joinpath(*name.split(".")[1:])
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def _imports(name: str) -> frozenset[str]:
    """The ansel modules ``name`` imports anywhere in its source (absolute imports: the house style)."""
    tree = ast.parse(module_file(name).read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)  # `from pkg import module`
    return frozenset(n for n in found if module_file(n) is not None)


def closure(entries: tuple[str, ...]) -> list[str]:
    """Every ansel module reachable from ``entries`` (with the packages' ``__init__`` that importing runs),
    not through another stage's module (``OWN_STAGE``)."""
    seen: set[str] = set()
    todo = list(entries)
    while todo:
        name = todo.pop()
        if name in seen or name in OWN_STAGE:
            continue
        seen.add(name)
        parents = [".".join(name.split(".")[:i]) for i in range(2, name.count(".") + 1)]
        todo += [*_imports(name), *(p for p in parents if module_file(p))]
    return sorted(seen)


@functools.cache
def train_code_digest(arch_module: str) -> str:
    """sha256 (16 hex digits) over the names and bytes of the modules a run of ``arch_module`` trains with."""
    h = hashlib.sha256()
    for name in closure((*ENTRIES, arch_module)):
        h.update(name.encode() + b"\0" + module_file(name).read_bytes() + b"\0")
    return h.hexdigest()[:16]


# {checkout: its commit} as a warm-job server (``ansel.forkserver``) started: its jobs inherit it
_SERVED: dict[Path, str | None] = {}


def serve_checkout(where: Path) -> None:
    """Fix ``checkout_commit`` of ``where`` for this process and the jobs it forks: they run the code
    it imported as it started, so that checkout's commit is theirs (and no job starts git twice)."""
    _SERVED[where.resolve()] = checkout_commit(where)


def checkout_commit(where: Path | None = None) -> str | None:
    """The git commit of the checkout at ``where`` (the working directory by default), ``+dirty``
    when tracked files differ from it; in a GPU record kit (no git there) the commit it was packed
    from (``ANSEL_KIT_COMMIT``); in a job of a warm-job server, the commit as the server started
    (``serve_checkout``); None outside a git checkout (a copied tree, an sdist). Each run's
    timings and each kit record it."""
    if os.environ.get("ANSEL_KIT_COMMIT"):
        return os.environ["ANSEL_KIT_COMMIT"]
    served = Path(where or os.getcwd()).resolve()
    if served in _SERVED:
        return _SERVED[served]

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None
    return commit + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")
