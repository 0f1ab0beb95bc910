"""Issue 54 item 1: an archive writes nowhere but its record. A dataset of ``../``, a record named
``..`` or ``.``, a member that is a link: each is refused naming it, and nothing under the checkout or
beside it changes (no staging left either)."""

import json

import pytest

from ansel.records.kit_unpack import unpack
from tests.reliability.kit_archives import RUN, kit_record, run_members, snapshot, unpack_refused


def test_a_dataset_that_climbs_out_is_refused(home, finished_run, kit_archive):
    config = {**json.loads(finished_run["config.json"]), "dataset": "../../../../outside/pwned"}
    files = {**finished_run, "config.json": json.dumps(config).encode()}
    archive = kit_archive(run_members(files), [kit_record(run_config=config, items={"smoke": ["synthetic"]})])
    unpack_refused(archive, home, r"dataset: '\.\./\.\./\.\./\.\./outside/pwned' is not a plain name")
    assert not (home.parent / "outside/pwned").exists()


def test_only_the_runs_config_climbs_out(home, finished_run, kit_archive):
    """The kit says the run is synthetic_en's; the run's own config.json says otherwise."""
    kit_config = json.loads(finished_run["config.json"])
    files = {**finished_run, "config.json": json.dumps({**kit_config, "dataset": "../../../outside/x"}).encode()}
    archive = kit_archive(run_members(files), [kit_record(run_config=kit_config, items={"smoke": ["synthetic"]})])
    unpack_refused(archive, home, r"config.json: dataset: '\.\./\.\./\.\./outside/x' is not a plain name")


@pytest.mark.parametrize("name", ["..", ".", "../outside", "a/b", ""])
def test_a_record_name_that_is_not_plain_is_refused(home, finished_run, kit_archive, name):
    """``..`` joined to the unpacking's folder is its parent (the old code copied the whole temporary folder
    there), ``.`` the folder itself (the archive's tree dumped into reports/device/)."""
    config = json.loads(finished_run["config.json"])
    archive = kit_archive(run_members(finished_run, record="x"), [kit_record(name, run_config=config)])
    unpack_refused(archive, home, rf"kit.json: records\[0\]: name: '{name}' is not a plain name")


def test_a_link_in_the_archive_is_refused(home, finished_run, kit_archive):
    """A symlink member pointing inside the archive (log.csv -> kit.json) is not copied through."""
    config = json.loads(finished_run["config.json"])
    archive = kit_archive(
        run_members(finished_run, skip=("log.csv",)),
        [kit_record(run_config=config)],
        links={f"rec/{RUN}/log.csv": "../../../../kit.json"},
    )
    unpack_refused(archive, home, rf"rec/{RUN}/log.csv: a link, a special file or a path out of the archive's folder")


def test_a_plain_archive_is_placed_in_its_record_only(home, finished_run, kit_archive):
    """The same run with plain names: placed under reports/device/rec, nothing else changed, no staging left."""
    config = json.loads(finished_run["config.json"])
    archive = kit_archive(run_members(finished_run), [kit_record(run_config=config)])
    before = snapshot(home.parent)
    (placed,) = unpack([archive], device_minutes=1.0, dest=home / "reports/device")
    assert placed == home / "reports/device/rec"
    after = snapshot(home.parent)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed and all(k.startswith("home/reports/device/rec") or k == "home/reports/device" for k in changed)
    assert (placed / RUN / "log.csv").read_bytes() == finished_run["log.csv"]
    assert sorted(p.name for p in (home / "reports/device").iterdir()) == ["rec"]


def test_a_later_leases_bench_lands_beside_the_earlier(home, kit_archive):
    """A benchmark's figures of a second lease (cut, or on another GPU) never replace the first's: the
    differing file lands as bench/<name>-<its archive's stamp>; the same bytes again add nothing."""
    first = kit_archive({"rec/bench/speed.txt": b"18 shapes\n"}, [kit_record()])
    second = kit_archive(
        {"rec/bench/speed.txt": b"4 shapes\n"}, [kit_record()], name="record-rec-20261128T162118Z.tar.gz"
    )
    dest = home / "reports/device"
    unpack([first], device_minutes=1.0, dest=dest, render=False)
    unpack([second], device_minutes=1.0, dest=dest, render=False)
    unpack([second], device_minutes=1.0, dest=dest, render=False)
    bench = dest / "rec/bench"
    assert {p.name: p.read_bytes() for p in bench.iterdir()} == {
        "speed.txt": b"18 shapes\n",
        "speed-20261128T162118Z.txt": b"4 shapes\n",
    }
    assert "4 shapes" in (dest / "rec/README.md").read_text()


def test_a_later_leases_costs_join_the_earlier(home, kit_archive):
    """A speed entry's kit carries no costs, so its second lease's costs file holds only the shapes it
    measured: unpacked, the record keeps the first lease's shapes beside them (the same shape measured
    again takes the later figure), and a log the lease did not extend is appended, not replaced."""
    cost = "costs/cuda-NVIDIA-H200.json"
    first = kit_archive(
        {f"rec/{cost}": json.dumps({"a": 1, "b": 2}).encode(), "rec/costs/measure.log": b"a b\n"}, [kit_record()]
    )
    second = kit_archive(
        {f"rec/{cost}": json.dumps({"b": 3, "c": 4}).encode(), "rec/costs/measure.log": b"b c\n"},
        [kit_record()],
        name="record-rec-20261129T213125Z.tar.gz",
    )
    dest = home / "reports/device"
    unpack([first], device_minutes=1.0, dest=dest, render=False)
    unpack([second], device_minutes=1.0, dest=dest, render=False)
    assert json.loads((dest / "rec" / cost).read_text()) == {"a": 1, "b": 3, "c": 4}
    assert (dest / "rec/costs/measure.log").read_bytes() == b"a b\nb c\n"
