import platform

import pytest

from ansel.memory import keep_freed_memory


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_keeps_freed_memory_in_the_process():
    assert keep_freed_memory()
