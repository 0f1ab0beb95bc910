"""Downloads over HTTP from a local server (127.0.0.1) with the upstream URLs rewritten to it
(``data.upstream_rewrite``): the real sources' formats end to end, and the faults a real download
meets (404, a connection cut mid-file, a checksum mismatch, a stall), each a clear error naming
URL and file, nothing partial left, and a rerun that then succeeds."""
from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from ansel.data import download as dl
from ansel.data.download import FetchError
from tests.upstream import GOOGLENEWS, MIRROR, WIKIQA_ZIP, serving, wikiqa_corpus_zip, word2vec_bin_gz

@pytest.fixture
def server(monkeypatch):
    with serving() as srv:
        monkeypatch.setenv(dl.REWRITE_ENV, json.dumps({"https://": f"{srv.url}/"}))
        monkeypatch.setenv(dl.TIMEOUT_ENV, "1")
        yield srv


def leftovers(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*")) if d.exists() else []


# --- the real sources' formats, through the real CLI ---------------------------------------

def ansel(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ansel.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "ANSEL_DATA_MIRROR": "", **(env or {})})


@pytest.mark.skipif(not (MIRROR / "wikiqa").is_dir(), reason="needs the WikiQA files of the mirror")
def test_wikiqa_zip_members_over_http(server, tmp_path):
    """WikiQACorpus.zip as Microsoft serves it, members verified against sources.yaml's sha256."""
    server.files[WIKIQA_ZIP] = wikiqa_corpus_zip()
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


def test_vectors_over_http_pinned_at_first_download_then_verified(server, tmp_path):
    """GloVe's zip and GoogleNews' .bin.gz fetched by the download rule's command, the first
    download's sha256 pinned and printed, a changed upstream refused from then on."""
    server.files["/nlp.stanford.edu/data/glove.840B.300d.zip"] = glove_zip()
    server.files[GOOGLENEWS] = word2vec_bin_gz([("the", [0.5, 0.25, 1.0]), ("apple", [1.0, 2.0, 3.0])])
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
    zipped = tmp_path / "raw/glove840b/glove.840B.300d.zip"
    cfg = json.dumps({"pretrained": {"glove840b": str(zipped)}})
    args = ("embeddings", "--config", cfg, "--processed", str(tmp_path / "processed"), "--method", "glove840b",
            "--dim", "3", "--out", str(tmp_path / "emb/glove840b-3.npy"))
    done = ansel(*args)
    assert done.returncode == 0, done.stderr
    assert "1 malformed lines" in done.stdout and json.loads((tmp_path / "emb/glove840b-3.json").read_text())["coverage"] == 1
    zipped.write_bytes(zipped.read_bytes() + b"\0")
    done = ansel(*args)
    assert done.returncode != 0 and f"{zipped}: changed since the download verified it" in done.stderr

    # the upstream changes: a re-fetch (manifest and file gone, the pin kept) is refused
    raw = tmp_path / "raw/glove840b"
    (raw / "manifest.json").unlink()
    (raw / "glove.840B.300d.zip").unlink()
    server.files["/nlp.stanford.edu/data/glove.840B.300d.zip"] = glove_zip() + b"changed"
    done = ansel("download", "--source", "glove840b", "--config", "{}", "--out", str(raw / "manifest.json"), env=env)
    assert done.returncode != 0 and "sha256 mismatch" in done.stderr and "glove.840B.300d.zip" in done.stderr
    assert leftovers(raw) == ["pins.json"]


# --- faults ----------------------------------------------------------------------------------

BODY = b"x" * 100_000


def spec(server) -> dict:
    return {"name": "file.txt", "sha256": hashlib.sha256(BODY).hexdigest(),
            "upstream": [{"url": "https://example.org/file.txt"}]}


@pytest.mark.parametrize("fault, says", [("missing", "HTTP Error 404"), ("cut", "cut short: 50000 of 100000 bytes"),
                                         ("stall", "timed out"), ("corrupt", "sha256 mismatch")])
def test_a_failed_download_names_url_and_file_leaves_nothing_and_a_rerun_succeeds(server, tmp_path, fault, says):
    raw = tmp_path / "raw"
    server.files["/example.org/file.txt"] = BODY[:-1] + b"y" if fault == "corrupt" else BODY
    server.faults["/example.org/file.txt"] = fault
    started = time.monotonic()
    with pytest.raises(FetchError) as e:
        dl.fetch_file(spec(server), raw, None)
    assert time.monotonic() - started < 10
    message = str(e.value)
    assert says in message and f"{raw / 'file.txt'}" in message, message
    assert f"{server.url}/example.org/file.txt" in message
    assert leftovers(raw) == []  # no partial file, no temporary
    server.faults.clear()
    server.files["/example.org/file.txt"] = BODY
    assert dl.fetch_file(spec(server), raw, None).read_bytes() == BODY
    assert leftovers(raw) == ["file.txt"]
