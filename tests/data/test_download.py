from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansel.data import download as dl
from ansel.data.download import FetchError
from ansel.data.manifest import write_manifest


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def listing(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*")) if d.exists() else []


def test_git_blob_matches_git_hash_object(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"some content\r\n")
    expected = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True)
    assert dl.git_blob_of(path) == expected.stdout.strip()


def test_mirror_copy_is_decompressed_and_verified(tmp_path):
    data = b"a\tb\r\nc\td\r\n"
    (tmp_path / "mirror").mkdir()
    gz = tmp_path / "mirror" / "x.tsv.gz"
    gz.write_bytes(gzip.compress(data))
    spec = {"name": "x.tsv", "sha256": sha(data), "mirror": {"path": "x.tsv.gz", "sha256": sha(gz.read_bytes())}}
    path = dl.fetch_file(spec, tmp_path / "raw", tmp_path / "mirror")
    assert path.read_bytes() == data and listing(tmp_path / "raw") == ["x.tsv"]


@pytest.mark.parametrize("where", ["mirror", "content"])
def test_checksum_mismatch_names_file_and_leaves_nothing(tmp_path, where):
    data = b"payload\n"
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "x.txt").write_bytes(data)
    spec = {"name": "x.txt", "sha256": sha(data), "mirror": {"path": "x.txt", "sha256": sha(data)}}
    if where == "mirror":
        spec["mirror"] = {"path": "x.txt", "sha256": "0" * 64}
    else:
        spec["sha256"] = "0" * 64
    with pytest.raises(FetchError, match=r"x\.txt.*sha256 mismatch"):
        dl.fetch_file(spec, tmp_path / "raw", tmp_path / "mirror")
    assert listing(tmp_path / "raw") == []


def test_truncated_compressed_mirror_copy_fails_cleanly(tmp_path):
    data = b"line\n" * 1000
    (tmp_path / "mirror").mkdir()
    gz = gzip.compress(data)[:-30]
    (tmp_path / "mirror" / "x.gz").write_bytes(gz)
    spec = {"name": "x", "sha256": sha(data), "mirror": {"path": "x.gz", "sha256": sha(gz)}}
    with pytest.raises(FetchError, match=r"x\.gz: cannot read"):
        dl.fetch_file(spec, tmp_path / "raw", tmp_path / "mirror")
    assert listing(tmp_path / "raw") == []


def test_missing_everywhere_names_file(tmp_path):
    (tmp_path / "mirror").mkdir()
    spec = {"name": "x", "git_blob": "0" * 40, "mirror": {"path": "x", "git_blob": "0" * 40}}
    with pytest.raises(FetchError, match=r"raw/x: could not fetch: not in mirror"):
        dl.fetch_file(spec, tmp_path / "raw", tmp_path / "mirror")


def test_existing_verified_file_is_kept_and_a_failing_one_moved_aside_never_deleted(tmp_path, capsys):
    data = b"ok\n"
    mirror, raw = tmp_path / "mirror", tmp_path / "raw"
    mirror.mkdir()
    (mirror / "x").write_bytes(data)
    raw.mkdir()
    (raw / "x").write_bytes(b"by hand")  # a user's own copy (other line endings, another release)
    spec = {"name": "x", "sha256": sha(data), "mirror": {"path": "x", "sha256": sha(data)}}
    found = (
        f"{raw / 'x'} was here but its sha256 is {sha(b'by hand')} where {sha(data)} is expected (size 7 bytes); "
        f"kept as {raw / 'x.rejected'}"
    )
    assert dl.fetch_file(spec, raw, mirror).read_bytes() == data
    assert capsys.readouterr().out == f"{found}; fetched a verified copy from {mirror / 'x'}\n"
    assert dl.fetch_file(spec, raw, mirror).read_bytes() == data and capsys.readouterr().out == ""
    # fetching fails too: the message says where the file went; an earlier one set aside stays
    (raw / "x").write_bytes(b"by hand")
    (mirror / "x").unlink()
    with pytest.raises(FetchError) as failed:
        dl.fetch_file(spec, raw, mirror)
    assert str(failed.value).startswith(f"{found}2; {raw / 'x'}: could not fetch: not in mirror"), failed.value
    assert listing(raw) == ["x.rejected", "x.rejected2"] and (raw / "x.rejected2").read_bytes() == b"by hand"
    assert dl.is_left_out("x.rejected2") and not dl.is_left_out("x.rejected.tsv")


