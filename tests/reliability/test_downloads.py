"""Issue 33 item 10: a download that fails (a 404, a connection cut mid-file, a stalled server, a
checksum mismatch) names URL and file and leaves nothing partial; a rerun then succeeds; a dataset
that only an upstream serves says, when that fails, how to use a local copy instead (the mirror)."""
from __future__ import annotations

import hashlib
import time

import pytest

from ansel.data import download as dl
from ansel.data.download import FetchError
from tests.upstream import http_upstream, leftovers  # noqa: F401 (a fixture)

BODY = b"x" * 100_000
SPEC = {"name": "file.txt", "sha256": hashlib.sha256(BODY).hexdigest(),
        "upstream": [{"url": "https://example.org/file.txt"}]}


@pytest.mark.parametrize("fault, says", [("missing", "HTTP Error 404"), ("cut", "cut short: 50000 of 100000 bytes"),
                                         ("stall", "timed out"), ("corrupt", "sha256 mismatch")])
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
