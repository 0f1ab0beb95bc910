"""Issue 54 item 8: a measured-costs file cut short, of the wrong shape, with an unknown key or a
negative cost, a run's config.json cut short, a negative --device-minutes: each refused naming the
file (and key), by `ansel plan`, `make gpu-kit` (its costs) and `ansel collect-record`, with nothing written."""

import json

import pytest

from ansel import cli
from ansel.config import ConfigError
from ansel.plan import costs_by_device

GOOD = {"seconds_per_batch": 0.01, "dev_seconds": 0.5, "device": "cuda/NVIDIA H200", "batches": 12}


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"shape": {"seconds_per_batch": 0.0', r"not valid JSON \(.*\): restore or delete it"),
        (json.dumps([GOOD]), "expected a JSON object, got list"),
        (json.dumps({"shape": [1, 2]}), r"shape: expected a mapping, got \[1, 2\]"),
        (
            json.dumps({"shape": {**GOOD, "secs": 1}}),
            r"shape\.secs: unknown key \(typo of 'stacks'\?\); known: batches, dev_seconds",
        ),
        (
            json.dumps({"shape": {**GOOD, "seconds_per_batch": -0.5}}),
            r"shape\.seconds_per_batch: -0\.5 is not a number >= 0",
        ),
        (json.dumps({"shape": {**GOOD, "dev_seconds": "slow"}}), r"shape\.dev_seconds: 'slow' is not of type"),
    ],
)
def test_a_broken_costs_file_in_a_record_is_refused_naming_it(tmp_path, monkeypatch, text, message):
    record = tmp_path / "reports/device/rec"
    costs = record / "costs/cuda-NVIDIA-H200.json"
    costs.parent.mkdir(parents=True)
    costs.write_text(text)
    with pytest.raises(ConfigError, match=rf"^{costs}: {message}"):
        costs_by_device([record])
    with pytest.raises(SystemExit, match=rf"^ansel plan: {costs}: {message}"):
        cli.main(["plan", "--preset", "smoke", "--costs", str(record)])
    from ansel import plan
    from ansel.config import load
    from ansel.records.kit_pack import kit_costs

    monkeypatch.setattr(plan, "default_sources", lambda: [record])  # what `make gpu-kit` prices with
    with pytest.raises(ConfigError, match=rf"^{costs}: {message}"):
        kit_costs([load(preset="smoke")])


@pytest.mark.parametrize(
    "key, message",
    [
        ("shape", r"shape: not a run shape \(the JSON of ``ansel.plan.shape``: Expecting value"),
        ('{"dataset": "wikiqa"}', r"\{.*\}: not a run shape \(.*not a mapping with a dataset and an arch"),
        ('{"dataset": "wikiqa", "arch": "qa_cnnn"}', r"\{.*\}: not a run shape \(.*unknown arch 'qa_cnnn'"),
        ("shape", r"shape\.overhead: fitted from runs' timings, never read from a costs file"),
    ],
)
def test_a_costs_file_key_that_is_no_run_shape_is_refused_naming_it(tmp_path, key, message):
    costs = tmp_path / "costs/cuda-NVIDIA-H200.json"
    costs.parent.mkdir(parents=True)
    value = {**GOOD, "overhead": {"start_seconds": 1.0}} if "overhead" in message else GOOD
    costs.write_text(json.dumps({key: value}))
    with pytest.raises(ConfigError, match=rf"^{costs}: {message}"):
        costs_by_device([tmp_path])


def test_a_runs_config_or_timings_cut_short_is_refused_naming_it(tmp_path):
    run = tmp_path / "runs/synthetic_en/qa_cnn/seed1"
    run.mkdir(parents=True)
    (run / "config.json").write_text('{"dataset": "synthetic_en", "mod')
    with pytest.raises(ConfigError, match=rf"^{run / 'config.json'}: not valid JSON"):
        costs_by_device([tmp_path])
    (run / "config.json").write_text(json.dumps({"dataset": "synthetic_en", "model": "qa_cnn", "train": {}}))
    (run / "timings.json").write_text(json.dumps({"epochs": []}))
    with pytest.raises(ConfigError, match=rf"^{run / 'timings.json'}: not a run's timings \(KeyError: 'train'\)"):
        costs_by_device([tmp_path])
    (run / "timings.json").write_text(
        json.dumps({"train": {"device": "cpu", "epochs": [{"seconds": 1.0, "batches": 2, "dev_seconds": 0.5}]}})
    )  # timings of use, of a config with no arch
    with pytest.raises(ConfigError, match=rf"^{run / 'config.json'}: not a run's config \(shape: unknown arch None"):
        costs_by_device([tmp_path])


def test_ansel_collect_record_names_a_config_json_cut_short_and_copies_nothing(tmp_path, monkeypatch):
    from ansel.records import collect as collecting

    checkout, out = tmp_path / "checkout", tmp_path / "reports/cpu-smoke"
    run = checkout / "results/runs/synthetic_en/qa_cnn/seed1"
    run.mkdir(parents=True)
    for name in ("metrics.json", "run.trec", "log.csv"):
        (run / name).write_text("{}\n")
    (run / "config.json").write_text('{"dataset": "synthetic_en", "model": "qa_')
    monkeypatch.setattr(collecting, "root", lambda: checkout)
    with pytest.raises(SystemExit, match=rf"^ansel collect-record: {out}: {run / 'config.json'}: not valid JSON"):
        cli.main(["collect-record", "--preset", "smoke", "--items", "smoke/synthetic", "--out", str(out)])
    assert not out.exists()


def test_negative_device_minutes_are_refused(capsys):
    with pytest.raises(SystemExit):
        cli.main(["gpu-unpack", "archive.tar.gz", "--device-minutes", "-5"])
    assert "--device-minutes: must be above 0, not -5" in capsys.readouterr().err
