"""The hand-edited YAML formats (sources.yaml, reports/device/records.yaml, reports/headlines.yaml)
checked against their JSON schemas where they are read: a wrong key or type is refused naming the
file and the key path; the committed files pass."""

import pytest

from ansel.config import ConfigError, root
from ansel.data import download as dl
from ansel.records.declared import RECORDS, declared_records
from ansel.records.front_page import HEADLINES, load_context

SOURCE = """wikiqa:
  mirror_dir: wikiqa
  files:
    - name: WikiQA-train.tsv
      sha256: 295757943bc4df27f09763fc73b9f63063b13a577718b17805cbc9bb436f9dbe
      mirror: {path: WikiQA-train.tsv.gz}
      upstream:
        - {url: "https://example.org/WikiQACorpus.zip", member: WikiQACorpus/WikiQA-train.tsv}
"""
RECORD = """r:
  preset: smoke
  measure: {datasets: [wikiqa], batches: 3}
  bench: [{name: b, script: benchmarks/b.py, args: [--device, "{device}"]}]
"""
HEADLINE = """records: {cpu-x: budget}
headlines:
  - paper: P
    published: {spec: p, table: t, row: A, dataset: d, split: test, metric: MAP}
    claim: A > B
    sources:
      - {record: cpu-x, table: t, row: A, column: d test MAP, context: BM25}
"""


@pytest.fixture
def sources_file(tmp_path, monkeypatch):
    """Where load_sources reads, a file of the test's; the cached read of the real one dropped around it."""
    path = tmp_path / "sources.yaml"
    monkeypatch.setattr(dl, "SOURCES_FILE", path)
    dl.load_sources.cache_clear()
    yield path
    dl.load_sources.cache_clear()


def test_the_committed_files_pass():
    dl.load_sources.cache_clear()
    assert "wikiqa" in dl.load_sources()
    assert declared_records()
    context, headlines = load_context(root())
    assert context.scales and headlines


def test_the_example_files_here_pass(sources_file, tmp_path):
    sources_file.write_text(SOURCE)
    assert dl.load_sources()["wikiqa"]["mirror_dir"] == "wikiqa"
    (tmp_path / "records.yaml").write_text(RECORD)
    assert set(declared_records(tmp_path / "records.yaml")) == {"r"}


@pytest.mark.parametrize(
    "old, new, message",
    [
        (
            "      sha256: 2957",
            "      sha265: 2957",
            r"wikiqa.files.0: unknown key 'sha265' \(typo of 'sha256'\?\); allowed: name, sha256",
        ),
        (
            '{url: "https://example.org/WikiQACorpus.zip", member',
            "{pip: wikiqa==1.0, member",
            r"wikiqa.files.0.upstream.0: 'sha256' is a required property",
        ),
        ("  mirror_dir: wikiqa", "  mirror_dir: wikiqa\n  kind: vector", r"wikiqa.kind: 'vectors' was expected"),
        (
            "mirror: {path: WikiQA-train.tsv.gz}",
            "mirror: {path: WikiQA-train.tsv.gz}\n      extract: yes please",
            r"wikiqa.files.0.extract: 'yes please' is not of type 'boolean'",
        ),
        (
            '{url: "https://example.org',
            '{url: "ftp://example.org',
            r"wikiqa.files.0.upstream.0.url: 'ftp://example.org/",
        ),
        ("sha256: 2957579", "sha256: z2957579", r"wikiqa.files.0.sha256: 'z2957579[0-9a-f]+' does not match"),
        ("  files:", "  files: []\n  x:", r"wikiqa: unknown key 'x'"),
        (SOURCE[SOURCE.index("      mirror") :], "", r"wikiqa.files.0: 'upstream' is a required property"),
    ],
)
def test_sources_yaml_refused_naming_file_and_key_path(sources_file, old, new, message):
    assert old in SOURCE
    sources_file.write_text(SOURCE.replace(old, new, 1))
    with pytest.raises(ConfigError, match=rf"^{sources_file}: {message}"):
        dl.load_sources()