def test_an_uncompressed_mirror_copy_is_taken_when_the_files_checksum_verifies_it(tmp_path):
    data = b"a\tb\r\n"
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "x.tsv").write_bytes(data)  # where sources.yaml lists x.tsv.gz
    spec = {"name": "x.tsv", "sha256": sha(data), "mirror": {"path": "x.tsv.gz", "sha256": "0" * 64}}
    assert dl.fetch_file(spec, tmp_path / "raw", tmp_path / "mirror").read_bytes() == data
    (tmp_path / "mirror" / "x.tsv").write_bytes(b"a\tb\n")
    with pytest.raises(
        FetchError,
        match=r"x\.tsv \(from \S+/mirror/x\.tsv, the mirror's uncompressed copy of x\.tsv\.gz\): sha256 mismatch",
    ):
        dl.fetch_file(spec, tmp_path / "raw2", tmp_path / "mirror")
    # a first download still to pin has no checksum of its own: the sibling is named, not taken
    pinned = {"name": "x.tsv", dl.PIN_KEY: True, "mirror": {"path": "x.tsv.gz"}}
    with pytest.raises(
        FetchError,
        match=r"not in mirror \(\S+/x\.tsv\.gz; \S+/mirror/x\.tsv is there uncompressed: compress it to x\.tsv\.gz\)",
    ):
        dl.fetch_file(pinned, tmp_path / "raw3", tmp_path / "mirror")


