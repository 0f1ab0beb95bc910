"""Models are compositions: embedding -> encoder -> composition -> scorer (DESIGN.md, principle 4).

Importing this package is cheap (no torch): the architectures (``archs/``) are found and their
hyperparameters checked without torch; ``build_model`` imports the building blocks it needs.
Loading and saving weights: ``ansel.models.io``.
"""

from ansel.models.registry import build_model, registered

__all__ = ["build_model", "registered"]
