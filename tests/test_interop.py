"""Interop with numpy: __array__, from_numpy, Tensor(array), and DLPack both ways; repr."""
from __future__ import annotations

import numpy as np
import pytest

import shrew
from shrew.ops.creation import from_dlpack
from support import device_or_fail

DTYPES = [np.float16, np.float32, np.float64, np.int32, np.int64, np.bool_]


def _sample(dtype, shape=(2, 3)):
    return (np.arange(np.prod(shape)).reshape(shape) % 3).astype(dtype)


# -- numpy's array protocol and from_numpy ---------------------------------------------------
def test_asarray_of_a_cpu_tensor_is_zero_copy():
    t = shrew.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.shape == (2, 2)
    assert np.shares_memory(a, np.asarray(t))
    a[0, 0] = 9.0
    assert t.tolist()[0][0] == 9.0  # the same memory: writes are visible


def test_np_array_and_dtype_changes_copy():
    t = shrew.tensor([1.0, 2.0])
    copied = np.array(t)
    assert not np.shares_memory(copied, np.asarray(t))
    np.testing.assert_array_equal(copied, [1.0, 2.0])
    wide = np.asarray(t, dtype=np.float64)
    assert wide.dtype == np.float64 and not np.shares_memory(wide, np.asarray(t))
    assert np.shares_memory(np.asarray(t, dtype=np.float32, copy=False), np.asarray(t))
    with pytest.raises(ValueError):
        np.asarray(t, dtype=np.float64, copy=False)


def test_from_numpy_shares_and_tensor_copies():
    a = np.zeros((2, 2), dtype=np.float64)
    shared, copied = shrew.from_numpy(a), shrew.Tensor(a)
    a[1, 1] = 5.0
    assert shared.tolist() == [[0.0, 0.0], [0.0, 5.0]]
    assert copied.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert np.shares_memory(np.asarray(shared), a) and not np.shares_memory(np.asarray(copied), a)


def test_asarray_of_a_device_tensor_is_refused():
    t = shrew.ones(2, device=device_or_fail("opencl"))
    with pytest.raises(shrew.DeviceError, match="numpy.asarray.*opencl.*numpy()"):
        np.asarray(t)


# -- DLPack with numpy ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_dlpack_round_trip_with_numpy_shares_memory(dtype):
    a = _sample(dtype)
    t = from_dlpack(a)
    assert t.dtype.np == a.dtype and t.shape == a.shape and t.device == "cpu"
    assert t.__dlpack_device__() == (1, 0)
    back = np.from_dlpack(t)
    assert back.dtype == a.dtype and np.shares_memory(back, a)
    np.testing.assert_array_equal(back, a)
    a[0, 0] = 1
    assert t.numpy()[0, 0] == 1


@pytest.mark.parametrize("make", [
    lambda: shrew.tensor(2.5),                                            # 0-d
    lambda: shrew.zeros(0, 3),                                            # empty
    lambda: shrew.arange(12, dtype=shrew.float32).reshape(3, 4).transpose(0, 1),  # strided view
    lambda: shrew.arange(12, dtype=shrew.float64).reshape(3, 4)[1:, 1:3],  # offset view
    lambda: shrew.tensor([1.0, 2.0, 3.0]).expand(2, 3),                   # read-only, stride 0
])
def test_dlpack_exports_views_scalars_and_empty_tensors(make):
    t = make()
    out = np.from_dlpack(t)
    assert out.shape == t.shape and out.dtype == t.dtype.np
    np.testing.assert_array_equal(out, t.numpy())
    assert np.shares_memory(out, np.asarray(t)) or out.size == 0


def test_dlpack_of_a_tensor_that_requires_grad_and_of_a_shrew_tensor():
    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    np.testing.assert_array_equal(np.from_dlpack(y), [3.0, 6.0])
    z = from_dlpack(y)  # a leaf sharing y's memory, outside the graph
    assert z.is_leaf and not z.requires_grad and z.id != y.id
    assert np.shares_memory(np.asarray(z), y.detach().numpy())


