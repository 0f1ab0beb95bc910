"""Raw files after their download: checked against the manifest before preprocessing reads
them, and written with the umask's mode (issue 15). A corrupted mirror copy and an archive
member escaping its target are covered by tests/data/test_download.py."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

import pytest

from ansel import cli
from ansel.data import download as dl
from ansel.data.manifest import write_manifest
from ansel.data.registry import get_source

HEADER = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\r\n"
CONFIG = {"source": "wikiqa", "read": {"tokenizer": "english"}, "splits": ["train", "dev", "test"]}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def wikiqa_split(split: str) -> bytes:
    """Three questions of three candidates each (the first one correct), WikiQA's format."""
    rows = [
        f"{split}-Q{q}\twhat is thing {q} ?\tD{q}\tT\t{split}-D{q}-{a}\tthing {q} is answer {a} .\t{int(a == 0)}\r\n"
        for q in range(3)
        for a in range(3)
    ]
    return (HEADER + "".join(rows)).encode()


def download(raw: Path) -> None:
    cli.main(["download", "--source", "wikiqa", "--config", "{}", "--out", str(raw / "manifest.json")])


@pytest.fixture
def raw(tmp_path, monkeypatch) -> Path:
    """data/raw/wikiqa as `ansel download` leaves it, fetched from a mirror of gzipped copies."""
    mirror = tmp_path / "mirror" / "wikiqa"
    mirror.mkdir(parents=True)
    files = []
    for split in ("train", "dev", "test"):
        name, data = f"WikiQA-{split}.tsv", wikiqa_split(split)
        (mirror / f"{name}.gz").write_bytes(gz := gzip.compress(data))
        files.append({"name": name, "sha256": sha(data), "mirror": {"path": f"{name}.gz", "sha256": sha(gz)}})
    get_source("wikiqa")  # the readers registered first, from the real sources.yaml (the vectors' are listed there)
    monkeypatch.setattr(dl, "load_sources", lambda: {"wikiqa": {"mirror_dir": "wikiqa", "files": files}})
    monkeypatch.setenv(dl.MIRROR_ENV, str(tmp_path / "mirror"))
    raw = tmp_path / "data" / "raw" / "wikiqa"
    download(raw)
    return raw


def preprocess(raw: Path, out: Path) -> None:
    cli.main(
        ["preprocess", "--dataset", "wikiqa", "--config", json.dumps(CONFIG), "--raw", str(raw), "--out", str(out)]
    )


