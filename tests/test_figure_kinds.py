"""The figure kinds' registry (ansel.figure_kinds): one class per kind, found by the spec's ``kind``."""

import pytest
import yaml

from ansel import figure_kinds
from ansel.config import root
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
