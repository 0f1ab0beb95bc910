"""Downloads over HTTP from a local server (127.0.0.1) with the upstream URLs rewritten to it
(``data.upstream_rewrite``): the real sources' formats end to end. The faults a real download meets
are tests/reliability/test_downloads.py's."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile

import pytest

from ansel.data import download as dl
from ansel.data.manifest import write_manifest
from tests.upstream import GOOGLENEWS, MIRROR, WIKIQA_ZIP, http_upstream, leftovers, wikiqa_corpus_zip, word2vec_bin_gz  # noqa: F401 (a fixture)

# --- the real sources' formats, through the real CLI ---------------------------------------


def ansel(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ansel.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "ANSEL_DATA_MIRROR": "", **(env or {})},
    )


@pytest.mark.skipif(not (MIRROR / "wikiqa").is_dir(), reason="needs the WikiQA files of the mirror")
def test_wikiqa_zip_members_over_http(http_upstream, tmp_path):
    """WikiQACorpus.zip as Microsoft serves it, members verified against sources.yaml's sha256."""
    http_upstream.files[WIKIQA_ZIP] = wikiqa_corpus_zip()
    out = tmp_path / "raw/wikiqa/manifest.json"
    done = ansel("download", "--source", "wikiqa", "--config", "{}", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(out.read_text())) == ["WikiQA-dev.tsv", "WikiQA-test.tsv", "WikiQA-train.tsv"]


def glove_zip() -> bytes:
    lines = "the 0.1 0.2 0.3\n. . . 1 2 3\nApple 4 5 6\nbroken 1 2\n"  # a spaced token; a malformed line
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("glove.840B.300d.txt", lines)
    return buf.getvalue()


def test_vectors_over_http_pinned_at_first_download_then_verified(http_upstream, tmp_path):
    """GloVe's zip and GoogleNews' .bin.gz fetched by the download rule's command, the first
    download's sha256 pinned and printed, a changed upstream refused from then on."""
    http_upstream.files["/nlp.stanford.edu/data/glove.840B.300d.zip"] = glove_zip()
    http_upstream.files[GOOGLENEWS] = word2vec_bin_gz([("the", [0.5, 0.25, 1.0]), ("apple", [1.0, 2.0, 3.0])])
    env = {dl.REWRITE_ENV: os.environ[dl.REWRITE_ENV]}
    for source, name in (("glove840b", "glove.840B.300d.zip"), ("googlenews", "GoogleNews-vectors-negative300.bin.gz")):
        out = tmp_path / f"raw/{source}/manifest.json"
        done = ansel("download", "--source", source, "--config", "{}", "--out", str(out), env=env)
        assert done.returncode == 0, done.stderr
        pinned = json.loads((out.parent / "pins.json").read_text())[name]
        assert pinned == hashlib.sha256((out.parent / name).read_bytes()).hexdigest()
        assert f"first download pinned: sha256 {pinned}" in done.stdout
    from ansel.data.vocab import Vocab
    from ansel.pretrained import load_pretrained

    vocab = Vocab(["<pad>", "<unk>", "the", "apple", ". . ."])
    matrix, coverage, report = load_pretrained(tmp_path / "raw/glove840b/glove.840B.300d.zip", vocab, 3)
    assert coverage == 1 and report.malformed == 1 and matrix[4].tolist() == [1, 2, 3]
    matrix, coverage, _ = load_pretrained(tmp_path / "raw/googlenews/GoogleNews-vectors-negative300.bin.gz", vocab, 3)
    assert matrix[3].tolist() == [1, 2, 3] and coverage == pytest.approx(2 / 3)

    # the embeddings rule's command reads them, and refuses a file changed since its download
    (tmp_path / "processed").mkdir()
    vocab.save(tmp_path / "processed/vocab.json")
    write_manifest(tmp_path / "processed/manifest.json")  # as preprocessing seals it
    zipped = tmp_path / "raw/glove840b/glove.840B.300d.zip"
    cfg = json.dumps({"pretrained": {"glove840b": str(zipped)}})
    args = (
        "embeddings",
        "--config",
        cfg,
        "--processed",
        str(tmp_path / "processed"),
        "--method",
        "glove840b",
        "--dim",
        "3",
        "--out",
        str(tmp_path / "emb/glove840b-3.npy"),
    )
    done = ansel(*args)
    assert done.returncode == 0, done.stderr
    assert (
        "1 malformed lines" in done.stdout
        and json.loads((tmp_path / "emb/glove840b-3.json").read_text())["coverage"] == 1
    )
    zipped.write_bytes(zipped.read_bytes() + b"\0")
    done = ansel(*args)
    assert done.returncode != 0 and f"{zipped}: changed since the download verified it" in done.stderr

    # the upstream changes: a re-fetch (manifest and file gone, the pin kept) is refused
    raw = tmp_path / "raw/glove840b"
    (raw / "manifest.json").unlink()
    (raw / "glove.840B.300d.zip").unlink()
    http_upstream.files["/nlp.stanford.edu/data/glove.840B.300d.zip"] = glove_zip() + b"changed"
    done = ansel("download", "--source", "glove840b", "--config", "{}", "--out", str(raw / "manifest.json"), env=env)
    assert done.returncode != 0 and "sha256 mismatch" in done.stderr and "glove.840B.300d.zip" in done.stderr
    assert leftovers(raw) == ["pins.json"]
