"""Issue 33 item 1, issue 54 item 5: the training code's digest (ansel.code_digest), a param of every train
job: the modules `ansel train` runs for a run of an architecture, so an edit of one retrains exactly its
runs (the workflow test: tests/workflow/test_stages.py)."""

import shutil

import pytest

from ansel import code_digest
from ansel.code_digest import ENTRIES, closure, train_code_digest
from ansel.models.registry import arch_module


def test_a_runs_code_is_what_the_train_command_runs_and_its_architecture():
    ggsa = closure((*ENTRIES, arch_module("ggsa")))
    assert {
        "ansel.training.trainer",
        "ansel.training.losses",
        "ansel.models.archs.ggsa",
        "ansel.models.self_attention",
        "ansel.evaluation.scoring",
    } <= set(ggsa)  # builders' lazy imports too
    # the command's own modules: its config checks, the data and vectors loading
    assert {
        "ansel.training.command",
        "ansel.config",
        "ansel.embeddings",
        "ansel.data.batches",
        "ansel.data.vocab",
        "ansel.data.canonical",
        "ansel.data.manifest",
    } <= set(ggsa)
    # not the evaluate stage's (its rule's inputs: an edit re-scores, DESIGN principle 8), nor the DAG's or the tables'
    assert not {
        "ansel.models.archs.mvlstm",
        "ansel.models.mvlstm",
        "ansel.evaluation.evaluate",
        "ansel.evaluation.metrics",
        "ansel.targets",
        "ansel.cli",
        "ansel.report.tables",
    } & set(ggsa)
    assert "ansel.models.archs.qa_baselines" in closure((*ENTRIES, arch_module("mtas")))  # it imports QALSTMConfig


@pytest.fixture
def package_copy(tmp_path, monkeypatch):
    """A copy of src/ansel that the digest reads (its caches cleared before and after)."""
    package = tmp_path / "ansel"
    shutil.copytree(code_digest.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(code_digest, "PACKAGE", package)
    yield package
    code_digest._imports.cache_clear()
    train_code_digest.cache_clear()


def test_an_edit_of_a_module_the_train_command_runs_changes_the_digest(package_copy):
    package = package_copy

    def digest() -> str:
        code_digest._imports.cache_clear()
        train_code_digest.cache_clear()
        return train_code_digest(arch_module("qa_cnn"))

    before = digest()
    for module, old, new in [
        ("embeddings.py", "import numpy as np", "import numpy as np  # the vectors doubled"),
        ("training/command.py", 'cfg["max_len_q"]', 'cfg["max_len_q"] // 2'),
        ("config.py", "import copy", "import copy  # resolved otherwise"),
    ]:
        path = package / module
        assert old in path.read_text(), module
        path.write_text(path.read_text().replace(old, new, 1))
        assert digest() != before, module
        before = digest()
    (package / "report" / "tables.py").write_text("# a table's code: no run trains with it\n")
    assert digest() == before


def test_the_digest_differs_by_architecture_and_is_stable():
    assert train_code_digest(arch_module("ggsa")) == train_code_digest(arch_module("iggsa"))  # one module
    assert train_code_digest(arch_module("ggsa")) != train_code_digest(arch_module("qa_cnn"))
    assert len(train_code_digest(arch_module("qa_cnn"))) == 16
