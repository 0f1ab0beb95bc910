"""The committed dvc.lock was made by the code and params of this checkout: in a fresh clone
`dvc status` may only report data (outputs not in the cache, earlier stages' outputs deleted), never
a changed code or params dependency.

When this fails, the lock is stale: rebuild it with `dvc repro` (the smoke preset, ~10 min on
2 cores) and commit dvc.lock with the change."""

import json
import subprocess
import sys

import yaml


def test_dvc_lock_matches_the_code_and_params(repo_root):
    stages = yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"]
    outputs = {next(iter(o)) if isinstance(o, dict) else o for s in stages.values() for o in s["outs"]}
    done = subprocess.run(
        [sys.executable, "-m", "dvc", "status", "--json"], cwd=repo_root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    stale = {}
    for stage, changes in json.loads(done.stdout or "{}").items():
        for change in changes:
            if not isinstance(change, dict):  # e.g. "changed command", "always changed"
                stale.setdefault(stage, []).append(change)
                continue
            # an earlier stage's output as a dependency is data, absent from a fresh clone: not code
            deps = {d: how for d, how in change.get("changed deps", {}).items() if d not in outputs}
            if deps:  # beside a "changed command" of the same stage, say
                stale.setdefault(stage, []).append(deps)
    assert stale == {}, f"dvc.lock is stale (run `dvc repro` and commit dvc.lock): {json.dumps(stale)}"
