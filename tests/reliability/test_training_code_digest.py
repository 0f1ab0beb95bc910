"""Issue 33 item 1: the training code's digest (ansel.code_digest), a param of every train job: which modules a
run of an architecture trains with, so an edit of one retrains exactly its runs (the workflow test:
tests/workflow/test_stages.py)."""
from ansel.code_digest import ENTRIES, closure, train_code_digest
from ansel.models.registry import arch_module


def test_a_runs_code_is_the_trainer_its_architecture_and_what_they_import_not_the_metrics():
    ggsa = closure((*ENTRIES, arch_module("ggsa")))
    assert {"ansel.training.trainer", "ansel.training.losses", "ansel.models.archs.ggsa",
            "ansel.models.self_attention", "ansel.evaluation.scoring"} <= set(ggsa)  # builders' lazy imports too
    assert not {"ansel.models.archs.mvlstm", "ansel.models.mv_lstm", "ansel.evaluation.metrics",
                "ansel.evaluation.evaluate", "ansel.config", "ansel.report"} & set(ggsa)
    assert "ansel.models.archs.qa_baselines" in closure((*ENTRIES, arch_module("mtas")))  # it imports QALSTMConfig


def test_the_digest_differs_by_architecture_and_is_stable():
    assert train_code_digest(arch_module("ggsa")) == train_code_digest(arch_module("iggsa"))  # one module
    assert train_code_digest(arch_module("ggsa")) != train_code_digest(arch_module("qa_cnn"))
    assert len(train_code_digest(arch_module("qa_cnn"))) == 16
