"""The figure kinds' registry (ansel.figure_kinds): one class per kind, found by the spec's ``kind``."""

import pytest
import yaml

from ansel import figure_kinds
from ansel import paper_targets as P
from ansel.config import load, root
from ansel.settings import ConfigError


def test_every_kind_the_spec_schema_allows_is_registered_and_no_other():
    schema = yaml.safe_load((root() / "workflow/schemas/paper.schema.yaml").read_text())
    allowed = schema["$defs"]["figure"]["properties"]["kind"]["enum"]
    assert figure_kinds.known() == sorted(allowed)
    assert all(figure_kinds.kind_of({"id": "f", "kind": k}).name == k for k in allowed)


def test_an_unknown_kind_is_named_and_a_kind_registered_twice_is_refused():
    with pytest.raises(ConfigError, match="figure f: unknown kind 'pie'; known: accuracy_bars, "):
        figure_kinds.kind_of({"id": "f", "kind": "pie"})
    with pytest.raises(ValueError, match="figure kind 'sweep' registered twice"):
        figure_kinds.figure_kind("sweep")(figure_kinds.Sweep)


def test_a_figures_metric_the_runs_do_not_report_is_refused_while_the_dag_is_built(monkeypatch):
    """As a table column's: else the figure job fails only after every run it reads trained."""
    curves = {
        "id": "curves",
        "kind": "learning_curves",
        "dataset": "synthetic_en",
        "metric": "MAPX",
        "models": ["qa_lstm"],
    }
    monkeypatch.setattr(P, "load_paper", lambda paper: {"figures": [curves]})
    with pytest.raises(
        ConfigError,
        match=r"\S+/smoke.yaml: figure curves: metric: 'MAPX' is not a metric the runs report \(known: P@1, MAP,",
    ):
        P.spec_figure(load(), "smoke", "curves")
    curves["metric"] = "MAP"
    assert P.spec_figure(load(), "smoke", "curves")["metric"] == "MAP"
