"""The table kinds' registry (ansel.table_kinds): one class per kind, found by the spec's ``kind``."""

import pytest
import yaml

from ansel.config import root
from ansel.settings import ConfigError
from ansel.specs import TableSpec
from ansel.table_kinds import kind_of, known, table_kind
from ansel.table_kinds.base import TableKind
from ansel.table_kinds.metrics import Metrics


def test_every_kind_the_spec_schema_allows_is_registered_and_no_other():
    schema = yaml.safe_load((root() / "workflow/schemas/paper.schema.yaml").read_text())
    allowed = schema["$defs"]["table"]["properties"]["kind"]["enum"]
    assert known() == sorted(allowed)
    assert all(kind_of(TableSpec("p", "t", kind=k)).name == k for k in allowed)


def test_a_spec_without_kind_is_a_metrics_table_and_an_unknown_kind_is_named():
    assert isinstance(kind_of(TableSpec("p", "t")), Metrics)
    with pytest.raises(ConfigError, match="table t: unknown kind 'pie'; known: dataset_stats, metrics, "):
        kind_of(TableSpec("p", "t", kind="pie"))


def test_a_kind_registered_twice_is_refused():
    with pytest.raises(ValueError, match="table kind 'metrics' registered twice"):
        table_kind("metrics")(Metrics)


def test_a_kind_missing_part_of_the_interface_cannot_register():
    class Partial(TableKind):  # no runs, files or render
        def models(self, table):
            return []

    with pytest.raises(TypeError, match="abstract"):
        table_kind("partial_kind_of_a_test")(Partial)