def make_zip(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def make_tar(path: Path, members: dict[str, bytes], symlink: tuple[str, str] | None = None) -> None:
    with tarfile.open(path, "w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        if symlink:
            info = tarfile.TarInfo(symlink[0])
            info.type, info.linkname = tarfile.SYMTYPE, symlink[1]
            t.addfile(info)


def test_extract_zip_and_tar(tmp_path):
    make_zip(tmp_path / "a.zip", {"lawQA/t_r_a_i_n.txt": b"x", "lawQA/t_e_s_t.txt": b"y"})
    out = dl.extract_archive(tmp_path / "a.zip", tmp_path / "z")
    assert sorted(p.read_bytes() for p in out) == [b"x", b"y"]
    make_tar(tmp_path / "a.tgz", {"d/one.txt": b"1"})
    dl.extract_archive(tmp_path / "a.tgz", tmp_path / "t", ["d/one.txt"])
    assert listing(tmp_path / "t") == ["d", "d/one.txt"]


@pytest.mark.parametrize(
    "kind, member",
    [
        ("zip", "../evil.txt"),
        ("zip", "ok/../../evil.txt"),
        ("zip", "/tmp/evil.txt"),
        ("tar", "../evil.txt"),
        ("tar", "/abs/evil.txt"),
        ("tar-symlink", "link"),
    ],
)
def test_member_escaping_target_is_refused_and_nothing_extracted(tmp_path, kind, member):
    archive = tmp_path / ("bad.zip" if kind == "zip" else "bad.tgz")
    members = {"good.txt": b"fine", member: b"evil"} if kind != "tar-symlink" else {"good.txt": b"fine"}
    if kind == "zip":
        make_zip(archive, members)
    else:
        make_tar(archive, members, symlink=("link", "/etc/passwd") if kind == "tar-symlink" else None)
    target = tmp_path / "target"
    with pytest.raises(FetchError, match=rf"bad\.(zip|tgz): member '{member}'"):
        dl.extract_archive(archive, target)
    assert listing(target) == [] and not (tmp_path / "evil.txt").exists()


@pytest.mark.parametrize("member", ["d/.download-x/a.txt", ".download-a.txt.0a1b2c3d4e5f.part", "a.txt.rejected"])
def test_a_member_named_like_a_file_data_raw_leaves_out_is_refused(tmp_path, member):
    """Its manifest would not list it (read unchecked), and the next download would remove a temporary's name."""
    make_zip(tmp_path / "a.zip", {"good.txt": b"fine", member: b"x"})
    with pytest.raises(FetchError, match=rf"a\.zip: member '{member}' is named like a file the download keeps aside"):
        dl.extract_archive(tmp_path / "a.zip", tmp_path / "target")
    assert listing(tmp_path / "target") == []


def test_fetch_dataset_groups_and_extract(tmp_path, monkeypatch):
    blob = tmp_path / "mirror" / "ds" / "arch.zip"
    blob.parent.mkdir(parents=True)
    make_zip(blob, {"inner/a.txt": b"A"})
    spec = {
        "ds": {
            "mirror_dir": "ds",
            "files": [
                {
                    "name": "arch.zip",
                    "sha256": sha(blob.read_bytes()),
                    "extract": True,
                    "mirror": {"path": "arch.zip", "sha256": sha(blob.read_bytes())},
                },
                {"name": "alt1", "group": "g", "sha256": "0" * 64},  # not obtainable
                {"name": "alt2", "group": "g", "sha256": sha(b"B"), "mirror": {"path": "b", "sha256": sha(b"B")}},
            ],
        }
    }
    (tmp_path / "mirror" / "ds" / "b").write_bytes(b"B")
    monkeypatch.setattr(dl, "load_sources", lambda: spec)
    got = dl.fetch_dataset("ds", tmp_path / "raw", tmp_path / "mirror")
    assert [p.name for p in got] == ["arch.zip", "alt2"]
    assert (tmp_path / "raw" / "inner" / "a.txt").read_bytes() == b"A"
    with pytest.raises(KeyError, match="unknown file"):
        dl.fetch_dataset("ds", tmp_path / "raw", tmp_path / "mirror", {"files": ["nope"]})


def test_an_extracted_member_never_replaces_a_file_of_other_bytes(tmp_path, monkeypatch, capsys):
    """A member edited by hand in data/raw/<source>/ is kept aside, in one line; an identical one is replaced silently."""
    blob = tmp_path / "mirror" / "ds" / "arch.zip"
    blob.parent.mkdir(parents=True)
    make_zip(blob, {"inner/a.txt": b"A\r\n", "inner/b.txt": b"B"})
    digest = sha(blob.read_bytes())
    arch = {"name": "arch.zip", "sha256": digest, "extract": True, "mirror": {"path": "arch.zip", "sha256": digest}}
    monkeypatch.setattr(dl, "load_sources", lambda: {"ds": {"mirror_dir": "ds", "files": [arch]}})
    raw = tmp_path / "raw"
    dl.fetch_dataset("ds", raw, tmp_path / "mirror")
    dl.fetch_dataset("ds", raw, tmp_path / "mirror")  # a rerun: the same bytes, nothing said
    assert capsys.readouterr().out == ""
    edited = raw / "inner" / "a.txt"
    edited.write_bytes(b"A\n")
    (raw / "inner" / "a.txt.rejected").write_bytes(b"kept earlier")
    dl.fetch_dataset("ds", raw, tmp_path / "mirror")
    kept = raw / "inner" / "a.txt.rejected2"
    assert capsys.readouterr().out == (
        f"{edited} was here but differs from member 'inner/a.txt' of {raw / 'arch.zip'}; kept as {kept}\n"
    )
    assert edited.read_bytes() == b"A\r\n" and kept.read_bytes() == b"A\n"
    assert (raw / "inner" / "a.txt.rejected").read_bytes() == b"kept earlier"
    write_manifest(raw / "manifest.json")
    assert sorted(json.loads((raw / "manifest.json").read_text())) == ["arch.zip", "inner/a.txt", "inner/b.txt"]


def test_every_temporary_a_download_makes_in_its_folder_has_its_prefix(tmp_path, monkeypatch):
    """What a download killed mid-write leaves is known by its name: left out of the manifest and of DVC's
    data/raw, and removed by the next download (tests/reliability/test_raw_files.py)."""
    blob = tmp_path / "mirror" / "ds" / "arch.zip"
    blob.parent.mkdir(parents=True)
    make_zip(blob, {"inner/a.txt": b"A"})
    digest = sha(blob.read_bytes())
    arch = {"name": "arch.zip", "sha256": digest, "extract": True, "mirror": {"path": "arch.zip", "sha256": digest}}
    monkeypatch.setattr(dl, "load_sources", lambda: {"ds": {"mirror_dir": "ds", "files": [arch]}})
    raw, seen, copy = tmp_path / "raw", set(), dl._copy_stream

    def spy(src, dst_path, label):  # the mirror copy's bytes, then the member's: what raw holds meanwhile
        seen.update(p.name for p in raw.iterdir())
        copy(src, dst_path, label)

    monkeypatch.setattr(dl, "_copy_stream", spy)
    dl.fetch_dataset("ds", raw, tmp_path / "mirror")
    temporaries = seen - {"arch.zip", "inner"}  # the downloads folder, the mirror copy's file, the staging folder
    assert len(temporaries) == 3 and all(name.startswith(dl.TEMP_PREFIX) for name in temporaries), seen
    assert listing(raw) == ["arch.zip", "inner", "inner/a.txt"]


def test_dvc_leaves_out_of_data_raw_exactly_the_files_the_manifest_does(repo_root, tmp_path):
    """data/raw is a DVC output (dvc.yaml): a file kept aside there, or a temporary a killed download left (a
    file, or a folder and what is in it), must neither change its hash (`dvc status` would see the data stage
    changed) nor be deleted by `dvc checkout` (`make pull`)."""
    from dvc.fs import LocalFileSystem
    from dvc.ignore import DvcIgnorePatterns

    ignore = DvcIgnorePatterns.from_file(str(repo_root / ".dvcignore"), LocalFileSystem(), ".dvcignore")
    kept = ["WikiQA-dev.tsv.rejected", "WikiQA-dev.tsv.rejected2", "a.txt.rejected12", "x.rejected2.tsv"]
    temporaries = [".download-WikiQA-dev.tsv.0a1b2c3d4e5f.part", ".download-k2j4_x/0a1b2c3d4e5f/WikiQA.zip"]
    listed = ["WikiQA-dev.tsv", "x.rejected.tsv", "rejected", "pins.json", "inner/a.txt", "x.download-1", "download-x"]
    left_out = [*kept, *temporaries, "inner/.download-a.txt.0a1b2c3d4e5f.part"]
    raw = tmp_path / "raw"
    for rel in [*left_out, *listed]:
        (raw / rel).parent.mkdir(parents=True, exist_ok=True)
        (raw / rel).write_bytes(b"x")
    write_manifest(raw / "manifest.json")
    assert sorted(json.loads((raw / "manifest.json").read_text())) == sorted(listed)
    for rel in [*left_out, *listed, "manifest.json"]:
        path = repo_root / "data" / "raw" / "wikiqa" / rel
        assert ignore.matches(str(path.parent), path.name) == (rel in left_out), rel


def test_sources_yaml_entries_are_complete():
    for name, spec in dl.load_sources().items():
        assert spec["mirror_dir"], name
        for f in spec["files"]:
            assert f.get("sha256") or f.get("git_blob") or spec.get("pin") == "first_download", (name, f["name"])
            assert f.get("mirror") or f.get("upstream"), (name, f["name"])
            assert not dl.is_left_out(f["name"]), (name, f["name"])  # its manifest would not list it
            for up in f.get("upstream", []):
                if "pip" in up:  # a wheel: its version pinned and its bytes verified
                    assert "==" in up["pip"] and up.get("sha256"), (name, f["name"])
                else:
                    assert up["url"].startswith(("http://", "https://")), (name, f["name"])


def test_every_source_has_a_reader():
    from ansel.data.registry import get_source

    for name in dl.load_sources():
        assert hasattr(get_source(name), "read")


def test_resolve_mirror_prefers_params_then_env(monkeypatch, tmp_path):
    monkeypatch.setenv(dl.MIRROR_ENV, str(tmp_path / "env"))
    assert dl.resolve_mirror(tmp_path / "param") == tmp_path / "param"
    assert dl.resolve_mirror(None) == tmp_path / "env"
    monkeypatch.delenv(dl.MIRROR_ENV)
    assert dl.resolve_mirror(None) is None


def test_upstream_archive_members_downloaded_once_and_verified(tmp_path, monkeypatch):
    make_zip(tmp_path / "corpus.zip", {"Corpus/a.tsv": b"A\r\n", "Corpus/b.tsv": b"B\r\n"})
    url = (tmp_path / "corpus.zip").as_uri()  # file:// — urllib fetches it like a remote URL
    spec = {
        "ds": {
            "mirror_dir": "ds",
            "files": [
                {"name": "a.tsv", "sha256": sha(b"A\r\n"), "upstream": [{"url": url, "member": "Corpus/a.tsv"}]},
                {"name": "b.tsv", "sha256": sha(b"B\r\n"), "upstream": [{"url": url, "member": "Corpus/b.tsv"}]},
            ],
        }
    }
    monkeypatch.setattr(dl, "load_sources", lambda: spec)
    calls = []
    real_download = dl.download_url
    monkeypatch.setattr(dl, "download_url", lambda u, d: (calls.append(u), real_download(u, d)))
    dl.fetch_dataset("ds", tmp_path / "raw", None)
    assert calls == [url] and listing(tmp_path / "raw") == ["a.tsv", "b.tsv"]
    spec["ds"]["files"][0]["sha256"] = "0" * 64
    (tmp_path / "raw" / "a.tsv").unlink()
    with pytest.raises(FetchError, match=r"a\.tsv \(from file:.*member Corpus/a\.tsv\): sha256 mismatch"):
        dl.fetch_dataset("ds", tmp_path / "raw", None)
    assert listing(tmp_path / "raw") == ["b.tsv"]
    # an archive's errors name it by its URL, not by the temporary it was downloaded to
    spec["ds"]["files"][0].update(sha256=sha(b"A\r\n"), upstream=[{"url": url, "member": "Corpus/c.tsv"}])
    with pytest.raises(FetchError) as failed:
        dl.fetch_dataset("ds", tmp_path / "raw", None)
    assert f": could not fetch: {url}: member 'Corpus/c.tsv' not found" in str(failed.value), failed.value


_segment = st.sampled_from(["a", "b", "..", ".", "", "x.txt"])


@settings(max_examples=60, deadline=None)
@given(st.lists(_segment, min_size=1, max_size=5), st.booleans())
def test_extraction_never_writes_outside_target(tmp_path_factory, segments, absolute):
    base = tmp_path_factory.mktemp("prop")
    member = ("/" if absolute else "") + "/".join(segments)
    if member.endswith("/") or not member.strip("/."):
        return  # a directory entry, not a file member
    archive = base / "p.zip"
    make_zip(archive, {member: b"data"})
    target = base / "inner" / "target"
    try:
        dl.extract_archive(archive, target)
    except FetchError as e:
        assert "would escape" in str(e) or "not found" in str(e)
    outside = [p for p in base.rglob("*") if p.is_file() and p != archive and target not in p.parents]
    assert outside == []


def test_an_unknown_source_on_the_command_line_is_refused_naming_the_known_ones(tmp_path):
    from ansel import cli

    out = tmp_path / "raw/nope/manifest.json"
    with pytest.raises(SystemExit, match=r"^ansel download: --source: unknown dataset source 'nope'; known: .*wikiqa"):
        cli.main(["download", "--source", "nope", "--config", "{}", "--out", str(out)])
    assert not out.parent.exists()
