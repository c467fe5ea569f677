"""Gaps found by running public PyTorch programs on shrew with only their imports changed
(docs/porting.md): each is checked against PyTorch itself."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import shrew  # noqa: E402

X = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float64)


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor",
                                  "HalfTensor", "ByteTensor", "BoolTensor"])
def test_type_with_a_legacy_tensor_type(name: str) -> None:
    # PyTorch-GAN's `imgs.type(torch.FloatTensor)`: the class, or its name, as the dtype
    t = torch.tensor(X * 3)
    s = shrew.tensor(X * 3)
    for want, got in ((t.type(getattr(torch, name)), s.type(getattr(shrew, name))),
                      (t.type(f"torch.{name}", non_blocking=True),
                       s.type(f"torch.{name}", non_blocking=True))):
        assert got.dtype.name == str(want.dtype).split(".")[1]
        assert got.device.type == "cpu"
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert got.type() == want.type()


def test_type_with_a_legacy_type_moves_to_the_cpu() -> None:
    # a CPU legacy type names the CPU as well as the dtype, as in PyTorch
    s = shrew.tensor(X, device="opencl:0")
    out = s.type(shrew.FloatTensor)
    assert out.device.type == "cpu" and out.dtype is shrew.float32
    assert s.type(shrew.float32).device == s.device  # a dtype keeps the device


@pytest.mark.parametrize("data", [X, X[0], np.array(2.5), np.arange(4, dtype=np.int32),
                                  np.array([1.7, -2.5])])
@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor"])
def test_legacy_constructor_from_a_numpy_array(name: str, data: np.ndarray) -> None:
    # PyTorch-GAN's `Tensor(np.random.normal(0, 1, shape))`
    want = getattr(torch, name)(data)
    got = getattr(shrew, name)(data)
    assert got.dtype.name == str(want.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("reps", [(2, 1, 1, 1), (1, 1, 1), (1, 2, 1), (2, 1, 2), (3, 1, 1)])
def test_repeat_owns_its_memory(reps: tuple[int, ...]) -> None:
    # fast_neural_style's `style.repeat(batch, 1, 1, 1)` then an in-place div_ on it
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 4) if len(reps) == 3 else \
        np.arange(12, dtype=np.float32).reshape(3, 1, 4)
    t, s = torch.tensor(x), shrew.tensor(x)
    yt, ys = t.repeat(*reps), s.repeat(*reps)
    assert ys.is_contiguous() and ys.stride() == yt.stride()
    yt.div_(2.0)
    ys.div_(2.0)
    np.testing.assert_array_equal(ys.numpy(), yt.numpy())
    np.testing.assert_array_equal(s.numpy(), x)  # x itself unchanged

