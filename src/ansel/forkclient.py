"""The client side of warm jobs (``ansel.forkserver``): ``ansel <verb>`` hands its job to the
server named by ``ANSEL_FORKSERVER`` and exits with the forked child's status.

A job that a server takes costs a Python start plus this module, ~700 times in the smoke DAG, so
it imports only built-in modules: importing ``json`` or ``socket`` cost a client 6-7 ms of CPU
each, ``signal`` (its enum) 4-6 ms (2026-11-30). ``_socket`` and ``_signal`` are the C modules
under ``socket`` and ``signal``; the request is NUL-separated bytes (``encode_request``), as argv
and environ hold no NUL. In a local Snakemake run the jobs' ``ansel`` is ``launch`` (see
``ansel.forkserver.shell_prefix``), which does not go through the console script."""

from __future__ import annotations

import _signal
import _socket
import os
import struct
import sys

ENV = "ANSEL_FORKSERVER"
_HANDSHAKE_TIMEOUT = 300  # s a client waits for its child to start (the server may still be importing)


def encode_request(argv: list[str], cwd: str, env: dict[str, str]) -> bytes:
    """A job's arguments, working directory and environment: NUL-separated, ``os.fsencode``d
    (undecodable bytes round-trip), as ``decode_request`` reads them."""
    fields = [cwd, str(len(argv)), *argv, *(f"{k}={v}" for k, v in env.items())]
    return b"\0".join(map(os.fsencode, fields))


def decode_request(data: bytes) -> dict:
    """{"argv": [...], "cwd": str, "env": {...}} from ``encode_request``'s bytes."""
    cwd, n, *rest = map(os.fsdecode, data.split(b"\0"))
    argv, env = rest[: int(n)], rest[int(n) :]
    return {"argv": argv, "cwd": cwd, "env": dict(item.split("=", 1) for item in env)}


def run_remote(argv: list[str]) -> int | None:
    """Run ``ansel argv`` in a child of the server; its exit status, or None when no server took
    the job (nothing ran: run it here; the job's stderr says why, unless ``ENV`` is ``off``)."""
    path = os.environ.get(ENV)
    if not path or path == "off":
        return None
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    replies = _Lines(conn)
    try:
        conn.connect(path)
        # the client's standard streams become the job's (SCM_RIGHTS: socket.send_fds' message)
        conn.sendmsg([b"F"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack("3i", 0, 1, 2))])
        header = encode_request(argv, os.getcwd(), dict(os.environ))
        conn.sendall(struct.pack("!I", len(header)) + header)
        conn.settimeout(_HANDSHAKE_TIMEOUT)
        started = replies.next().split()
    except OSError as e:  # no server, or it went away before taking the job
        started = [repr(e).encode()]
    except KeyboardInterrupt:  # Ctrl-C before the child started: the server ends it as this connection closes
        print(f"ansel {' '.join(argv[:1])}: interrupted", file=sys.stderr)
        return 130
    if started[:1] != [b"pid"]:
        conn.close()
        reason = b" ".join(started).decode(errors="replace") or "it closed the connection"
        print(f"ansel: the warm-job server at {path} did not take this job ({reason}): it runs here", file=sys.stderr)
        return None
    child = int(started[1])
    forward = lambda sig, _frame: _kill(child, sig)  # noqa: E731
    for sig in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
        _signal.signal(sig, forward)
    conn.settimeout(None)
    try:
        status = replies.next().split()
    except OSError:
        status = []
    if status[:1] == [b"exit"]:
        return int(status[1])
    print(f"ansel: its worker process {child} ended without an exit status (killed?)", file=sys.stderr)
    return 1


def launch() -> None:
    """``ansel sys.argv[1:]`` handed to the server; where none takes it (its stderr says why), the
    console script runs it in its place, told not to ask the server again."""
    argv = sys.argv[1:]
    code = run_remote(argv)
    if code is not None:
        sys.exit(code)
    os.execvpe("ansel", ["ansel", *argv], {k: v for k, v in os.environ.items() if k != ENV})


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


class _Lines:
    """The lines the server sends (``pid N``, ``exit N``), read as they come."""

    def __init__(self, conn):
        self.conn, self.buffer = conn, b""

    def next(self) -> bytes:
        """The next line, or b"" once the server closed the connection without one."""
        while b"\n" not in self.buffer:
            chunk = self.conn.recv(64)
            if not chunk:
                return b""
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line
