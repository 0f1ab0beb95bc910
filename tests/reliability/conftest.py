"""A small processed synthetic corpus and a tiny run trained and evaluated through the CLI, as
the train and evaluate rules run them.

The records' tests (issue 54: unpacking, collecting, the front page) share one finished run of that
corpus (``finished_run``), a checkout of links in a temporary folder (``home``) and archives made from
them (``kit_archive``). Issue 33's failures are each tested here but one: `epochs: -1` / `margin: -1` refused by a dry run
(item 4) are cases of tests/workflow/test_stages.py's settings refused at -n."""

import io
import json
import tarfile
from pathlib import Path

import pytest

from ansel import cli
from ansel.data.readers.synthetic import Synthetic
from ansel.data.vocab import Vocab, training_texts
from tests.tiny_run import tiny_qa_cnn, train_args


@pytest.fixture(scope="session")
def processed(tmp_path_factory) -> Path:
    raw, out = tmp_path_factory.mktemp("raw"), tmp_path_factory.mktemp("processed")
    s = Synthetic()
    s.fetch(raw, None, {"seed": 5, "questions": {"train": 60, "dev": 20, "test": 20}})
    ds = s.read(raw, {"language": "en", "tokenizer": "english", "name": "syn"})
    ds.save(out)
    Vocab.build(training_texts(ds)).save(out / "vocab.json")
    return out


@pytest.fixture
def train_and_evaluate(processed):
    """A tiny qa_cnn: `ansel train` (2 epochs of ``max_batches``), then `ansel evaluate`."""
    return lambda run_dir, timings, max_batches=2: _train_and_evaluate(processed, run_dir, timings, max_batches)


def _train_and_evaluate(processed: Path, run_dir: Path, timings: Path, max_batches: int) -> None:
    cli.main(train_args(tiny_qa_cnn(max_batches=max_batches), processed, run_dir, "--timings", str(timings)))
    cli.main(["evaluate", "--processed", str(processed), "--run-dir", str(run_dir)])


@pytest.fixture(scope="session")
def finished_run(processed, tmp_path_factory) -> dict[str, bytes]:
    """{file name: bytes} of one trained and evaluated run, run.trec gzipped as a kit brings it back."""
    from ansel.records.layout import gzip_file

    run = tmp_path_factory.mktemp("finished") / "seed1"
    _train_and_evaluate(processed, run, run / "timings.json", 2)
    gzip_file(run / "run.trec", run / "run.trec.gz")
    return {
        name: (run / name).read_bytes()
        for name in ("metrics.json", "config.json", "log.csv", "run.trec", "run.trec.gz", "timings.json")
    }


@pytest.fixture
def home(tmp_path, processed, repo_root, monkeypatch) -> Path:
    """A checkout (``ANSEL_ROOT``, the working directory) of links to this one's specs and sources, with
    the fixture corpus as data/processed/synthetic_en, under ``tmp_path`` beside an ``outside/`` folder."""
    checkout = tmp_path / "home"
    (checkout / "data/processed").mkdir(parents=True)
    for name in ("Snakefile", "params.yaml", "presets", "workflow", "src"):
        (checkout / name).symlink_to(repo_root / name)
    (checkout / "data/processed/synthetic_en").symlink_to(processed)
    (checkout / "reports/device").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside/kept.txt").write_text("not the record's\n")
    monkeypatch.setenv("ANSEL_ROOT", str(checkout))
    monkeypatch.chdir(checkout)
    return checkout


@pytest.fixture
def kit_archive(tmp_path):
    """``make(members, records=...)``: a kit's archive (``{member: bytes}``; ``links``: {member: target}
    as symlinks) at tmp_path/record-*.tar.gz, kit.json first."""

    def make(
        members: dict[str, bytes],
        records: list[dict],
        links: dict[str, str] | None = None,
        name: str = "record-rec-20261127T000000Z.tar.gz",
    ) -> Path:
        path = tmp_path / name
        with tarfile.open(path, "w:gz") as tar:
            for member, data in {
                "kit.json": json.dumps({"records": records, "commit": "c0ffee"}).encode(),
                **members,
            }.items():
                info = tarfile.TarInfo(member)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            for member, target in (links or {}).items():
                info = tarfile.TarInfo(member)
                info.type, info.linkname = tarfile.SYMTYPE, target
                tar.addfile(info)
        return path

    return make


@pytest.fixture
def device_record(home, finished_run, kit_archive) -> dict:
    """reports/device/rec as a first lease (record-rec-1) placed it: the finished run, preset smoke, no
    overrides; returns the run's config."""
    from ansel.records.kit_unpack import unpack
    from tests.reliability.kit_archives import kit_record, run_members

    config = json.loads(finished_run["config.json"])
    unpack(
        [kit_archive(run_members(finished_run), [kit_record(run_config=config)], name="record-rec-1.tar.gz")],
        device_minutes=1.0,
        dest=home / "reports/device",
    )
    return config
