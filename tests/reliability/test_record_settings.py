"""Issue 54 item 2: a record holds runs of one setting. An archive of another preset, of other overrides,
or whose run is not the kit's config, and ``ansel collect-record`` of another preset or across a change of
params.yaml, are refused naming both settings; the record stays as it was, byte for byte."""

import copy
import json

import pytest

from ansel import targets as T
from ansel.config import ConfigError, load
from ansel.records import collect as collecting
from tests.reliability.kit_archives import RUN, kit_record, run_members, snapshot, trained, unpack_refused

SEED2 = RUN.replace("seed1", "seed2")


@pytest.mark.parametrize(
    "setting, named",
    [
        ({"preset": "full"}, r"preset 'full' with overrides \{\} cannot go into the record of preset 'smoke'"),
        (
            {"config": {"seeds": 1}},
            r"overrides \{'seeds': 1\} cannot go into the record of preset 'smoke' with overrides \{\}",
        ),
    ],
)
def test_an_archive_of_another_setting_is_refused_naming_both(
    device_record, home, finished_run, kit_archive, setting, named
):
    config = json.loads(finished_run["config.json"])
    archive = kit_archive(run_members(finished_run), [kit_record(run_config=config, **setting)])
    unpack_refused(archive, home, named)


def test_a_run_trained_otherwise_than_its_kit_says_is_refused(home, finished_run, kit_archive):
    config = json.loads(finished_run["config.json"])
    kit_config = copy.deepcopy(config)
    kit_config["train"]["lr"] = config["train"]["lr"] * 2
    archive = kit_archive(run_members(finished_run), [kit_record(run_config=kit_config)])
    unpack_refused(
        archive,
        home,
        rf"rec/{RUN}/config.json: trained with other settings than the kit's config of it "
        r"\(kit.json\) \(train.lr: ",
    )


def test_a_kit_of_changed_params_cannot_add_runs_beside_the_records_old_ones(
    device_record, home, finished_run, kit_archive
):
    """The record holds seed 1 at the old lr; a kit built after params.yaml changed brings seed 2 at the new."""
    config = json.loads(finished_run["config.json"])
    changed = {**config, "seed": 2, "train": {**config["train"], "lr": config["train"]["lr"] * 2}}
    files = {**finished_run, "config.json": json.dumps(changed).encode()}
    archive = kit_archive(
        run_members(files, run=SEED2),
        [
            kit_record(
                run_config=None,
                runs=[{"dir": RUN, "config": {**changed, "seed": 1}}, {"dir": SEED2, "config": changed}],
            )
        ],
    )
    unpack_refused(
        archive,
        home,
        rf"reports/device/rec/{RUN}/config.json: trained with other settings than the kit's "
        r"config of it .* \(train.lr: ",
    )


def _collect_refused(home, out, match: str) -> None:
    before = snapshot(home.parent)
    with pytest.raises(ConfigError, match=match):
        collecting.collect("smoke", {"smoke": ["synthetic"]}, out, report=lambda line: None)
    assert snapshot(home.parent) == before


def test_ansel_collect_record_of_another_preset_into_a_record_is_refused(home, finished_run):
    smoke = load(preset="smoke")
    trained(home, finished_run, T.Run("synthetic_en", T.Variant("qa_cnn"), 1), smoke)
    cpu = home / "reports/cpu-x/runs/wikiqa/apnet_qa_cnn_wikiqa/seed1"  # a record of the cpu preset
    cpu.mkdir(parents=True)
    (cpu / "config.json").write_text(json.dumps({"dataset": "wikiqa", "model": "apnet_qa_cnn_wikiqa", "seed": 1}))
    _collect_refused(
        home,
        home / "reports/cpu-x",
        r"reports/cpu-x/runs/wikiqa/apnet_qa_cnn_wikiqa/seed1: not a run of preset 'smoke'",
    )


def test_ansel_collect_record_across_a_params_change_is_refused_naming_the_key(home, finished_run, monkeypatch):
    """Part 1 collects seed 1 at lr 0.02; params.yaml then says 0.01 and part 2 trains seed 2: the record
    would render one table from both."""
    now = load(preset="smoke")
    before = copy.deepcopy(now)
    before["models"]["qa_cnn"].setdefault("train", {})["lr"] = 0.02
    trained(home, finished_run, T.Run("synthetic_en", T.Variant("qa_cnn"), 1), before)
    out = home / "reports/cpu-x"
    with monkeypatch.context() as m:
        m.setattr(collecting, "load", lambda preset: before)
        collecting.collect("smoke", {"smoke": ["synthetic"]}, out, report=lambda line: None)
    assert json.loads((out / RUN / "config.json").read_text())["train"]["lr"] == 0.02
    trained(home, finished_run, T.Run("synthetic_en", T.Variant("qa_cnn"), 2), now)
    _collect_refused(
        home,
        out,
        rf"reports/cpu-x/{RUN}/config.json: trained with other settings than preset 'smoke' "
        r"resolves now \(train.lr: 0.02 vs 0.01\)",
    )
