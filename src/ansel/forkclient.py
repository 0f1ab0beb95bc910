"""The client side of warm jobs (``ansel.forkserver``): ``ansel <verb>`` hands its job to the
server named by ``ANSEL_FORKSERVER`` and exits with the forked child's status. Standard library
only, so a job that a server takes costs a bare Python start."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

ENV = "ANSEL_FORKSERVER"
_HANDSHAKE_TIMEOUT = 300  # s a client waits for its child to start (the server may still be importing)


def run_remote(argv: list[str]) -> int | None:
    """Run ``ansel argv`` in a child of the server; its exit status, or None when no server took
    the job (nothing ran: run it here)."""
    path = os.environ.get(ENV)
    if not path:
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        socket.send_fds(conn, [b"F"], [0, 1, 2])
        header = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        conn.sendall(struct.pack("!I", len(header)) + header)
        conn.settimeout(_HANDSHAKE_TIMEOUT)
        replies = conn.makefile("rb")
        started = replies.readline().split()
    except OSError:  # no server, or it went away before taking the job
        conn.close()
        return None
    if started[:1] != [b"pid"]:
        conn.close()
        return None
    child = int(started[1])
    forward = lambda sig, _frame: _kill(child, sig)  # noqa: E731
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    conn.settimeout(None)
    try:
        status = replies.readline().split()
    except OSError:
        status = []
    if status[:1] == [b"exit"]:
        return int(status[1])
    print(f"ansel: its worker process {child} ended without an exit status (killed?)", file=sys.stderr)
    return 1


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
