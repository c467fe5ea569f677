"""Tensor construction, attributes, host methods and RNG, per API.md."""
from __future__ import annotations

import numpy as np
import pytest

import shrew
from shrew.core import op as O
from shrew.backends.registry import get_backend


# -- construction and dtype inference -------------------------------------------------------
@pytest.mark.parametrize("data, dtype, shape", [
    (1.5, shrew.float32, ()), (3, shrew.int64, ()), (True, shrew.bool, ()),
    ([1.0, 2.0], shrew.float32, (2,)), ([[1, 2], [3, 4]], shrew.int64, (2, 2)),
    ([True, False], shrew.bool, (2,)), ([1, 2.5], shrew.float32, (2,)),
    ([True, 2], shrew.int64, (2,)), ([[[]]], shrew.float32, (1, 1, 0)),
])
def test_dtype_inference_from_python_data(data, dtype, shape):
    t = shrew.tensor(data)
    assert t.dtype is dtype and t.shape == shape
    np.testing.assert_array_equal(t.numpy(), np.array(data, dtype=dtype.np))


@pytest.mark.parametrize("np_dtype, dtype", [
    (np.float16, shrew.float16), (np.float32, shrew.float32), (np.float64, shrew.float64),
    (np.int32, shrew.int32), (np.int64, shrew.int64), (np.bool_, shrew.bool),
])
def test_numpy_arrays_and_scalars_keep_their_dtype(np_dtype, dtype):
    a = np.arange(6).reshape(2, 3).astype(np_dtype)
    t = shrew.tensor(a)
    assert t.dtype is dtype and t.shape == (2, 3)
    np.testing.assert_array_equal(t.numpy(), a)
    s = shrew.tensor(np_dtype(1))
    assert s.dtype is dtype and s.shape == ()


def test_explicit_dtype_and_tensor_from_tensor():
    t = shrew.tensor([1.7, -1.7], dtype=shrew.int32)
    assert t.dtype is shrew.int32 and t.tolist() == [1, -1]
    assert shrew.tensor([1, 2], dtype="float64").dtype is shrew.float64
    assert shrew.tensor([1, 2], dtype=np.float16).dtype is shrew.float16
    assert shrew.tensor([1, 2], dtype=float).dtype is shrew.float64  # as torch: float is double
    src = shrew.tensor([1.0, 2.0], requires_grad=True)
    copy = shrew.Tensor(src)
    assert copy.dtype is shrew.float32 and copy.is_leaf and not copy.requires_grad
    assert shrew.tensor(src, dtype=shrew.float64).dtype is shrew.float64
    assert shrew.tensor is not None and isinstance(shrew.tensor([1]), shrew.Tensor)


def test_tensor_copies_its_data():
    a = np.zeros(3)
    t = shrew.tensor(a)
    a[0] = 5
    assert t.tolist() == [0.0, 0.0, 0.0]


def test_from_numpy_shares_memory_on_cpu():
    a = np.zeros((2, 3), dtype=np.float32)
    t = shrew.from_numpy(a)
    assert t.dtype is shrew.float32 and t.shape == (2, 3) and t.device == "cpu"
    a[1, 2] = 7.0
    assert t.numpy()[1, 2] == 7.0
    assert np.shares_memory(np.asarray(t), a)


def test_from_numpy_on_another_device_copies(other_device):
    a = np.arange(3, dtype=np.int32)
    t = shrew.from_numpy(a, device=other_device)
    assert t.device == other_device and t.dtype is shrew.int32
    a[0] = 9
    assert t.tolist() == [0, 1, 2]


