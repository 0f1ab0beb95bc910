"""`make pull`: every DVC-tracked output from the remote, then marked up to date for Snakemake.

Why a plain `dvc pull` is not enough: Snakemake (9.x, dag.py `update_needrun`) reruns a job when an
input is newer than its oldest output, whatever `--rerun-triggers` says, unless the input's
checksum equals one recorded under `.snakemake/`. A fresh clone has no `.snakemake/`, directories
and files over 1 MB are never checksummed, and `dvc pull` writes files in no particular order, so
file times alone would rerun preprocessing, embeddings and everything after them.

Why touching cannot hide a change: before any file time is set, `dvc status` must report that
every output and every declared dependency (code, params.yaml) matches dvc.lock, i.e. the files
are exactly what the recorded code and params produced. Only then `snakemake --touch --forceall`
re-stamps every output in DAG order and records Snakemake's own metadata for every job (so later
edits of params or rules rerun as usual); an output it finds missing, or any output Snakemake's
summary still plans to update, fails the pull.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import yaml

from ansel.config import ConfigError, root

PROFILE = "workflow/profiles/local"
NOT_TOUCHED = "not touched because they don't exist"
SHOWN = 20  # missing outputs named in the error; the rest counted


class PullError(RuntimeError):
    pass


def stage_targets(dvc_yaml: Path, stages: list[str] | None = None) -> list[str]:
    """The Snakemake target each DVC stage calls (`snakemake ... <target> [&& ...]`)."""
    defined = yaml.safe_load(dvc_yaml.read_text())["stages"]
    unknown = sorted(set(stages or []) - set(defined))
    if unknown:
        raise PullError(f"{dvc_yaml}: no stage {', '.join(unknown)}; stages: {', '.join(defined)}")
    targets = []
    for name in stages or defined:
        words = defined[name]["cmd"].split("&&")[0].split()
        if words[:1] != ["snakemake"]:
            raise PullError(f"{dvc_yaml}: stage {name} does not call snakemake: {defined[name]['cmd']!r}")
        targets.append(words[-1])
    return targets


def untouched(log: str) -> list[str]:
    """The outputs that `snakemake --touch` found missing (Snakemake warns once a job, naming them)."""
    named = (line.partition(f"{NOT_TOUCHED}: ")[2] for line in log.splitlines() if NOT_TOUCHED in line)
    return sorted({f for files in named for f in files.split(", ")})


def _run(args: list[str], root: Path, capture: bool = False) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=root, text=True, capture_output=capture)
    if done.returncode:
        detail = (done.stdout or "") + (done.stderr or "") if capture else ""
        raise PullError(f"`{' '.join(args)}` failed (exit {done.returncode}){': ' + detail if detail else ''}")
    return done


def repository_root(start: Path) -> Path:
    """The checkout holding ``start`` (``ansel.config.root``), which must be under DVC."""
    try:
        checkout = root(start)
    except ConfigError as e:
        raise PullError(str(e)) from None
    if not ((checkout / "dvc.yaml").is_file() and (checkout / ".dvc").is_dir()):
        raise PullError(f"{checkout}: not a DVC checkout of ansel (no dvc.yaml and .dvc/)")
    return checkout


def pull(root: Path, stages: list[str] | None = None) -> None:
    dvc = [sys.executable, "-m", "dvc"]
    snakemake = [sys.executable, "-m", "snakemake", "--profile", PROFILE]
    scope = ["--with-deps", *stages] if stages else []
    targets = stage_targets(root / "dvc.yaml", stages)  # a bad stage name stops before any transfer
    _run([*dvc, "pull", *scope], root)
    changed = json.loads(_run([*dvc, "status", "--json", *scope], root, capture=True).stdout or "{}")
    if changed:
        raise PullError(
            "dvc status: the workspace differs from dvc.lock, so file times are left alone "
            f"(run `dvc repro` to bring them in line):\n{json.dumps(changed, indent=1)}"
        )
    touched = _run([*snakemake, "--touch", "--forceall", *targets], root, capture=True)
    missing = untouched(touched.stdout + touched.stderr)
    if missing:
        more = [f"... and {len(missing) - SHOWN} more"] if len(missing) > SHOWN else []
        raise PullError(
            f"{len(missing)} outputs of snakemake {' '.join(targets)} missing after the pull: dvc.lock records "
            "none of them (is each under the outs of the dvc.yaml stage whose target makes it?):\n"
            + "\n".join(missing[:SHOWN] + more)
        )
    summary = _run([*snakemake, "--summary", *targets], root, capture=True).stdout
    pending = [row for row in csv.DictReader(io.StringIO(summary), delimiter="\t") if row["plan"] != "no update"]
    if pending:
        raise PullError(
            "snakemake still plans updates after the pull:\n"
            + "\n".join(f"{r['output_file']}: {r['status']} ({r['plan']})" for r in pending)
        )
    print(f"dvc status clean; snakemake {' '.join(targets)}: nothing to do")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m ansel.dvc_pull", description=__doc__.splitlines()[0])
    p.add_argument("stages", nargs="*", help="DVC stages to pull (with the stages they depend on); default: all")
    p.add_argument("--root", type=Path, help="repository root (default: the checkout holding the working directory)")
    a = p.parse_args(argv)
    try:
        pull(repository_root(a.root or Path.cwd()), a.stages or None)
    except PullError as e:
        sys.exit(f"make pull: {e}")


if __name__ == "__main__":
    main()
