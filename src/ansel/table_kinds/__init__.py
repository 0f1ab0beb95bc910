"""Paper tables by kind: each kind is a ``TableKind`` (``base.py``) in a module of this package,
registered with ``@table_kind("name")``; a spec's ``kind`` (default metrics) picks one.

A kind knows what its table needs: its models and runs, the files its job reads (the rule's inputs),
the job's config and how the table renders. Nothing outside this package compares a kind's name.
``spec_table`` is a table's parsed spec (``ansel.specs``) with its kind's checks passed.
This module imports nothing of the kinds' own (``ansel.targets`` asks it for a table's kind); the
kinds are found on first use, as ``ansel.models.registry`` finds architectures.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import TYPE_CHECKING

from ansel.kinds import Kinds
from ansel.specs import TableSpec, table_spec

if TYPE_CHECKING:
    from ansel.table_kinds.base import TableKind

_KINDS: Kinds[TableKind] = Kinds("table kind")
table_kind = _KINDS.register  # class decorator: @table_kind("metrics")


@functools.cache
def _discovered() -> Kinds[TableKind]:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return _KINDS


def known() -> list[str]:
    """The registered kinds' names."""
    return _discovered().known()


def spec_table(config: dict, paper: str, table_id: str) -> TableSpec:
    """A table's spec (``ansel.specs``: its datasets resolved, its rows' references checked), its
    kind known and the kind's own checks passed (``TableKind.check``)."""
    table = table_spec(config, paper, table_id)
    kind_of(table).check(config, table)
    return table


def kind_of(table: TableSpec) -> TableKind:
    """The kind of a table spec (its ``kind``, default metrics)."""
    return _discovered().of(table.kind, f"table {table.id}")
