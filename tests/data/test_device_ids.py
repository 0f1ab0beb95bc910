"""Id matrices resident on the device: a batch cut there is the batch ``trim_padding`` cuts from the host
copy, value for value and width for width, with the data uploaded once per device."""

import numpy as np
import pandas as pd
import torch

from ansel.data.batches import RunData, trim_padding
from ansel.data.device_ids import DeviceIds, to_device
from ansel.data.vocab import PAD


def _ids(rng, n=40, width=12) -> np.ndarray:
    lengths = rng.integers(0, width + 1, n)  # some rows all padding, some full
    ids = rng.integers(2, 50, (n, width))
    ids[np.arange(width) >= lengths[:, None]] = PAD
    return ids


def test_a_batch_is_trim_paddings_batch_of_the_host_copy():
    rng = np.random.default_rng(0)
    ids = _ids(rng)
    on_device = DeviceIds(ids, torch.device("cpu"))
    for size in (1, 3, 16, 40):
        for _ in range(20):
            rows = rng.integers(0, len(ids), size)
            expected = trim_padding(torch.from_numpy(ids[rows]))
            got = on_device.rows(rows)
            assert got.shape == expected.shape and torch.equal(got, expected)
    empty = np.flatnonzero((ids != PAD).sum(1) == 0)[:2]  # rows of padding only: one column, as trim_padding
    assert on_device.rows(empty).shape == (len(empty), 1)


def test_to_device_keeps_values_and_dtype():
    a = np.arange(6, dtype=np.int64)[::2]  # not contiguous
    t = to_device(a, torch.device("cpu"))
    assert t.dtype == torch.int64 and t.tolist() == [0, 2, 4]


def test_run_data_uploads_once_per_device():
    rng = np.random.default_rng(1)
    data = RunData(dataset=None, q_ids=_ids(rng), a_ids=_ids(rng), qids=pd.Index([]), aids=pd.Index([]), vocab=None)
    first = data.on_device(torch.device("cpu"))
    assert data.on_device(torch.device("cpu")) is first
    assert first[0].ids.data_ptr() == torch.from_numpy(data.q_ids).data_ptr()  # on the CPU: no copy at all
