"""Dataset readers, one module per source (each registers itself with ``ansel.data.registry.source``)."""