def truncate_at_line(path: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: len(lines) // 2]))


def flip_label(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data.replace(b"\t0\r\n", b"\t1\r\n", 1))  # same size


def test_manifest_records_size_and_sha256_and_extra_files_are_ignored(raw, tmp_path):
    dev = wikiqa_split("dev")
    assert json.loads((raw / "manifest.json").read_text())["WikiQA-dev.tsv"] == {"size": len(dev), "sha256": sha(dev)}
    (raw / "NOTES.txt").write_text("not downloaded, not read\n")
    preprocess(raw, tmp_path / "out")
    assert (tmp_path / "out" / "candidates-dev.parquet").exists()


@pytest.mark.parametrize(
    "damage, message",
    [
        (
            truncate_at_line,
            r"WikiQA-dev\.tsv: changed since the download verified it: size 328 bytes, "
            rf"expected {len(wikiqa_split('dev'))};",
        ),
        (
            flip_label,
            r"WikiQA-dev\.tsv: changed since the download verified it: sha256 [0-9a-f]{64}, expected [0-9a-f]{64};",
        ),
        (Path.unlink, r"WikiQA-dev\.tsv: listed in \S+/manifest\.json but missing;"),
    ],
)
def test_changed_raw_file_is_refused_naming_it_and_the_fix(raw, tmp_path, damage, message):
    damage(raw / "WikiQA-dev.tsv")
    with pytest.raises(SystemExit, match=message) as refused:
        preprocess(raw, tmp_path / "out")
    assert f"delete {raw / 'manifest.json'} and rerun snakemake" in str(refused.value)
    assert not (tmp_path / "out").exists()
    # the fix the message gives: without the manifest the download runs again and re-fetches the file
    (raw / "manifest.json").unlink()
    download(raw)
    preprocess(raw, tmp_path / "out")
    assert (raw / "WikiQA-dev.tsv").read_bytes() == wikiqa_split("dev")


def test_missing_manifest_is_refused_and_an_old_one_checked_by_sha256(raw, tmp_path):
    manifest = raw / "manifest.json"
    old = {rel: entry["sha256"] for rel, entry in json.loads(manifest.read_text()).items()}
    manifest.unlink()
    with pytest.raises(SystemExit, match=r"manifest\.json: missing: the raw files were not written by the download"):
        preprocess(raw, tmp_path / "out")
    manifest.write_text(json.dumps(old))
    preprocess(raw, tmp_path / "out")
    flip_label(raw / "WikiQA-test.tsv")
    with pytest.raises(SystemExit, match=r"WikiQA-test\.tsv: changed since the download verified it: sha256"):
        preprocess(raw, tmp_path / "out2")
    assert not (tmp_path / "out2").exists()


def test_what_a_killed_download_left_is_removed_by_the_next_one_in_one_line(raw, capsys):
    """A download killed outright (SIGKILL, a power cut) leaves its temporaries in data/raw/<source>/ (left out of
    the manifest and of DVC's data/raw): the next download removes them and says so; nothing else is touched."""
    downloaded = json.loads((raw / "manifest.json").read_text())
    stale = raw / ".download-k2j4_x" / "0a1b2c3d4e5f" / "WikiQA.zip"  # fetch_dataset's downloads folder
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"half")
    (raw / ".download-WikiQA-dev.tsv.0a1b2c3d4e5f.part").write_bytes(b"half")  # a copy's, before its rename
    (raw / "sub").mkdir()
    (raw / "sub" / ".download-a.txt.0a1b2c3d4e5f.part").write_bytes(b"half")
    mine = {"NOTES.txt": b"by hand", "sub/a.txt": b"by hand", "WikiQA-dev.tsv.rejected": b"kept", "x.download-1": b"1"}
    for rel, data in mine.items():
        (raw / rel).write_bytes(data)
    write_manifest(raw / "manifest.json")  # as `python -m ansel.data.manifest` does
    listed = json.loads((raw / "manifest.json").read_text())
    assert sorted(listed) == sorted([*downloaded, "NOTES.txt", "sub/a.txt", "x.download-1"])
    capsys.readouterr()
    download(raw)
    assert capsys.readouterr().out == (
        f"{raw}: removed what a killed download left: .download-WikiQA-dev.tsv.0a1b2c3d4e5f.part, .download-k2j4_x, "
        "sub/.download-a.txt.0a1b2c3d4e5f.part\n"
    )
    assert list(raw.rglob(".download-*")) == []
    assert all((raw / rel).read_bytes() == data for rel, data in mine.items())
    assert json.loads((raw / "manifest.json").read_text()) == listed
    download(raw)  # nothing left: nothing said
    assert capsys.readouterr().out == ""


def test_a_raw_file_out_of_its_format_is_said_in_one_line_naming_the_line(raw, tmp_path):
    """A dataset's own copy (its manifest written again, as `python -m ansel.data.manifest` does)."""
    dev = raw / "WikiQA-dev.tsv"
    lines = dev.read_bytes().splitlines(keepends=True)
    dev.write_bytes(b"".join([*lines[:3], b"a line without its tabs\r\n", *lines[3:]]))
    write_manifest(raw / "manifest.json")
    with pytest.raises(SystemExit) as refused:
        preprocess(raw, tmp_path / "out")
    assert str(refused.value) == f"ansel preprocess: {dev}: line 4: expected 7 fields separated by '\\t', got 1"
    assert not (tmp_path / "out").exists()


def test_a_file_the_download_cannot_fetch_is_said_in_one_line(raw, tmp_path):
    """`ansel download` (a Snakemake job's log, or a hand run) prints the file, where it looked and the fix."""
    (raw / "manifest.json").unlink()
    (raw / "WikiQA-dev.tsv").unlink()
    (tmp_path / "mirror" / "wikiqa" / "WikiQA-dev.tsv.gz").unlink()
    with pytest.raises(SystemExit) as refused:
        download(raw)
    said = str(refused.value)
    assert (
        said.startswith(f"ansel download: {raw / 'WikiQA-dev.tsv'}: could not fetch: not in mirror")
        and "\n" not in said
    )


