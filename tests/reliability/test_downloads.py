"""Issue 33 item 10: a download that fails (a 404, a connection cut mid-file, a stalled server, a
checksum mismatch) names URL and file and leaves nothing partial; a rerun then succeeds; a dataset
that only an upstream serves says, when that fails, how to use a local copy instead (the mirror)."""

from __future__ import annotations

import hashlib
import io
import re
import sys
import time

import pytest

from ansel.data import download as dl
from ansel.data.download import FetchError
from tests.upstream import http_upstream, leftovers  # noqa: F401 (a fixture)

BODY = b"x" * 100_000
SPEC = {
    "name": "file.txt",
    "sha256": hashlib.sha256(BODY).hexdigest(),
    "upstream": [{"url": "https://example.org/file.txt"}],
}


@pytest.mark.parametrize(
    "fault, says",
    [
        ("missing", "HTTP Error 404"),
        ("cut", "cut short: 50000 of 100000 bytes"),
        ("stall", "timed out"),
        ("corrupt", "sha256 mismatch"),
    ],
)
def test_a_failed_download_names_url_and_file_leaves_nothing_and_a_rerun_succeeds(http_upstream, tmp_path, fault, says):
    raw = tmp_path / "raw"
    http_upstream.files["/example.org/file.txt"] = BODY[:-1] + b"y" if fault == "corrupt" else BODY
    http_upstream.faults["/example.org/file.txt"] = fault
    started = time.monotonic()
    with pytest.raises(FetchError) as e:
        dl.fetch_file(SPEC, raw, None)
    assert time.monotonic() - started < 10
    message = str(e.value)
    assert says in message and f"{raw / 'file.txt'}" in message, message
    assert f"{http_upstream.url}/example.org/file.txt" in message
    assert not re.search(r"[0-9a-f]{12}-file", message), message  # the file's own name, not its temporary's
    assert leftovers(raw) == []  # no partial file, no temporary
    http_upstream.faults.clear()
    http_upstream.files["/example.org/file.txt"] = BODY
    assert dl.fetch_file(SPEC, raw, None).read_bytes() == BODY
    assert leftovers(raw) == ["file.txt"]


def test_an_unreachable_upstream_without_a_mirror_names_the_mirror_setting(http_upstream, tmp_path):
    spec = {**SPEC, "mirror": {"path": "wikiqa/file.txt"}}  # nothing served: as offline as a 404 gets
    with pytest.raises(FetchError) as e:
        dl.fetch_file(spec, tmp_path / "raw", None)
    message = str(e.value)
    assert f"no mirror configured (data.mirror or ${dl.MIRROR_ENV}" in message and "wikiqa/file.txt" in message, message
    assert f"{http_upstream.url}/example.org/file.txt" in message
    assert leftovers(tmp_path / "raw") == []


# --- retries and resume (src/ansel/data/transfer.py) ---------------------------------------

PATH = "/example.org/file.txt"
VARIED = bytes(range(256)) * 400  # no two offsets alike: a resume from the wrong byte cannot verify
HALF = len(VARIED) // 2


def fetch_varied(http_upstream, tmp_path, faults, body=VARIED, **spec):
    http_upstream.files[PATH] = VARIED
    http_upstream.faults[PATH] = faults
    return dl.fetch_file({**SPEC, "sha256": hashlib.sha256(body).hexdigest(), **spec}, tmp_path / "raw", None)


def test_a_transient_503_is_retried(http_upstream, tmp_path):
    assert fetch_varied(http_upstream, tmp_path, ["503", None]).read_bytes() == VARIED
    assert http_upstream.requests == [PATH, PATH]


def test_a_connection_dropped_mid_body_resumes_with_a_range_request(http_upstream, tmp_path, capfd):
    http_upstream.honour_range, http_upstream.etags[PATH] = True, '"v1"'
    assert fetch_varied(http_upstream, tmp_path, ["cut", None]).read_bytes() == VARIED
    assert http_upstream.ranges == [None, f"bytes={HALF}-"]
    assert leftovers(tmp_path / "raw") == ["file.txt"]
    assert capfd.readouterr().err == ""  # no progress bar where stderr is no terminal


def test_a_progress_bar_shows_on_a_terminal(http_upstream, tmp_path, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", terminal := Terminal())
    fetch_varied(http_upstream, tmp_path, None)
    # the file by its own name: no temporary's prefix
    assert "\rfile.txt:   0%|" in terminal.getvalue() and " 0.00/100k " in terminal.getvalue(), terminal.getvalue()


def test_a_server_ignoring_range_restarts_from_zero(http_upstream, tmp_path):
    http_upstream.etags[PATH] = '"v1"'  # resumable by its ETag, but it answers a Range with the whole file
    assert fetch_varied(http_upstream, tmp_path, ["cut", None]).read_bytes() == VARIED
    assert http_upstream.ranges == [None, f"bytes={HALF}-"]


def test_a_changed_etag_restarts_from_zero(http_upstream, tmp_path):
    changed = VARIED[::-1]
    http_upstream.honour_range, http_upstream.etags[PATH] = True, '"v1"'
    http_upstream.after = lambda: (
        http_upstream.files.update({PATH: changed}),
        http_upstream.etags.update({PATH: '"v2"'}),
    )
    assert fetch_varied(http_upstream, tmp_path, ["cut", None], body=changed).read_bytes() == changed
    assert http_upstream.ranges == [None, f"bytes={HALF}-", None]  # the 206 of "v2" is dropped, the whole asked again


def test_a_resumed_download_that_does_not_verify_is_refused_and_leaves_nothing(http_upstream, tmp_path):
    """An upstream that changes under the same ETag: the resume lines up, the checksum does not."""
    http_upstream.honour_range, http_upstream.etags[PATH] = True, '"v1"'
    http_upstream.after = lambda: http_upstream.files.update({PATH: VARIED[::-1]})
    with pytest.raises(FetchError) as e:
        fetch_varied(http_upstream, tmp_path, ["cut", None])
    assert "sha256 mismatch" in str(e.value) and f"{tmp_path / 'raw' / 'file.txt'}" in str(e.value), e.value
    assert http_upstream.ranges == [None, f"bytes={HALF}-"]
    assert leftovers(tmp_path / "raw") == []