def test_dlpack_errors():
    with pytest.raises(shrew.ShrewError, match="from_dlpack: expected an object with __dlpack__"):
        from_dlpack([1.0, 2.0])
    with pytest.raises(shrew.DTypeError, match="from_dlpack.*uint16"):
        from_dlpack(np.zeros(3, dtype=np.uint16))
    assert from_dlpack(np.array([1j, 2], dtype=np.complex64)).tolist() == [1j, 2]


class _OnDevice:
    """An array that claims to live on another DLPack device type."""

    def __init__(self, kind):
        self.kind = kind

    def __dlpack__(self, **kwargs):
        raise AssertionError("from_dlpack must check the device before exporting")

    def __dlpack_device__(self):
        return self.kind, 0


def test_dlpack_from_a_device_shrew_cannot_import_is_a_device_error():
    with pytest.raises(shrew.DeviceError, match="from_dlpack.*device type 4"):
        from_dlpack(_OnDevice(4))  # kDLOpenCL


def test_dlpack_from_an_opencl_tensor_is_a_device_error():
    t = shrew.ones(2, device=device_or_fail("opencl"))
    with pytest.raises(shrew.DeviceError, match="__dlpack__.*opencl.*does not support DLPack"):
        t.__dlpack__()
    with pytest.raises(shrew.DeviceError, match="__dlpack_device__.*opencl"):
        t.__dlpack_device__()
    with pytest.raises(shrew.DeviceError):
        np.from_dlpack(t)
    np.testing.assert_array_equal(np.from_dlpack(t.to("cpu")), [1.0, 1.0])


# -- repr ------------------------------------------------------------------------------------
def test_repr_reads_like_pytorch():
    assert repr(shrew.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
    assert repr(shrew.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(shrew.tensor(True)) == "tensor(True)"
    assert repr(shrew.tensor([1.0], dtype=shrew.float16)) == "tensor([1.], dtype=shrew.float16)"
    assert repr(shrew.tensor([1.0], requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert repr(shrew.zeros(0, 3)) == "tensor([], shape=(0, 3))"


def test_repr_names_the_op_and_keeps_it_after_backward():
    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    assert repr(y) == "tensor([1., 4.], grad_fn=<MulBackward0>)"
    s = y.exp().sum()
    assert repr(s).endswith("grad_fn=<SumBackward0>)")
    assert "grad_fn=<ExpBackward0>" in repr(y.exp())
    assert "grad_fn=<MmBackward0>" in repr(x.reshape(1, 2) @ x.reshape(2, 1))
    s.backward()
    assert repr(s).endswith("grad_fn=<SumBackward0>)")  # released: the name stays
    with shrew.no_grad():
        assert repr(x * x) == "tensor([1., 4.])"


def test_repr_summarises_large_tensors_with_their_shape():
    r = repr(shrew.arange(1100, dtype=shrew.float64).reshape(11, 100))  # past 1000 elements
    assert "..." in r and "shape=(11, 100)" in r and "dtype=shrew.float64" in r
    assert len(r) < 1000
    assert r.startswith("tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.7000e+01, "
                        "9.8000e+01,\n         9.9000e+01],")  # torch's (sci: max/min > 1000)


def test_repr_of_a_device_tensor_names_the_device():
    device = device_or_fail("opencl")
    x = shrew.tensor([1.0, 2.0], device=device, requires_grad=True)
    assert repr(x * 2.0) == f"tensor([2., 4.], device='{device}', grad_fn=<MulBackward0>)"


def test_dlpack_with_cupy_on_a_gpu():
    """Where a CUDA device exists: CuPy arrays cross both ways without a copy."""
    if not any(d.startswith("cuda") for d in shrew.devices()):
        pytest.skip("no usable CUDA GPU on this machine")
    cupy = pytest.importorskip("cupy")
    a = cupy.arange(6, dtype=cupy.float32).reshape(2, 3)
    t = from_dlpack(a)
    assert t.device == "cuda:0" and t.__dlpack_device__() == (2, 0)
    a[0, 0] = 7
    assert t.numpy()[0, 0] == 7
    back = cupy.from_dlpack(t * 2.0)
    assert back.data.ptr != a.data.ptr and float(back[0, 0]) == 14.0
    assert cupy.from_dlpack(t).data.ptr == a.data.ptr
