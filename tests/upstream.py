"""A local stand-in for the upstream servers (127.0.0.1), for the tests that fetch over HTTP with
the URLs rewritten to it (``data.upstream_rewrite``): the files it serves, the faults it makes on
request, the paths asked for; and WikiQACorpus.zip as Microsoft serves it, built from the mirror."""

from __future__ import annotations

import contextlib
import gzip
import http.server
import io
import json
import os
import threading
import time
import zipfile
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pytest

MIRROR = Path(os.environ.get("ANSEL_DATA_MIRROR") or Path(__file__).parents[2] / "shared/datasets")
WIKIQA_ZIP = "/download.microsoft.com/download/E/5/F/E5FCFCEE-7005-4814-853D-DAA7C66507E0/WikiQACorpus.zip"
GOOGLENEWS = "/s3.amazonaws.com/dl4j-distribution/GoogleNews-vectors-negative300.bin.gz"


class Upstream(http.server.ThreadingHTTPServer):
    """Serves ``files`` (path -> bytes) with the ``etags`` given; ``faults`` (path -> 'cut' | 'stall' |
    'missing' | '503', or a list of them, one per request, the last kept; None: no fault) misbehave;
    ``requests`` lists the paths asked for and ``ranges`` the Range header of each (None: none).
    With ``honour_range`` a Range is served as a 206, If-Range ignored (a sloppy server: the
    client checks what it resumes); ``after`` runs after each answer (an upstream that changes)."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.etags: dict[str, str] = {}
        self.faults: dict[str, str | None | list[str | None]] = {}
        self.requests: list[str] = []
        self.ranges: list[str | None] = []
        self.honour_range = False
        self.after: Callable[[], None] = lambda: None
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def fault(self, path: str) -> str | None:
        fault = self.faults.get(path)
        if isinstance(fault, list):
            return fault.pop(0) if len(fault) > 1 else fault[0]
        return fault


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        server = self.server
        server.requests.append(self.path)
        server.ranges.append(self.headers.get("Range"))
        fault, body = server.fault(self.path), server.files.get(self.path)
        try:
            self._answer(fault, body)
        finally:
            server.after()

    def _answer(self, fault, body):
        if body is None or fault == "missing":
            self.send_error(404)
            return
        if fault == "503":
            self.send_error(503)
            return
        if fault == "stall":
            time.sleep(3)
        asked = self.headers.get("Range", "")
        start = int(asked[len("bytes=") :].rstrip("-")) if self.server.honour_range and asked else None
        self.send_response(200 if start is None else 206)
        if start is not None:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            body = body[start:]
        if self.path in self.server.etags:
            self.send_header("ETag", self.server.etags[self.path])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (stall)
            self.wfile.write(body[: len(body) // 2] if fault == "cut" else body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving() -> Iterator[Upstream]:
    server = Upstream()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def http_upstream(monkeypatch) -> Iterator[Upstream]:
    """A server the upstream URLs are rewritten to (https://host/path -> <server>/host/path), with a
    1 s stall timeout."""
    from ansel.data import download

    with serving() as server:
        monkeypatch.setenv(download.REWRITE_ENV, json.dumps({"https://": f"{server.url}/"}))
        monkeypatch.setenv(download.TIMEOUT_ENV, "1")
        yield server


def leftovers(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*")) if d.exists() else []


def wikiqa_corpus_zip() -> bytes:
    """WikiQACorpus.zip's three splits (the members sources.yaml takes), from the mirror's copies."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for split in ("train", "dev", "test"):
            z.writestr(
                f"WikiQACorpus/WikiQA-{split}.tsv",
                gzip.decompress((MIRROR / f"wikiqa/WikiQA-{split}.tsv.gz").read_bytes()),
            )
    return buf.getvalue()


def word2vec_bin_gz(words: list[tuple[str, list[float]]]) -> bytes:
    """Vectors in GoogleNews' format: word2vec binary (a "count dim" line, then each word, a space and
    its float32 values), gzipped."""
    dim = len(words[0][1])
    body = b"".join(w.encode() + b" " + np.asarray(v, "<f4").tobytes() + b"\n" for w, v in words)
    return gzip.compress(f"{len(words)} {dim}\n".encode() + body)