def test_creation_functions():
    z = shrew.zeros(2, 3)
    assert z.shape == (2, 3) and z.dtype is shrew.float32 and not z.numpy().any()
    assert shrew.zeros((2, 3)).shape == (2, 3) and shrew.zeros([4]).shape == (4,)
    assert shrew.zeros().shape == ()
    o = shrew.ones(3, dtype=shrew.int32)
    assert o.dtype is shrew.int32 and o.tolist() == [1, 1, 1]
    f = shrew.full((2, 2), 2.5)
    assert f.dtype is shrew.float32 and f.tolist() == [[2.5, 2.5], [2.5, 2.5]]
    assert shrew.full((2,), 3).dtype is shrew.int64
    assert shrew.full((2,), True).dtype is shrew.bool
    assert shrew.full(3, 1.0, dtype=shrew.float64).dtype is shrew.float64
    a = shrew.arange(5)
    assert a.dtype is shrew.int64 and a.tolist() == [0, 1, 2, 3, 4]
    assert shrew.arange(3, dtype=shrew.float32).tolist() == [0.0, 1.0, 2.0]
    assert shrew.arange(0).shape == (0,)
    e = shrew.eye(3)
    assert e.dtype is shrew.float32
    np.testing.assert_array_equal(e.numpy(), np.eye(3))
    np.testing.assert_array_equal(shrew.eye(2, 3).numpy(), np.eye(2, 3))
    w = shrew.zeros(2, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    assert shrew.zeros_like(o).dtype is shrew.int32 and shrew.ones_like(z).shape == (2, 3)
    s = shrew.stack([shrew.tensor([1, 2]), shrew.tensor([3, 4])], dim=-1)
    assert s.tolist() == [[1, 3], [2, 4]]


def test_rand_and_randn():
    shrew.manual_seed(0)
    r = shrew.rand(1000)
    assert r.dtype is shrew.float32 and r.shape == (1000,)
    v = r.numpy()
    assert v.min() >= 0 and v.max() < 1 and abs(v.mean() - 0.5) < 0.05
    n = shrew.randn(20000, dtype=shrew.float64).numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
    assert shrew.randn(2, 3, requires_grad=True).requires_grad


def test_manual_seed_reproducibility():
    shrew.manual_seed(42)
    a, b = shrew.rand(5).numpy(), shrew.randn(2, 2).numpy()
    shrew.manual_seed(42)
    np.testing.assert_array_equal(shrew.rand(5).numpy(), a)
    np.testing.assert_array_equal(shrew.randn(2, 2).numpy(), b)
    shrew.manual_seed(43)
    assert not np.array_equal(shrew.rand(5).numpy(), a)


def test_manual_seed_seeds_every_device(other_device):
    shrew.manual_seed(7)
    a = shrew.rand(4).numpy()
    b = shrew.rand(4, device=other_device).numpy()
    shrew.manual_seed(7)
    np.testing.assert_array_equal(shrew.rand(4, device=other_device).numpy(), b)
    np.testing.assert_array_equal(shrew.rand(4).numpy(), a)


def test_rng_state_save_and_restore():
    backend = get_backend("cpu")
    shrew.manual_seed(1)
    shrew.rand(3)
    state = backend.get_rng_state()
    first = shrew.randn(4).numpy()
    second = shrew.rand(2).numpy()
    backend.set_rng_state(state)
    np.testing.assert_array_equal(shrew.randn(4).numpy(), first)
    np.testing.assert_array_equal(shrew.rand(2).numpy(), second)


# -- attributes -------------------------------------------------------------------------------
def test_attributes():
    x = shrew.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    assert x.shape == (1, 3) and all(type(s) is int for s in x.shape)
    assert isinstance(x.shape, tuple)
    assert x.ndim == 2 and x.dtype is shrew.float32 and x.device == "cpu"
    assert isinstance(x.id, int)
    assert x.op is None and x.is_leaf and x.requires_grad and x.grad is None
    y = x * x
    assert isinstance(y.op, O.Binary) and y.op.lhs is x and y.op.rhs is x
    assert not y.is_leaf and y.requires_grad
    ids = {shrew.zeros(1).id for _ in range(100)} | {x.id, y.id}
    assert len(ids) == 102
    assert x.numel() == 3 and x.size() == (1, 3) and x.size(-1) == 3 and x.dim() == 2
    assert len(x) == 1


# -- host methods --------------------------------------------------------------------------
def test_item_tolist_numpy():
    assert shrew.tensor(2.5).item() == 2.5 and isinstance(shrew.tensor(2.5).item(), float)
    assert shrew.tensor([[7]]).item() == 7 and isinstance(shrew.tensor([7]).item(), int)
    assert shrew.tensor(True).item() is True
    assert shrew.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert shrew.tensor(3).tolist() == 3
    t = shrew.tensor([1.0, 2.0])
    a = t.numpy()
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    a[0] = 100.0                               # the tensor's memory, as PyTorch's
    assert t.tolist() == [100.0, 2.0]
    np.testing.assert_array_equal(np.asarray(t), [100.0, 2.0])
    assert float(shrew.tensor([2.0])) == 2.0 and int(shrew.tensor(3)) == 3
    assert "tensor(" in repr(t) and "requires_grad" in repr(shrew.ones(1, requires_grad=True))
    big = shrew.zeros(1001)  # past torch's threshold (1000 elements): summarised
    assert "..." in repr(big) and "shape=(1001,)" in repr(big)


def test_to_detach_contiguous(other_device):
    x = shrew.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert x.to("cpu") is x and x.to(dtype=shrew.float32) is x
    d = x.to(shrew.float64)
    assert d.dtype is shrew.float64 and isinstance(d.op, O.ToDtype)
    both = x.to(other_device, shrew.float64)
    assert both.device == other_device and both.dtype is shrew.float64
    np.testing.assert_array_equal(both.detach().numpy(), x.detach().numpy())
    back = both.to("cpu")
    assert back.device == "cpu" and back.requires_grad
    assert x.to(device=other_device).device == other_device
    i = x.to(shrew.int64)
    assert i.dtype is shrew.int64 and not i.requires_grad
    det = x.detach()
    assert det.is_leaf and not det.requires_grad
    np.testing.assert_array_equal(det.numpy(), x.detach().numpy())
    t = x.transpose(0, 1)
    c = t.contiguous()
    assert isinstance(c.op, O.Contiguous)
    assert c.detach().numpy().flags.c_contiguous and not t.detach().numpy().flags.c_contiguous
    np.testing.assert_array_equal(c.detach().numpy(), [[1.0, 3.0], [2.0, 4.0]])
    assert x.cpu() is x and x.float() is x and x.long().dtype is shrew.int64


def test_to_dtype_float_to_int_truncates_toward_zero():
    t = shrew.tensor([-2.7, -0.5, 0.5, 2.7])
    assert t.to_dtype(shrew.int64).tolist() == [-2, 0, 0, 2]
    assert t.to_dtype(shrew.bool).tolist() == [True, True, True, True]


def test_requires_grad_underscore():
    x = shrew.zeros(2)
    assert x.requires_grad_() is x and x.requires_grad
    y = x * 2.0
    with pytest.raises(shrew.ShrewError, match="leaf"):
        y.requires_grad_()
    x.requires_grad_(False)
    assert not x.requires_grad