def test_sources_yaml_a_file_without_a_checksum_needs_a_pinned_source(sources_file):
    unchecked = "\n".join(line for line in SOURCE.splitlines() if "sha256:" not in line) + "\n"
    sources_file.write_text(unchecked)
    with pytest.raises(ConfigError, match=rf"^{sources_file}: wikiqa.files.0: 'sha256' is a required property"):
        dl.load_sources()
    dl.load_sources.cache_clear()
    sources_file.write_text(unchecked.replace("  mirror_dir: wikiqa", "  mirror_dir: wikiqa\n  pin: first_download"))
    assert dl.load_sources()["wikiqa"]["pin"] == "first_download"


@pytest.mark.parametrize(
    "old, new, message",
    [
        (
            "  preset: smoke",
            "  preset: smoke\n  seeds: [1]",
            r"r: unknown key 'seeds' \(typo of 'speed'\?\); allowed: about, preset",
        ),
        ("batches: 3", "batches: '3'", r"r.measure.batches: '3' is not of type 'integer'"),
        ("datasets: [wikiqa]", "datasets: wikiqa", r"r.measure.datasets: 'wikiqa' is not of type 'array'"),
        ('args: [--device, "{device}"]', "args: [--repeats, 10]", r"r.bench.0.args.1: 10 is not of type 'string'"),
        ("{name: b, script", "{nam: b, script", r"r.bench.0: unknown key 'nam'"),
        ("r:\n", "../r:\n", r"'../r' does not match"),
    ],
)
def test_records_yaml_refused_naming_file_and_key_path(tmp_path, old, new, message):
    assert old in RECORD
    path = tmp_path / "records.yaml"
    path.write_text(RECORD.replace(old, new, 1))
    with pytest.raises(ConfigError, match=rf"^{path}: {message}"):
        declared_records(path)
    assert RECORDS == "reports/device/records.yaml"


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("cpu-x: budget", "cpu-x: cut", r"records.cpu-x: 'cut' is not one of \['paper', 'budget'\]"),
        (
            "    claim: A > B",
            "    claims: A > B",
            r"headlines.0: unknown key 'claims' \(typo of 'claim'\?\); allowed: paper, published",
        ),
        ("metric: MAP}", "metric: 1}", r"headlines.0.published.metric: 1 is not of type 'string'"),
        ("split: test, ", "", r"headlines.0.published: 'split' is a required property"),
        ("table: t, row: A, column", "row: A, column", r"headlines.0.sources.0: 'model' is a required property"),
        (
            "context: BM25}",
            "context: {label: BM25, model: bm25}}",
            r"headlines.0.sources.0.context: \{'label': 'BM25', 'model': 'bm25'\} is not of type 'string'",
        ),
        ("    claim: A > B", "    claim: A > B\n    protocol: best", r"headlines.0.protocol: 'best' is not one of"),
    ],
)
def test_headlines_yaml_refused_naming_file_and_key_path(tmp_path, old, new, message):
    assert old in HEADLINE
    path = tmp_path / HEADLINES
    path.parent.mkdir()
    path.write_text(HEADLINE.replace(old, new, 1))
    with pytest.raises(ConfigError, match=rf"^{path}: {message}"):
        load_context(tmp_path)


@pytest.mark.parametrize(
    "record, message",
    [
        (
            "cpu-y",
            r"records.cpu-y: no record folder \S*reports/cpu-y \(typo of 'cpu-x'\?\); "
            r"the record folders: cpu-x, device/gpu-x$",
        ),
        ("device/gpu-y", r"records.device/gpu-y: no record folder .*\(typo of 'device/gpu-x'\?\)"),
        ("../cpu-x", r"records: '../cpu-x' does not match"),
    ],
)
def test_a_headlines_record_that_names_no_record_folder_is_refused(tmp_path, record, message):
    """A ``records`` key is a folder under reports/: a typo would declare a record that is not there."""
    for folder in ["cpu-x", "device/gpu-x"]:
        (tmp_path / "reports" / folder).mkdir(parents=True)
    path = tmp_path / HEADLINES
    path.write_text(HEADLINE.replace("cpu-x: budget", f"{record}: budget", 1))
    with pytest.raises(ConfigError, match=rf"^{path}: {message}"):
        load_context(tmp_path)
