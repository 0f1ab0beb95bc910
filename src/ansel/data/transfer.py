"""One HTTP(S) download into a given file: retried, resumed after a dropped connection, with a progress bar.

The library: requests over urllib3, whose ``Retry`` retries a request that failed before its body
(a refused or reset connection, a stall before the headers, 408/429/5xx answers, honouring
Retry-After up to a cap) with exponential backoff. pooch was considered and not taken: its HTTP
downloader truncates the output on every try (no Range, so no resume), retries only through a
registry-backed ``Pooch`` object (``retrieve`` has none) by re-downloading the whole file, and
its bars count chunk sizes, not bytes; it would be requests underneath with less control.

No well-kept Python library resumes a plain HTTP download, so the resume is written here, as
small as RFC 9110 allows: after a connection dropped mid-body, the next request asks for
``Range: bytes=<have>-`` with ``If-Range: <validator>`` (the first answer's strong ETag, else its
Last-Modified); a 206 is appended only when its Content-Range starts at ``<have>``, its total and
validator are the first answer's; anything else (a 200: Range or If-Range not honoured; a 206 that
does not line up; a 416) restarts from zero. An answer with no validator is never resumed. A try
that ends no further than the furthest byte reached before counts against ``drops``, so a
download that keeps gaining goes on and one that stopped gaining fails.

The bytes are written as sent (``Accept-Encoding: identity``, never decoded): Range offsets count
encoded bytes, and a checksum is of the file as published.
"""

from __future__ import annotations

import sys
from pathlib import Path

import requests
import urllib3
from requests.adapters import HTTPAdapter
from tqdm import tqdm
from urllib3.util import Retry

RETRIES = 3  # per request, before its body: attempts 1 + 3, backoff 0, 0.5, 1 s
DROPS = 3  # tries that gained no byte past the furthest reached, then the download fails
RETRY_STATUSES = (408, 429, 500, 502, 503, 504)
_CHUNK = 1 << 20


class TransferError(Exception):
    """The download failed; the message says how (HTTP status, cut short, timed out)."""


def _session() -> requests.Session:
    retry = Retry(
        total=RETRIES,
        status_forcelist=RETRY_STATUSES,
        allowed_methods={"GET"},
        backoff_factor=0.25,
        backoff_max=10,
        retry_after_max=120,
        raise_on_status=False,
    )
    session = requests.Session()
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.mount("https://", HTTPAdapter(max_retries=retry))
    return session


def _validator(response: requests.Response) -> str | None:
    etag = response.headers.get("ETag")
    return etag if etag and not etag.startswith("W/") else response.headers.get("Last-Modified")


def download(url: str, path: Path, timeout: float, label: str) -> None:
    """The body of ``url`` into ``path`` (an existing empty file), complete, or raise TransferError.
    ``timeout``: seconds to connect and for any wait for data; ``label`` names the progress bar."""
    total: int | None = None
    validator: str | None = None
    furthest = drops = tries = 0
    with (
        _session() as session,
        open(path, "r+b") as out,
        tqdm(
            desc=label, unit="B", unit_scale=True, unit_divisor=1024, leave=False, file=sys.stderr, disable=None
        ) as bar,
    ):  # disable=None: no bar unless stderr is a terminal (so none in tests or logs)
        while True:
            have = out.seek(0, 2)
            headers = {"Accept-Encoding": "identity"}
            if have and validator:
                headers |= {"Range": f"bytes={have}-", "If-Range": validator}
            resuming = "Range" in headers
            try:
                response = session.get(url, headers=headers, timeout=timeout, stream=True)
            except requests.RequestException as e:  # urllib3 has retried it already
                raise TransferError(_why(e)) from e
            tries += 1
            error = ""
            with response:
                status = response.status_code
                if resuming and status == 206 and _lines_up(response, have, total, validator):
                    pass  # the rest of the same file: append
                elif resuming and status in (206, 416):
                    out.truncate(0)  # not the rest of the file we have: start again
                    continue
                elif status == 200:  # the whole file (Range or If-Range not honoured when resuming)
                    out.truncate(0)
                    out.seek(0)
                    validator, total = _validator(response), _length(response)
                    bar.reset(total)
                else:  # an error, or a status no plain or Range GET should get
                    retried = len(response.raw.retries.history) if response.raw.retries else 0
                    raise TransferError(
                        f"HTTP {'Error ' if status >= 400 else ''}{status}: {response.reason}"
                        + (f" (after {retried} retries)" if retried else "")
                    )
                try:
                    for chunk in response.raw.stream(_CHUNK, decode_content=False):
                        out.write(chunk)
                        bar.update(len(chunk))
                except urllib3.exceptions.HTTPError as e:  # the connection dropped or stalled mid-body
                    error = f"{type(e).__name__}: {e}"
            have = out.tell()
            if (have == total) if total is not None else not error:  # every byte announced, or a clean end
                return
            if total is not None and have > total:  # a 206 that sent more than its range: never gains to an end
                raise TransferError(f"{have} bytes, more than its length {total}")
            furthest, drops = (have, drops) if have > furthest else (furthest, drops + 1)
            if drops >= DROPS:
                short = f"cut short: {have} of {total} bytes" if total is not None else "cut short"
                raise TransferError(
                    f"{short} after {tries} tries, the last {drops} gaining nothing "
                    f"(last: {error or 'connection closed'})"
                )


def _why(e: requests.RequestException) -> str:
    """The failure under requests' wrapper of urllib3's retries (a refused connection, a stall)."""
    cause = e.args[0] if e.args else None
    if isinstance(cause, urllib3.exceptions.MaxRetryError) and cause.reason is not None:
        return f"{type(cause.reason).__name__}: {cause.reason} (after {RETRIES} retries)"
    return f"{type(e).__name__}: {e}"


def _length(response: requests.Response) -> int | None:
    given = response.headers.get("Content-Length")
    return int(given) if given is not None and given.isdigit() else None


def _lines_up(response: requests.Response, have: int, total: int | None, validator: str | None) -> bool:
    """Whether a 206 continues the file begun: from byte ``have``, the same total and validator."""
    try:
        unit, _, spec = response.headers["Content-Range"].partition(" ")
        span, _, length = spec.partition("/")
        start = int(span.split("-")[0])
    except (KeyError, ValueError):
        return False
    return unit == "bytes" and start == have and length == str(total) and _validator(response) == validator
