"""Process-wide memory settings for training and timing on CPU, and for reading the tables."""

from __future__ import annotations

import ctypes


def keep_freed_memory() -> bool:
    """Keep freed memory in the process, as PyTorch's GPU caching allocator (and jemalloc or
    tcmalloc on CPU) do.

    Under glibc's defaults every buffer over 32 MB is mmap-ed and returned to the kernel when
    freed, so each training step pays page faults on fresh pages. Measured on 2 cores: local
    self-attention's unfolded windows (~300 MB at B=128, L=200) made its fwd+bwd attention step
    1.10 s against 0.31 s with this setting; a WikiQA local-SA epoch of 3 batches took 15 s against
    11.5 s, with the same numbers. glibc's defaults also spread the GGSA / global attention ratio
    of paired steps over quartiles 0.46-0.65, against 0.45-0.51 with this setting (25 pairs each).
    Returns False where mallopt is unavailable or refuses (not glibc).
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_max = -1, -4  # glibc's malloc.h
    return bool(mallopt(m_mmap_max, 0)) and bool(mallopt(m_trim_threshold, 2**31 - 1))


def arrow_uses_malloc() -> None:
    """Allocate Arrow's buffers (the parquet tables pandas reads) with the C library's malloc
    rather than the mimalloc pool pyarrow defaults to, whose per-thread segments stay resident:
    reading processed WikiQA (1.8 MB of parquet) raised the peak resident memory by ~70 MB with
    mimalloc against ~34 MB with malloc, in the same time (2 cores). Arrow picks its default pool
    when pyarrow loads, so its ARROW_DEFAULT_MEMORY_POOL variable is too late once pandas is imported."""
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
