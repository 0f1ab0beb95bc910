"""Issue 54 item 7: nothing half placed. A run.trec.gz that is not gzip or is cut short, a finished run
without log.csv, a kit.json record without its preset, a disk filling up during an unpack: each is a
message naming the file, and the record is as it was, byte for byte, with no staging left. ``ansel
record`` likewise for a half-written run; two unpacks of one record at once keep both leases; ``ansel
records --write`` on a full disk leaves README.md whole."""

import builtins
import gzip
import io
import json
import os
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from ansel import targets as T
from ansel.cli import main
from ansel.config import ConfigError, load
from ansel.records import collect as collecting
from ansel.records import kit_unpack as unpacking
from ansel.records.kit_unpack import unpack
from tests.reliability.kit_archives import RUN, kit_record, run_members, snapshot, trained, unpack_refused
from tests.reliability.test_save_errors import _full_disk


def _cut(data: bytes) -> bytes:
    return data[: len(data) // 2]


@pytest.mark.parametrize(
    "broken, named",
    [
        ({"run.trec.gz": b"qid Q0 aid 1 0.5 run\n"}, r"run.trec.gz: not a whole run file \(BadGzipFile"),
        ({"run.trec.gz": "cut"}, r"run.trec.gz: not a whole run file \((EOFError|BadGzipFile|error)"),
        ({"log.csv": None}, r": a finished run \(metrics.json\) without log.csv: half written"),
    ],
)
def test_a_broken_run_places_nothing(device_record, home, finished_run, kit_archive, broken, named):
    files = dict(finished_run)
    for name, data in broken.items():
        if data is None:
            files.pop(name)
        else:
            files[name] = _cut(gzip.compress(finished_run["run.trec"] * 3)) if data == "cut" else data
    archive = kit_archive(
        run_members(files, skip=tuple(n for n, d in broken.items() if d is None)),
        [kit_record(run_config=device_record)],
    )
    unpack_refused(archive, home, rf"rec/{RUN}/?{named}")


def test_a_kit_record_without_its_preset_places_nothing(device_record, home, finished_run, kit_archive):
    rec = kit_record(run_config=device_record)
    del rec["preset"]
    unpack_refused(
        kit_archive(run_members(finished_run), [rec]),
        home,
        r"kit.json: records\[0\] \(rec\): 'preset' missing or not a str",
    )


def _disk_full_after(monkeypatch, under: Path, opens: int) -> None:
    """The ``opens``-th opening of a file under ``under`` for writing (and every later one) finds the
    disk full: a few bytes land, then ENOSPC."""
    real, seen = builtins.open, []

    def fake(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and str(under) in os.path.abspath(file) and "w" in mode:
            seen.append(file)
            if len(seen) >= opens:
                return _full_disk(file, mode)
        return real(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake)
    monkeypatch.setattr(io, "open", fake)  # pathlib's write_text


@pytest.mark.parametrize("opens", [1, 3, 6, 12])
def test_a_disk_filling_during_an_unpack_places_nothing(
    device_record, home, finished_run, kit_archive, monkeypatch, opens
):
    """A second lease of the record (its run again): the disk fills at the ``opens``-th file written."""
    archive = kit_archive(run_members(finished_run), [kit_record(run_config=device_record)], name="record-rec-2.tar.gz")
    before = snapshot(home.parent)
    _disk_full_after(monkeypatch, home / "reports", opens)
    with pytest.raises(
        SystemExit,
        match=r"record-rec-2.tar.gz: .*(No space left on device|no space left on device)"
        r".*nothing was placed",
    ):
        unpack([archive], device_minutes=1.0, dest=home / "reports/device")
    monkeypatch.undo()
    assert snapshot(home.parent) == before


def test_two_unpacks_of_one_record_at_once_keep_both_leases(
    device_record, home, finished_run, kit_archive, monkeypatch
):
    """Each unpack, once it has read leases.json, waits (up to 2 s) for the other to have read it too
    before it writes: without a lock the second write loses the first's lease."""
    archives = [
        kit_archive(run_members(finished_run), [kit_record(run_config=device_record)], name=f"record-rec-{i}.tar.gz")
        for i in (2, 3)
    ]
    arrived = threading.Barrier(2)

    def dumps(obj, **kwargs):
        if isinstance(obj, list) and obj and "archive" in obj[0]:  # the leases, read and about to be written
            try:
                arrived.wait(timeout=2)
            except threading.BrokenBarrierError:
                pass
        return json.dumps(obj, **kwargs)

    monkeypatch.setattr(unpacking, "json", SimpleNamespace(loads=json.loads, dumps=dumps))
    errors = []
    threads = [threading.Thread(target=lambda a=a: _unpack_or_keep(a, home, errors)) for a in archives]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    leases = json.loads((home / "reports/device/rec/leases.json").read_text())
    assert sorted(lease["archive"] for lease in leases) == [f"record-rec-{i}.tar.gz" for i in (1, 2, 3)]
    assert sorted(p.name for p in (home / "reports/device").iterdir()) == ["rec"]


def _unpack_or_keep(archive, home, errors) -> None:
    try:
        unpack([archive], device_minutes=1.0, dest=home / "reports/device")
    except BaseException as e:  # kept for the main thread's assertion
        errors.append(e)


@pytest.mark.parametrize(
    "half, named",
    [
        ({"skip": ("log.csv",)}, r"seed2: a finished run \(metrics.json\) without log.csv: half written"),
        ({"config_text": '{"dataset": "synthetic_en", '}, r"seed2/config.json: not valid JSON .* half written"),
        ({"skip": ("run.trec",)}, r"seed2: a finished run \(metrics.json\) without run.trec: half written"),
    ],
)
def test_ansel_collect_record_of_a_half_written_run_places_nothing(home, finished_run, half, named):
    smoke, out = load(preset="smoke"), home / "reports/cpu-x"
    trained(home, finished_run, T.Run("synthetic_en", T.Variant("qa_cnn"), 1), smoke)
    collecting.collect("smoke", {"smoke": ["synthetic"]}, out, report=lambda line: None)
    trained(home, finished_run, T.Run("synthetic_en", T.Variant("qa_cnn"), 2), smoke, **half)
    before = snapshot(home.parent)
    with pytest.raises(ConfigError, match=named):
        collecting.collect("smoke", {"smoke": ["synthetic"]}, out, report=lambda line: None)
    assert snapshot(home.parent) == before


def test_ansel_collect_record_on_a_full_disk_places_nothing(home, finished_run, monkeypatch):
    smoke, out = load(preset="smoke"), home / "reports/cpu-x"
    trained(home, finished_run, T.Run("synthetic_en", T.Variant("qa_cnn"), 1), smoke)
    collecting.collect("smoke", {"smoke": ["synthetic"]}, out, report=lambda line: None)
    trained(home, finished_run, T.Run("synthetic_en", T.Variant("qa_cnn"), 2), smoke)
    before = snapshot(home.parent)
    _disk_full_after(monkeypatch, out.parent, 4)
    with pytest.raises(ConfigError, match=r"reports/cpu-x: .*o space left on device.*nothing was placed"):
        collecting.collect("smoke", {"smoke": ["synthetic"]}, out, report=lambda line: None)
    monkeypatch.undo()
    assert snapshot(home.parent) == before


def test_the_results_table_written_on_a_full_disk_leaves_the_readme_whole(home, monkeypatch):
    (home / "reports").mkdir(exist_ok=True)
    (home / "reports/headlines.yaml").write_text("records: {}\nheadlines: []\n")
    readme = home / "README.md"
    readme.write_text("# ansel\n\n" + "words " * 2000 + "\n<!-- results: ansel front-page -->\n<!-- /results -->\n")
    before = snapshot(home.parent)
    _disk_full_after(monkeypatch, home, 1)
    with pytest.raises(OSError, match=r"README.md: no space left on device"):
        main(["front-page", "--write", "README.md"])
    monkeypatch.undo()
    assert snapshot(home.parent) == before
