"""ansel: a reproducibility pipeline for neural answer selection."""

__version__ = "0.1.0"
