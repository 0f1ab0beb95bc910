import platform

import pandas as pd
import pyarrow as pa
import pytest

from ansel.data.canonical import Dataset
from ansel.memory import keep_freed_memory


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_keeps_freed_memory_in_the_process():
    assert keep_freed_memory()


def test_datasets_are_read_into_mallocs_memory_not_arrows_default_pool(tmp_path):
    ds = Dataset(
        "tiny",
        pd.DataFrame({"qid": ["q1"], "text": ["a b"], "tokens": [["a", "b"]], "category": [None]}),
        pd.DataFrame({"aid": ["a1", "a2"], "text": ["c", "d e"], "tokens": [["c"], ["d", "e"]]}),
        {"train": pd.DataFrame({"qid": ["q1", "q1"], "aid": ["a1", "a2"], "label": [1, 0]})},
    )
    ds.save(tmp_path)
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    loaded = Dataset.load(tmp_path)
    assert pa.default_memory_pool().backend_name == "system"
    assert loaded.answers.tokens.map(list).tolist() == [["c"], ["d", "e"]]
    pd.testing.assert_frame_equal(loaded.splits["train"], ds.splits["train"])
