#!/usr/bin/env bash
# The peer's own environment (benchmarks/peer/.venv, never the project's): MatchZoo-py 1.1.1 from the
# package index with its dependencies pinned for Python 3.11 (requirements*.txt), the shims of
# sitecustomize.py, and WikiQA from the mirror placed where MatchZoo-py's loader finds its download
# (a HOME of its own: benchmarks/peer/.home/.matchzoo/datasets/wiki_qa/). Run by `make bench-peer`;
# a second run reuses what is there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mirror="${ANSEL_DATA_MIRROR:-$here/../../../shared/datasets}"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import matchzoo" 2>/dev/null; then
  python3.11 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$here/requirements.txt"
  "$venv/bin/pip" install -q torch==2.13.0
  "$venv/bin/pip" install -q --no-deps -r "$here/requirements-nodeps.txt"
  cp "$here/sitecustomize.py" "$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')/"
fi
"$venv/bin/python" - "$mirror/wikiqa" "$here/.home/.matchzoo/datasets/wiki_qa/wikiqa" <<'PY'
"""WikiQACorpus.zip as Microsoft serves it (the members MatchZoo-py reads), from the mirror's copies."""
import gzip, sys, zipfile
from pathlib import Path

src, dst = Path(sys.argv[1]), Path(sys.argv[2])
if not (src / "WikiQA-train.tsv.gz").exists():
    sys.exit(f"setup.sh: no WikiQA in the mirror ({src}): set ANSEL_DATA_MIRROR")
if not dst.exists():
    dst.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
        for split in ("train", "dev", "test"):
            z.writestr(f"WikiQACorpus/WikiQA-{split}.tsv", gzip.decompress((src / f"WikiQA-{split}.tsv.gz").read_bytes()))
            for ref in (f"WikiQA-{split}.ref", f"WikiQA-{split}-filtered.ref"):
                if (src / ref).exists():
                    z.write(src / ref, f"WikiQACorpus/{ref}")
PY
