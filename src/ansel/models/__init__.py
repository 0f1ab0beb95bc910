"""Models are compositions: embedding -> encoder -> composition -> scorer (DESIGN.md, principle 4).

Importing this package registers every architecture in ``registry``.
"""
from ansel.models import qa_baselines  # noqa: F401  (registers qa_lstm, qa_cnn)
from ansel.models.registry import build_model, registered

__all__ = ["build_model", "registered"]
