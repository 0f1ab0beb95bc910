"""Importing this package registers every dataset reader."""
from ansel.data.readers import synthetic  # noqa: F401
