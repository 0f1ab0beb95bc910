"""The ``ansel`` console script. In a local Snakemake run (``ANSEL_FORKSERVER`` set) it hands the
job to the warm-job server before importing anything else (``ansel.forkclient``: the standard
library only; the verbs' module takes ~25 ms to import, 680 times in the smoke DAG); otherwise, or
when no server takes the job, ``ansel.commands`` parses and runs it here."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    if argv is None and os.environ.get("ANSEL_FORKSERVER"):
        from ansel.forkclient import run_remote

        code = run_remote(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    from ansel.commands import main as run_here

    run_here(argv)


if __name__ == "__main__":
    main()
