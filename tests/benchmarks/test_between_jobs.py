"""bench_scale.py's account of the cores' waits between warm jobs, from the server log's stamps."""

import importlib.util
import sys

import pytest

from ansel import forkclient
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "benchmarks/bench_scale.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_idle_cores_and_the_wait_after_each_end_are_read_from_the_stamps(bench):
    # two cores: job 1 over 0-10, job 2 over 0.2-5; job 3 forked 5.1 s in, 0.1 s after job 2 ended,
    # runs to 9; job 4 forked 0.3 s after job 1 ended, to 11
    log = "\n".join(
        [
            "ansel forkserver 7: ready on /tmp/x/fork.sock for process 6",
            "job 1: ansel train in /w at 100.000",
            "job 2: ansel evaluate in /w at 100.200",
            "done 2: ansel evaluate exit 0, 4.000 s CPU at 105.000",
            "job 3: ansel train in /w at 105.100",
            "done 3: ansel train exit 0, 3.800 s CPU at 109.000",
            "done 1: ansel train exit 0, 9.900 s CPU at 110.000",
            "job 4: ansel table in /w at 110.300",
            "done 4: ansel table exit 0, 0.600 s CPU at 111.000",
        ]
    )
    # one job running 0-0.2, 5-5.1, 9-10 and 10.3-11 (idle 0.2 + 0.1 + 1 + 0.7), none 10-10.3 (2 x 0.3): 2.6 s
    # idle, 2.3 s short of two jobs; waits 0.1 (5 -> 5.1) and 0.3 (10 -> 10.3; 9's end was followed by another)
    assert bench.between_jobs(log, cores=2) == (
        "cores idle 3 s between the jobs' 11 s, fewer than 2 jobs running for 2 s; "
        "the next job forked a median 200 ms after a job ended"
    )
    assert bench.job_cpu(log) == {"evaluate": [4.0], "train": [3.8, 9.9], "table": [0.6]}


def test_a_log_without_stamps_says_so(bench):
    assert bench.between_jobs("ansel forkserver 7: ready\n", cores=2) == "no job stamped in the server's log"


def test_the_jobs_no_server_took_are_counted_from_what_each_wrote_to_its_log(bench, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(forkclient.ENV, str(tmp_path / "gone.sock"))
    assert forkclient.run_remote(["stats"]) is None  # the client's own line, as a job's log gets it
    said = capsys.readouterr().err
    logs = tmp_path / "logs"
    for name, text in [
        ("train/a/seed1.log", "epoch 1 ...\n" + said),
        ("evaluate/a/seed1.log", said + said),  # e.g. a job retried
        ("table/p/t.log", "wrote results/tables/p/t.md\n"),
        ("forkserver.log", said),  # the server's own log: not a job's
    ]:
        (logs / name).parent.mkdir(parents=True, exist_ok=True)
        (logs / name).write_text(text)
    assert bench.not_taken(logs) == (
        "3 ansel jobs ran in a process of their own "
        "(no server took them: 3 x FileNotFoundError(2, 'No such file or directory'))"
    )
    (logs / "train/a/seed1.log").unlink()
    (logs / "evaluate/a/seed1.log").unlink()
    assert bench.not_taken(logs) == "every ansel job was forked by the warm-job server"