def test_a_hand_copied_raw_file_failing_its_checksum_is_kept_aside_and_named(raw, tmp_path):
    """WikiQA-dev.tsv copied in by hand with LF line endings: never deleted; each message says where it went."""
    dev, mirrored = raw / "WikiQA-dev.tsv", tmp_path / "mirror" / "wikiqa" / "WikiQA-dev.tsv.gz"
    crlf, gz = dev.read_bytes(), mirrored.read_bytes()
    lf = crlf.replace(b"\r\n", b"\n")
    (raw / "manifest.json").unlink()
    dev.write_bytes(lf)
    mirrored.unlink()
    with pytest.raises(SystemExit) as refused:
        download(raw)
    assert str(refused.value).startswith(
        f"ansel download: {dev} was here but its sha256 is {sha(lf)} where {sha(crlf)} is expected "
        f"(size {len(lf)} bytes); kept as {dev}.rejected; {dev}: could not fetch: not in mirror"
    ), refused.value
    mirrored.write_bytes(gz)
    download(raw)
    assert dev.read_bytes() == crlf and Path(f"{dev}.rejected").read_bytes() == lf
    assert "WikiQA-dev.tsv.rejected" not in json.loads((raw / "manifest.json").read_text())


def test_a_mistyped_mirror_is_named_as_the_cause(raw, tmp_path, monkeypatch):
    """A mirror folder that does not exist: the line says so, not that each file is "not in mirror"."""
    (raw / "manifest.json").unlink()
    (raw / "WikiQA-dev.tsv").unlink()
    monkeypatch.setenv(dl.MIRROR_ENV, str(tmp_path / "mirorr"))
    with pytest.raises(SystemExit) as refused:
        download(raw)
    assert str(refused.value).startswith(
        f"ansel download: {raw / 'WikiQA-dev.tsv'}: could not fetch: no mirror folder {tmp_path / 'mirorr/wikiqa'} "
        "(data.mirror or $ANSEL_DATA_MIRROR and the dataset's mirror_dir; mistyped?)"
    )


def test_a_raw_file_the_download_did_not_fetch_is_named_with_what_it_fetched(raw, tmp_path):
    """As QuoraQP's train.tsv, in no mirror: the dataset's `fetch` leaves it out, its reader needs it."""
    (raw / "WikiQA-train.tsv").unlink()
    write_manifest(raw / "manifest.json")  # as a download of dev and test alone leaves it
    config = {**CONFIG, "fetch": {"files": ["WikiQA-dev.tsv", "WikiQA-test.tsv"]}}
    with pytest.raises(SystemExit) as refused:
        cli.main(
            [
                "preprocess",
                "--dataset",
                "wikiqa",
                "--config",
                json.dumps(config),
                "--raw",
                str(raw),
                "--out",
                str(tmp_path / "out"),
            ]
        )
    assert str(refused.value) == (
        f"ansel preprocess: datasets.wikiqa: {raw / 'WikiQA-train.tsv'}: raw file missing; the download fetched WikiQA-dev.tsv, "
        "WikiQA-test.tsv (datasets.wikiqa.fetch.files: WikiQA-dev.tsv, WikiQA-test.tsv); the wikiqa reader "
        "needs it too (a file in no mirror: see the mirror's SOURCE.md)"
    )
    assert not (tmp_path / "out").exists()


@pytest.fixture(params=[0o022, 0o027], ids=["umask022", "umask027"])
def umask(request):
    before = os.umask(request.param)
    yield request.param
    os.umask(before)


def test_downloaded_and_extracted_files_follow_the_umask(tmp_path, monkeypatch, umask):
    mirror = tmp_path / "mirror" / "ds"
    mirror.mkdir(parents=True)
    (mirror / "a.tsv.gz").write_bytes(gz := gzip.compress(b"A\n"))
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("inner/b.txt", b"B\n")
    (mirror / "b.zip").write_bytes(archive.getvalue())
    spec = {
        "ds": {
            "mirror_dir": "ds",
            "files": [
                {"name": "a.tsv", "sha256": sha(b"A\n"), "mirror": {"path": "a.tsv.gz", "sha256": sha(gz)}},
                {
                    "name": "b.zip",
                    "sha256": sha(archive.getvalue()),
                    "extract": True,  # an upstream download, then extracted
                    "upstream": [{"url": (mirror / "b.zip").as_uri()}],
                },
            ],
        }
    }
    monkeypatch.setattr(dl, "load_sources", lambda: spec)
    raw = tmp_path / "raw"
    dl.fetch_dataset("ds", raw, tmp_path / "mirror")
    write_manifest(raw / "manifest.json")
    modes = {str(p.relative_to(raw)): p.stat().st_mode & 0o777 for p in raw.rglob("*")}
    file_mode, dir_mode = 0o666 & ~umask, 0o777 & ~umask
    assert modes == {
        "a.tsv": file_mode,
        "b.zip": file_mode,
        "inner": dir_mode,
        "inner/b.txt": file_mode,
        "manifest.json": file_mode,
    }
