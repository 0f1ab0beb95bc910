"""Models are compositions: embedding -> encoder -> composition -> scorer (DESIGN.md, principle 4).

Importing this package is cheap (no torch): ``build_model`` imports the model modules, which
register their builders in ``registry``, on first use.
"""
from ansel.models.registry import build_model, registered

__all__ = ["build_model", "registered"]
