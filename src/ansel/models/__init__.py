"""Models are compositions: embedding -> encoder -> composition -> scorer (DESIGN.md, principle 4).

Importing this package registers every architecture in ``registry``.
"""
from ansel.models import apnet, compositions, ctrn, ggsa, qa_baselines, random_baseline  # noqa: F401  (registration)
from ansel.models.registry import build_model, registered

__all__ = ["build_model", "registered"]
