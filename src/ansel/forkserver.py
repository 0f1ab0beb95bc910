"""Warm jobs for local runs: one process imports torch and ansel once, then forks a child per
``ansel`` command, so a local DAG of hundreds of small jobs pays the ~4 s of imports once.

The Snakefile starts the server for local runs (``onstart``; never under SLURM, where each job
runs on its node), exports ``ANSEL_FORKSERVER`` and makes the jobs' ``ansel`` a client started
without the console script (``shell_prefix``). ``ansel <verb>`` (``ansel.forkclient``) hands
its arguments, working directory, environment and standard streams to the server, forwards the
signals it gets to the forked child, and exits with the child's status. The server imports but
never runs a torch operator (as torch's DataLoader forks its workers), so a child computes what a
fresh process computes, to the bit. Without the variable, or when no server takes the job (the
job's stderr then says why), the command runs in its own process. The server exits with the Snakemake
process that started it, and its children with it (``_die_with``): a Snakemake killed hard (``kill -9``)
leaves no job running, as its clients, their child gone, exit too. A workflow runs the ansel code it
started with.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shlex
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from ansel.forkclient import ENV, decode_request

# What a job would import on its own (``ansel.commands`` imports lazily per verb); torch._dynamo is
# pulled in by torch.optim's optimizers (their constructors run under torch._disable_dynamo), and
# torch.profiler._cupti_monitor by their first step (its record_function; ~3 ms a training job).
# The rest are imported lazily by the libraries themselves, in every job that uses them: torch.save
# (torch.utils.serialization), pandas' read_parquet (pyarrow.parquet, pyarrow.dataset) and writers,
# dvclive's opening of the DVC repository (dvc.scm and what dvc.repo.Repo() imports), the table
# jobs' tests (scipy.stats), LaTeX (pandas' Styler: jinja2) and spec checks (jsonschema), the
# figure jobs' PDF fonts (fontTools) and PNG writer (PIL's plugins). Together about a tenth of a
# smoke training job's CPU time and a third of a table or figure job's.
PRELOAD = (
    "torch",
    "torch._dynamo",
    "torch.profiler._cupti_monitor",
    "torch.utils.serialization",
    "pandas",
    "pandas.io.formats.style",
    "pandas.io.formats.csvs",
    "pandas.io.formats.html",
    "pyarrow.parquet",
    "pyarrow.dataset",
    "jsonschema",
    "dvclive",
    "dvc.repo",
    "dvc.scm",
    "dvc.cachemgr",
    "dvc.data_cloud",
    "dvc.lock",
    "dvc.repo.artifacts",
    "dvc.repo.datasets",
    "dvc.repo.experiments",
    "dvc.repo.metrics",
    "dvc.repo.params",
    "dvc.repo.plots",
    "dvc.repo.stage",
    # what dvclive's Live imports as it opens the repository (its config, the git backend): 0.08 s a training job
    "configobj",
    "dulwich.porcelain",
    "dulwich.worktree",
    "dvc.dirs",
    "dvc_data.hashfile.db.local",
    "platformdirs",
    "tqdm",
    "matplotlib.pyplot",
    "matplotlib.backends.backend_agg",
    "matplotlib.backends.backend_pdf",
    "fontTools.subset",
    "PIL.BmpImagePlugin",
    "PIL.GifImagePlugin",
    "PIL.JpegImagePlugin",
    "PIL.PngImagePlugin",
    "PIL.PpmImagePlugin",
    "ansel.commands",
    "ansel.training.command",
    "ansel.evaluation.evaluate",
    "ansel.models.scorers",
    "ansel.report.notes",
    "ansel.report.figures",
    "ansel.report.significance",
    "sklearn.metrics",  # MTAS's category metrics, in its training and evaluation jobs
)


_server: subprocess.Popen | None = None  # the one this process started
BIND_SECONDS = 10  # that a start waits for the server's socket at most


def start(log: Path, watch_pid: int | None = None) -> None:
    """Start a server for the jobs of process ``watch_pid`` (default: this one) and export its
    socket in ``ENV`` (jobs inherit it) once it is bound; jobs that come while it imports are forked
    between two of its imports."""
    global _server
    stop()
    path = os.path.join(tempfile.mkdtemp(prefix="ansel-"), "fork.sock")  # 0700, short (sun_path: 108 bytes)
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        _server = subprocess.Popen(
            [sys.executable, "-m", "ansel.forkserver", path, str(watch_pid or os.getpid())],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # a Ctrl-C meant for Snakemake is the clients' to forward
    # the DAG's first job waits for the server to bind (~60 ms: its Python start) rather than run alone
    deadline = time.monotonic() + BIND_SECONDS
    while not os.path.exists(path) and _server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    os.environ[ENV] = path


def shell_prefix() -> str:
    """Snakemake's shell prefix (``shell.prefix``) for a run with a server: Snakemake's own
    (``set -euo pipefail;``) and a bash function ``ansel`` that starts ``forkclient.launch`` in
    ``python -I -S``: no site and no environment's paths, as a client needs the standard library
    only. A job's client then takes ~15 ms of CPU where the console script took ~29 ms (the site,
    its ``import re``; 2026-11-30), ~680 times in the smoke DAG. Its braces are doubled, as
    Snakemake formats a prefix."""
    package_parent = str(Path(__file__).resolve().parents[1])
    code = f"import sys; sys.path.insert(0, {package_parent!r}); from ansel.forkclient import launch; launch()"
    function = f'ansel() {{ {shlex.quote(sys.executable)} -I -S -c {shlex.quote(code)} "$@"; }}'
    return f"set -euo pipefail; {function}; ".replace("{", "{{").replace("}", "}}")


STOP_SECONDS = 10  # then the server is killed


def stop() -> None:
    """Stop the server this process started (jobs still running end with it) and remove its socket's
    directory, whichever way it ended (killed, it cleans nothing itself)."""
    global _server
    if _server is None:
        return
    path = os.environ.pop(ENV, None)
    if _server.poll() is None:
        _server.terminate()
        try:
            _server.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:  # a loaded machine (it may still be importing): never fail the run
            _server.kill()
            _server.wait()
    _server = None
    if path:
        Path(path).unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # gone already, or not empty (never: only the socket)
            os.rmdir(os.path.dirname(path))


# --- server -----------------------------------------------------------------------------------


def serve(path: str, watch_pid: int) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # before the imports: a stop then still cleans up
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    try:
        import importlib

        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
        listener.setblocking(False)
        for module in PRELOAD:
            if not _alive(watch_pid):  # Snakemake killed while the server starts: its imports take seconds
                return
            importlib.import_module(module)
            _fork_waiting(listener)
        _warm()
        _huge_pages()
        listener.settimeout(1.0)
        print(f"ansel forkserver {os.getpid()}: ready on {path} for process {watch_pid}", flush=True)
        while _alive(watch_pid):
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            _fork_job(listener, conn)
    finally:
        used = resource.getrusage(resource.RUSAGE_SELF)  # benchmarks/bench_scale.py reads it
        print(f"ansel forkserver {os.getpid()}: {used.ru_utime + used.ru_stime:.3f} s CPU", flush=True)
        listener.close()
        Path(path).unlink(missing_ok=True)
        with contextlib.suppress(FileNotFoundError):  # the stopping side may have removed it first
            os.rmdir(os.path.dirname(path))


def _fork_waiting(listener: socket.socket) -> None:
    """Fork the jobs that came while the server imports: a DAG's first job (a download) need not
    wait seconds for torch, and one that needs what is not imported yet imports it itself, as a job
    of its own process would."""
    while True:
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            return
        _fork_job(listener, conn)


def _warm() -> None:
    """What every job would otherwise compute alike, done once for the jobs to inherit: the table
    kinds, the architectures and the models' modules imported (the registries find the first two by
    listing their packages; an architecture's builder imports its model's module as it builds: 3-5 ms
    a training or evaluate job), the verbs' parser (~7 ms a job), and each architecture's
    training-code digest and the checkout's commit (``ansel.code_digest``), which every training job
    writes to its timings: parsing its ~50 modules cost a smoke training job a tenth of its CPU time,
    the commit two git processes. Both are read at the server's start, as its imports are: they are
    of the code its jobs run."""
    import importlib
    import pkgutil

    from ansel import commands, models, table_kinds
    from ansel.code_digest import serve_checkout, train_code_digest
    from ansel.models.registry import arch_module, registered

    serve_checkout(Path.cwd())
    table_kinds.known()
    for module in pkgutil.iter_modules(models.__path__, f"{models.__name__}."):
        importlib.import_module(module.name)
    commands.parser()
    for arch in registered():
        train_code_digest(arch_module(arch))


_HUGE_PAGE = 2 << 20
_MADV_COLLAPSE = 25  # Linux 6.1+; not in Python 3.11's mmap module


def _huge_pages() -> None:
    """The server's anonymous memory (~370 MB once its imports are done) collapsed into 2 MB pages
    (madvise MADV_COLLAPSE; where the kernel has no such call, nothing changes): a fork copies, and a
    job's exit frees, one page-table entry per 2 MB rather than 512, which made ~17 ms of a job's
    ~28 ms of fork and exit (2026-11-30). A job's writes still copy 4 KB pages; no value changes."""
    import ctypes

    if not sys.platform.startswith("linux"):
        return
    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    with open("/proc/self/maps") as maps:
        for line in maps:
            span, perms, _, _, inode, *name = line.split()
            if perms != "rw-p" or inode != "0" or name not in ([], ["[heap]"]):
                continue  # private anonymous memory only: not files, stacks or the kernel's pages
            low, high = (int(address, 16) for address in span.split("-"))
            start, end = -(-low // _HUGE_PAGE) * _HUGE_PAGE, high // _HUGE_PAGE * _HUGE_PAGE
            if end > start:
                madvise(start, end - start, _MADV_COLLAPSE)  # refused (EINVAL, EAGAIN): left as it is


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("client closed the connection")
        data += chunk
    return data


def _fork_job(listener: socket.socket, conn: socket.socket) -> None:
    fds: list[int] = []
    try:
        conn.settimeout(10)
        _, fds, _, _ = socket.recv_fds(conn, 1, 3)
        (size,) = struct.unpack("!I", _recv_exact(conn, 4))
        request = decode_request(_recv_exact(conn, size))
        _preload(request)
        sys.stdout.flush()
        sys.stderr.flush()
        server = os.getpid()
        pid = os.fork()
        if pid == 0:
            _die_with(server)
            listener.close()
            _child(conn, fds, request)  # never returns
        # the times (the epoch's seconds) tell how long a core waits between one job's end and the next's fork
        print(f"job {pid}: ansel {' '.join(request['argv'][:1])} in {request['cwd']} at {time.time():.3f}", flush=True)
    except (OSError, ValueError) as e:
        print(f"ansel forkserver: a request failed: {e!r}", flush=True)
    finally:
        conn.close()
        for fd in fds:
            os.close(fd)


def _preload(request: dict) -> None:
    """The processed dataset a job names (``--processed``) loaded here first, once per version of its
    files, so that this job and the next ones inherit its tables (``canonical.preload``)."""
    from ansel.data.canonical import preload

    argv = request["argv"]
    if "--processed" in argv[:-1]:
        preload(Path(request["cwd"], argv[argv.index("--processed") + 1]))


def _die_with(server: int) -> None:
    """Have the kernel kill this child when the server ends (``PR_SET_PDEATHSIG``; the server ends with
    the Snakemake process it serves): a job whose Snakemake was killed hard would otherwise train on,
    re-parented to init, beside the rerun of the same job. Its client, then told nothing, exits 1. A
    SIGKILL, as a job's end must not wait on what it runs; it leaves what any killed job leaves (the
    last epoch's ``state.pt``). Elsewhere than Linux a job outlives its server."""
    import ctypes

    if not sys.platform.startswith("linux"):
        return
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != server:  # the server ended between the fork and the call
        os._exit(1)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _child(conn: socket.socket, fds: list[int], request: dict) -> None:
    code = 1
    log = os.dup(1)  # the server's log, before the job's streams replace it
    try:
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setpgid(0, 0)  # the server's group never receives a job's signals, nor the reverse
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["ansel", *request["argv"]]
        conn.settimeout(None)
        conn.sendall(f"pid {os.getpid()}\n".encode())
        # The client gone (killed with its job's process group): end as a killed job would.
        threading.Thread(target=_exit_when_closed, args=(conn,), daemon=True).start()
        code = _run(request["argv"])
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        # The job's own CPU time (a forked child's counts start at zero), its subprocesses' included:
        # what a job costs beside its wall time on a loaded machine (benchmarks/bench_scale.py sums it).
        used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        cpu = sum(u.ru_utime + u.ru_stime for u in used)
        verb = " ".join(request["argv"][:1])
        line = f"done {os.getpid()}: ansel {verb} exit {code}, {cpu:.3f} s CPU at {time.time():.3f}\n"
        with contextlib.suppress(OSError):  # a log that cannot be written never fails the job
            os.write(log, line.encode())
        try:
            conn.sendall(f"exit {code}\n".encode())
        finally:
            os._exit(code)


def _run(argv: list[str]) -> int:
    """``ansel argv`` as the console script would run it: its exit status, a traceback on stderr."""
    from ansel import commands

    try:
        commands.main(argv)
        return 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1


def _exit_when_closed(conn: socket.socket) -> None:
    try:
        conn.recv(1)
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    with contextlib.suppress(SystemExit):  # a stop's SIGTERM
        serve(sys.argv[1], int(sys.argv[2]))
    # Without tearing its modules down (~2 s, torch's and the rest): its jobs, which end with it, are
    # a killed Snakemake's, and a stop's caller waits.
    os._exit(0)
