"""Warm jobs (ansel.forkserver): a job forked from the server writes the bytes a fresh process
writes, passes its exit status and messages through, dies with its client, and the server ends
with the process it serves."""

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from ansel import forkclient, forkserver
from tests.tiny_run import tiny_qa_cnn, train_args

ANSEL = str(Path(sys.executable).with_name("ansel"))  # the console script, as the rules call it


def _wait(condition, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def server(tmp_path):
    log = tmp_path / "forkserver.log"
    forkserver.start(log)
    _wait(lambda: log.exists() and "ready" in log.read_text(), "the server's imports")
    yield forkserver._server, log
    forkserver.stop()


def _without_server() -> dict:
    return {k: v for k, v in os.environ.items() if k != forkserver.ENV}


def _train_args(processed: Path, run_dir: Path, epochs: int = 2) -> list[str]:
    return train_args(tiny_qa_cnn(epochs=epochs), processed, run_dir, "--timings", str(run_dir / "timings.json"))


def test_a_forked_job_writes_the_bytes_of_a_fresh_process(processed, tmp_path, server):
    _, log = server
    fresh = subprocess.run(
        [ANSEL, *_train_args(processed, tmp_path / "fresh")], env=_without_server(), capture_output=True, text=True
    )
    warm = subprocess.run([ANSEL, *_train_args(processed, tmp_path / "warm")], capture_output=True, text=True)
    assert fresh.returncode == warm.returncode == 0, fresh.stderr + warm.stderr
    assert "ansel train" in log.read_text()  # the second job ran in a child of the server
    cpu = re.search(r"^done (\d+): ansel train exit 0, ([\d.]+) s CPU at ([\d.]+)$", log.read_text(), re.M)
    assert cpu and float(cpu[2]) > 0  # its own CPU time, logged for benchmarks/bench_scale.py
    forked = re.search(rf"^job {cpu[1]}: ansel train in .* at ([\d.]+)$", log.read_text(), re.M)
    assert forked and float(forked[1]) <= float(cpu[3])  # when it was forked and ended: the cores' waits between jobs
    wall = re.compile(r"\(\d+\.\d+s\)")  # each epoch's wall time, the only output allowed to differ
    assert wall.sub("", warm.stdout) == wall.sub("", fresh.stdout) and "epoch 2" in warm.stdout
    for name in ("model.pt", "log.csv", "config.json", "dev_scores.pt"):
        assert (tmp_path / "warm" / name).read_bytes() == (tmp_path / "fresh" / name).read_bytes(), name
    # the training-code digest, computed once by the server for its jobs, is the one a fresh process computes
    code = [json.loads((tmp_path / run / "timings.json").read_text())["train"]["code"] for run in ("warm", "fresh")]
    assert code[0] == code[1] and re.fullmatch(r"[0-9a-f]{16}", code[0])


def test_exit_status_and_messages_pass_through(processed, tmp_path, server):
    usage = subprocess.run([ANSEL, "train", "--config", "{}"], capture_output=True, text=True)
    assert usage.returncode == 2 and "required: --processed, --run-dir" in usage.stderr
    failed = subprocess.run(
        [ANSEL, "evaluate", "--processed", str(processed), "--run-dir", str(tmp_path / "none")],
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 1 and failed.stderr.startswith(
        f"ansel evaluate: {tmp_path / 'none' / 'config.json'}: missing"
    )
    assert "Traceback" not in failed.stderr  # a folder with no run is the user's slip, not a crash
    assert server[1].read_text().count("job ") == 2


def test_a_job_that_comes_while_the_server_imports_is_forked_before_the_imports_end(processed, tmp_path):
    """A DAG's first job (a download, or here a dataset's statistics) need not wait for torch: the server
    forks it between two imports, and it imports what it lacks itself."""
    log = tmp_path / "forkserver.log"
    forkserver.start(log)
    try:
        assert Path(os.environ[forkserver.ENV]).exists()  # the start waited for the socket: no job runs alone
        done = subprocess.run(
            [ANSEL, "stats", "--processed", str(processed), "--out", str(tmp_path / "s.csv")],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "s.csv").exists()
        _wait(lambda: "ready" in log.read_text(), "the server's imports")
        text = log.read_text()
        assert -1 < text.find("ansel stats") < text.find("ready"), text
    finally:
        forkserver.stop()


def test_a_request_carries_any_arguments_directory_and_environment_unchanged():
    undecodable = os.fsdecode(b"caf\xe9")  # a Latin-1 byte: a surrogate escape in the str
    argv = ["train", "--config", '{"a": "b=c", "n": "x\\ny"}', "", "dé jà", undecodable]
    env = {"PATH": "/bin:/usr/bin", "EQ": "a=b==c", "NL": "one\ntwo", "EMPTY": "", "RAW": undecodable}
    request = forkclient.decode_request(forkclient.encode_request(argv, "/tmp/d ir", env))
    assert request == {"argv": argv, "cwd": "/tmp/d ir", "env": env}
    assert forkclient.decode_request(forkclient.encode_request([], "/", {})) == {"argv": [], "cwd": "/", "env": {}}


def test_a_client_imports_no_module_the_console_script_has_not_imported_but_c_ones():
    """A warm job's client costs a bare Python start: json and socket cost ~6 ms each, ~700 times a smoke DAG."""
    script = "import re, sys; before = set(sys.modules); import ansel.cli, ansel.forkclient; print(*set(sys.modules) - before)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    added = set(done.stdout.split())
    c_or_tiny = {"__future__", "_socket", "_signal", "struct", "_struct"}
    assert added - {"ansel", "ansel.cli", "ansel.forkclient"} <= c_or_tiny, added


def _collapsible() -> bool:
    """Linux 6.1+ (MADV_COLLAPSE) with transparent huge pages not switched off."""
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if not (sys.platform.startswith("linux") and thp.exists()):
        return False
    release = tuple(int(n) for n in re.findall(r"\d+", os.uname().release)[:2])
    return release >= (6, 1) and "[never]" not in thp.read_text()


@pytest.mark.skipif(not _collapsible(), reason="needs Linux 6.1+ with transparent huge pages")
def test_the_server_s_anonymous_memory_is_collapsed_into_huge_pages_and_keeps_its_values():
    """What the server holds lies in 2 MB pages (a job's fork and exit handle 512 times fewer
    entries), its bytes unchanged; forked jobs compute the same bits (the first test here)."""
    script = """
import hashlib, re
from ansel import forkserver
held = bytes(range(256)) * (1 << 18)  # 64 MiB of anonymous memory
before = hashlib.sha256(held).hexdigest()
huge = lambda: int(re.search(r"AnonHugePages:\\s+(\\d+)", open("/proc/self/smaps_rollup").read())[1])
was = huge()
forkserver._huge_pages()
print(huge() - was, hashlib.sha256(held).hexdigest() == before)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    gained_kb, same = done.stdout.split()
    assert int(gained_kb) >= 60 * 1024 and same == "True", done.stdout


def _bash_with_prefix(command: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``command`` as a local Snakemake run's jobs run it: bash, with the prefix the Snakefile sets."""
    prefix = forkserver.shell_prefix().replace("{{", "{").replace("}}", "}")  # as Snakemake formats it
    return subprocess.run(["bash", "-c", prefix + command], capture_output=True, text=True, env=env)


def test_the_jobs_ansel_hands_the_job_over_from_a_bare_python(processed, tmp_path, server):
    """The Snakefile's shell prefix makes ``ansel`` a client started without site or the console script."""
    done = _bash_with_prefix(
        f"ansel stats --processed {processed} --out {tmp_path / 's.csv'} > {tmp_path / 'log'} 2>&1"
    )
    assert done.returncode == 0 and (tmp_path / "s.csv").exists(), (tmp_path / "log").read_text()
    usage = _bash_with_prefix("ansel train --config '{}'")
    assert usage.returncode == 2 and "required: --processed, --run-dir" in usage.stderr
    jobs = re.findall(r"^job \d+: ansel (\S+) in", server[1].read_text(), re.M)
    assert jobs == ["stats", "train"]  # both forked by the server


def test_without_a_server_the_jobs_ansel_runs_the_console_script_and_says_why_once(processed, tmp_path):
    env = {**_without_server(), forkserver.ENV: str(tmp_path / "gone.sock")}
    done = _bash_with_prefix(f"ansel stats --processed {processed} --out {tmp_path / 's.csv'}", env)
    assert done.returncode == 0 and (tmp_path / "s.csv").exists(), done.stderr
    assert done.stderr.count("did not take this job") == 1, done.stderr
    usage = _bash_with_prefix("ansel train --config '{}'", env)
    assert usage.returncode == 2 and "required: --processed, --run-dir" in usage.stderr


def test_the_jobs_client_imports_what_any_python_start_does_and_built_in_modules():
    """``python -I -S`` and ``ansel.forkclient``: no site, no ``re``; ``os`` as every start with site has it."""
    code = forkserver.shell_prefix().split(" -c ", 1)[1].split(' "$@"', 1)[0]
    probe = shlex.split(code)[0].replace("launch()", "import sys; print(*sys.modules)")
    start = subprocess.run([sys.executable, "-c", "import sys; print(*sys.modules)"], capture_output=True, text=True)
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, check=True)
    added = set(done.stdout.split()) - set(start.stdout.split())
    assert added <= {"ansel", "ansel.forkclient", "__future__", "_socket", "_signal", "struct", "_struct"}, added


@pytest.mark.parametrize("server_path", ["gone.sock", "off"])
def test_without_a_server_the_job_runs_in_its_own_process(processed, tmp_path, server_path):
    """A server gone (or not started yet) is named in the job's stderr; ``off`` asks for no server."""
    env = {**_without_server(), forkserver.ENV: str(tmp_path / server_path) if server_path != "off" else "off"}
    done = subprocess.run(
        [ANSEL, "stats", "--processed", str(processed), "--out", str(tmp_path / "s.csv")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "s.csv").exists()
    if server_path == "off":
        assert "warm-job" not in done.stderr, done.stderr
    else:
        said = f"ansel: the warm-job server at {tmp_path / server_path} did not take this job (FileNotFoundError("
        assert done.stderr.startswith(said), done.stderr


def test_a_killed_client_takes_its_job_with_it(processed, tmp_path, server):
    proc, _ = server
    client = subprocess.Popen(
        [ANSEL, *_train_args(processed, tmp_path / "run", epochs=10_000)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait(lambda: psutil.Process(proc.pid).children(), "the job's child process")
    (child,) = psutil.Process(proc.pid).children()
    _wait(lambda: (tmp_path / "run" / "state.pt").exists(), "the first epoch")
    client.send_signal(signal.SIGTERM)  # as Snakemake cancels a job
    assert client.wait(30) != 0
    _wait(lambda: not child.is_running() or child.status() == psutil.STATUS_ZOMBIE, "the job to end", 30)
    assert proc.poll() is None  # the server serves on


# A Snakemake run in miniature: the server started as its onstart does, one job's shell with its prefix.
_SNAKEMAKE = """
import subprocess, sys
from pathlib import Path
from ansel import forkserver
forkserver.start(Path(sys.argv[1]))
prefix = forkserver.shell_prefix().replace("{{", "{").replace("}}", "}")
subprocess.run(["bash", "-c", prefix + sys.argv[2]])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="jobs die with their server on Linux only")
def test_nothing_of_a_job_outlives_its_snakemake_killed_hard(processed, tmp_path):
    """``kill -9`` of Snakemake: its server, the job's shell, client and forked child all end, the
    child leaving its last epoch's state for the rerun to resume (not a second training beside it)."""
    run = tmp_path / "run"
    job = shlex.join(["ansel", *_train_args(processed, run, epochs=10_000)])
    snakemake = subprocess.Popen(
        [sys.executable, "-c", _SNAKEMAKE, str(tmp_path / "forkserver.log"), job],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    processes: list[psutil.Process] = []
    try:
        _wait(lambda: (run / "state.pt").exists(), "the first epoch")
        processes = psutil.Process(snakemake.pid).children(recursive=True)
        names = [" ".join(p.cmdline()[:3]) for p in processes]
        assert len(processes) == 4, names  # the server, the shell, its client, the server's child
        snakemake.kill()
        snakemake.wait()
        gone = lambda p: not p.is_running() or p.status() == psutil.STATUS_ZOMBIE  # noqa: E731
        _wait(lambda: all(map(gone, processes)), f"every process of the job to end: {names}", 10)
        assert (run / "state.pt").exists()
    finally:
        for p in processes:
            with contextlib.suppress(psutil.Error):
                p.kill()


@pytest.mark.parametrize("warm", [True, False], ids=["warm job", "without the server"])
def test_an_interrupted_job_says_so_in_one_line(processed, tmp_path, server, warm):
    """Ctrl-C in a job: its client forwards it (or the job runs in the command's own process), and it
    ends with 130 and one line, not a traceback."""
    env = {k: v for k, v in os.environ.items() if warm or k != forkserver.ENV}
    client = subprocess.Popen(
        [ANSEL, *_train_args(processed, tmp_path / "run", epochs=10_000)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # as from a terminal: a test run started in the background (`cmd &`) passes SIGINT on ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    _wait(lambda: (tmp_path / "run" / "state.pt").exists(), "the first epoch")
    client.send_signal(signal.SIGINT)
    _, stderr = client.communicate(timeout=30)
    assert client.returncode == 130 and stderr == "ansel train: interrupted\n", stderr


def test_the_server_ends_with_the_process_it_serves(tmp_path):
    served = subprocess.Popen(["sleep", "60"])
    log = tmp_path / "forkserver.log"
    forkserver.start(log, watch_pid=served.pid)
    proc, socket_path = forkserver._server, Path(os.environ[forkserver.ENV])
    try:
        _wait(lambda: log.exists() and "ready" in log.read_text(), "the server's imports")
        served.kill()
        served.wait()
        assert proc.wait(30) == 0
        assert not socket_path.exists() and not socket_path.parent.exists()
        assert re.search(r"^ansel forkserver \d+: [\d.]+ s CPU$", log.read_text(), re.M)  # its own, at its end
    finally:
        forkserver.stop()


def test_stopping_a_server_that_does_not_end_kills_it_instead_of_failing_the_run(monkeypatch):
    """Snakemake's onsuccess stops the server; on a loaded machine it may not end in time."""
    stubborn = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    stubborn.stdout.readline()  # its SIGTERM handler is in place
    monkeypatch.setattr(forkserver, "_server", stubborn)
    monkeypatch.setattr(forkserver, "STOP_SECONDS", 0.5)
    forkserver.stop()
    assert stubborn.returncode == -signal.SIGKILL and forkserver._server is None


@pytest.mark.parametrize("after", [0.0, 0.5, 2.0])
def test_a_server_stopped_while_it_starts_leaves_no_socket_behind(after):
    """Snakemake interrupted right after it started the server (still importing torch): the stop
    removes the socket and its directory whether the server cleaned up or was killed."""
    forkserver.start(Path(os.devnull), watch_pid=os.getpid())
    socket_dir = Path(os.environ[forkserver.ENV]).parent
    time.sleep(after)
    forkserver.stop()
    assert not socket_dir.exists() and forkserver.ENV not in os.environ


def test_a_preloaded_dataset_is_the_one_its_files_hold_and_is_read_again_once_they_change(processed, tmp_path):
    """What the server loads before forking a job (``canonical.preload``): the job's ``Dataset.load``
    takes tables equal to a fresh read, once (a second load reads the files); a dataset rewritten since
    is read from its files, and one that cannot be loaded is left to the job, which names the fault."""
    import shutil

    import pandas as pd

    from ansel.data import canonical
    from ansel.data.manifest import ManifestError

    data = tmp_path / "syn"
    shutil.copytree(processed, data)
    fresh = canonical.Dataset.load(data)
    canonical.preload(data)
    taken = canonical.Dataset.load(data)
    assert data.resolve() not in canonical._preloaded  # the job's own: no other load shares it
    assert taken.name == "syn" and sorted(taken.splits) == sorted(fresh.splits)
    for got, want in [(taken.questions, fresh.questions), (taken.answers, fresh.answers)] + [
        (taken.splits[s], fresh.splits[s]) for s in fresh.splits
    ]:
        pd.testing.assert_frame_equal(got, want)
    assert canonical.Dataset.load(data).questions is not taken.questions

    canonical.preload(data)
    canonical.Dataset(
        fresh.name, fresh.questions, fresh.answers, {**fresh.splits, "dev": fresh.splits["dev"][:3]}
    ).save(data)
    assert len(canonical.Dataset.load(data).splits["dev"]) == 3  # the files, not the tables preloaded before

    canonical.preload(data)  # then a table edited by hand, the manifest left as it was: the job's check refuses it
    (data / "questions.parquet").write_bytes(b"edited")
    canonical.preload(data)
    with pytest.raises(ManifestError, match="questions.parquet: changed since"):
        canonical.Dataset.load(data)
    canonical._preloaded.clear()  # a server started after the edit: it loads nothing of it
    canonical.preload(data)
    assert data.resolve() not in canonical._preloaded
    with pytest.raises(ManifestError, match="questions.parquet: changed since"):
        canonical.Dataset.load(data)
