import pytest
import torch

from ansel.device import resolve_device


def test_auto_is_cpu_without_cuda_and_a_named_cpu_is_kept():
    if not torch.cuda.is_available():
        assert resolve_device("auto") == torch.device("cpu")
    assert resolve_device("cpu") == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("name", ["cuda", "cuda:0"])
def test_cuda_without_a_device_names_the_key(name):
    with pytest.raises(RuntimeError, match=r"train.device: 'cuda.*no CUDA device.*auto or cpu"):
        resolve_device(name)
