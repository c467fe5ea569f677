"""Bad input raises the right ShrewError subclass, naming the op and the culprits, before any
kernel runs; NaN and inf are values, not errors."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import shrew
from shrew import (ArgumentError, DeviceError, DTypeError, ShapeError, ShrewError,
                   ShrewIndexError, ShrewTypeError, ShrewValueError, UnsupportedError)
from shrew.backends.registry import get_backend

ones, zeros, T = shrew.ones, shrew.zeros, shrew.tensor


@pytest.fixture
def no_kernels(monkeypatch):
    """Make the named CPU primitives fail the test if they are ever launched."""
    backend = get_backend("cpu")

    def block(*names):
        for name in names:
            def launched(*args, _name=name, **kwargs):
                raise AssertionError(f"kernel {_name} ran before the input was validated")
            monkeypatch.setattr(backend, name, launched)

    return block


def raises(exc, *fragments):
    """pytest.raises for `exc` whose message contains every fragment (literally)."""
    return pytest.raises(exc, match="(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments))


def test_error_hierarchy():
    """Each kind is a ShrewError and the builtin class PyTorch raises for its mistakes
    (tests/reliability/test_error_classes.py runs every case in torch too)."""
    for cls in (ShapeError, DeviceError, DTypeError, ArgumentError):
        assert issubclass(cls, ShrewError) and issubclass(cls, RuntimeError)
    assert issubclass(ShrewIndexError, IndexError) and issubclass(ShrewTypeError, TypeError)
    assert issubclass(ShrewValueError, ValueError)
    assert issubclass(UnsupportedError, NotImplementedError)
    assert not issubclass(ShrewError, ValueError)  # a shape error is no ValueError in torch


# -- shapes ----------------------------------------------------------------------------------
@pytest.mark.parametrize("op, name", [(lambda a, b: a + b, "add"), (lambda a, b: a - b, "sub"),
                                      (lambda a, b: a * b, "mul"), (lambda a, b: a / b, "div"),
                                      (lambda a, b: a < b, "lt"), (lambda a, b: a == b, "eq")])
def test_shapes_that_do_not_broadcast(op, name, no_kernels):
    no_kernels("binary", "compare")
    with raises(ShapeError, name, "[2, 3]", "[4]"):
        op(ones(2, 3), ones(4))
    with raises(ShapeError, "[2, 1, 3]", "[5, 2]"):
        op(ones(2, 1, 3), ones(5, 2))


def test_where_shapes_that_do_not_broadcast(no_kernels):
    no_kernels("where")
    with raises(ShapeError, "where", "[3]", "[2]"):
        shrew.where(T([True, False, True]), ones(2), ones(3))


def test_matmul_inner_mismatch(no_kernels):
    no_kernels("matmul")
    with raises(ShapeError, "matmul", "[2, 3]", "[4, 5]"):
        ones(2, 3) @ ones(4, 5)
    with raises(ShapeError, "matmul", "[3]", "[2]"):
        ones(3) @ ones(2)
    with raises(ShapeError, "matmul", "[2, 2, 3]", "[3, 3, 1]"):
        ones(2, 2, 3) @ ones(3, 3, 1)
    with raises(ShapeError, "matmul", "[]"):
        ones(()) @ ones(2)


def test_conv_channel_mismatch(no_kernels):
    no_kernels("im2col", "matmul")
    with raises(ShapeError, "conv2d", "3 channels", "[4, 2, 3, 3]"):
        shrew.conv2d(ones(1, 3, 5, 5), ones(4, 2, 3, 3))
    with raises(ShapeError, "conv1d", "3 channels", "[4, 2, 3]"):
        shrew.conv1d(ones(1, 3, 5), ones(4, 2, 3))
    with raises(ShapeError, "conv2d", "weight", "[4, 3, 3]"):
        shrew.conv2d(ones(1, 3, 5, 5), ones(4, 3, 3))
    with raises(ShapeError, "conv2d", "[3, 5, 5]"):
        shrew.conv2d(ones(3, 5, 5), ones(4, 3, 3, 3))


def test_kernel_larger_than_padded_input(no_kernels):
    no_kernels("im2col", "max_pool2d", "avg_pool2d")
    with raises(ShapeError, "conv2d", "kernel size 4", "padded input size 3"):
        shrew.conv2d(ones(1, 1, 3, 3), ones(1, 1, 4, 4))
    with raises(ShapeError, "conv2d", "kernel size 5", "padded input size 4"):
        shrew.conv2d(ones(1, 1, 2, 2), ones(1, 1, 5, 5), padding=1)
    with raises(ShapeError, "conv1d", "kernel size 6"):
        shrew.conv1d(ones(1, 1, 5), ones(1, 1, 6))
    with raises(ShapeError, "max_pool2d", "kernel size 3"):
        shrew.max_pool2d(ones(1, 1, 2, 2), 3)
    with raises(ShapeError, "avg_pool2d", "kernel size 3"):
        shrew.avg_pool2d(ones(1, 1, 5, 2), 3)
    with raises(ShapeError, "im2col", "kernel size 4"):
        shrew.im2col(ones(1, 1, 3, 3), 4)


@pytest.mark.parametrize("bad", [0, -1, (1, 0), (-2, 1)])
def test_non_positive_stride_or_kernel(bad, no_kernels):
    no_kernels("im2col", "max_pool2d", "avg_pool2d")
    x, w = ones(1, 1, 5, 5), ones(1, 1, 2, 2)
    with raises(ShapeError, "conv2d", "stride"):
        shrew.conv2d(x, w, stride=bad)
    with raises(ShapeError, "max_pool2d", "kernel_size"):
        shrew.max_pool2d(x, bad)
    with raises(ShapeError, "avg_pool2d", "stride"):
        shrew.avg_pool2d(x, 2, stride=bad)
    with raises(ShapeError, "im2col", "kernel_size"):
        shrew.im2col(x, bad)
    if isinstance(bad, int):
        with raises(ShapeError, "conv1d", "stride"):
            shrew.conv1d(ones(1, 1, 5), ones(1, 1, 2), stride=bad)


def test_negative_padding_and_oversized_pool_padding(no_kernels):
    no_kernels("im2col", "max_pool2d")
    with raises(ShapeError, "conv2d", "padding"):
        shrew.conv2d(ones(1, 1, 5, 5), ones(1, 1, 2, 2), padding=-1)
    with raises(ShapeError, "conv1d", "padding"):
        shrew.conv1d(ones(1, 1, 5), ones(1, 1, 2), padding=-1)
    with raises(ShapeError, "max_pool2d", "padding"):
        shrew.max_pool2d(ones(1, 1, 5, 5), 2, padding=2)


@pytest.mark.parametrize("bad", [-1, 3, 100, -4])
def test_gather_index_out_of_range_is_never_wrapped(bad, no_kernels):
    no_kernels("gather", "scatter_add")
    x = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    index = T([[0, bad], [1, 2]])
    with raises(ArgumentError, "gather", f"index {bad}", "size 3"):  # torch: RuntimeError
        x.gather(1, index)
    with raises(ArgumentError, "scatter_add", f"index {bad}", "size 3"):
        shrew.scatter_add((2, 3), 1, index, ones(2, 2))


def test_gather_and_scatter_index_shapes_and_dtypes(no_kernels):
    no_kernels("gather", "scatter_add")
    x = ones(2, 3)
    with raises(ShapeError, "gather", "[2]", "[2, 3]"):
        x.gather(1, T([0, 1]))
    with raises(ShapeError, "gather", "[3, 1]", "[2, 3]"):
        x.gather(1, T([[0], [1], [2]]))
    with raises(DTypeError, "gather", "float32"):
        x.gather(1, T([[0.0], [1.0]]))
    with raises(ShapeError, "scatter_add", "[2, 2]", "[2, 3]"):
        shrew.scatter_add((2, 3), 1, T([[0, 1], [1, 2]]), ones(2, 3))


def test_narrow_past_the_end(no_kernels):
    no_kernels("narrow")
    x = ones(3, 4)
    with raises(ShapeError, "narrow", "dim 1", "size 4", "[3, 4]"):
        x.narrow(1, 2, 3)
    with raises(ShrewIndexError, "narrow", "size 3"):  # torch: IndexError
        x.narrow(0, -5, 1)
    with raises(ShapeError, "narrow"):
        x.narrow(0, 0, -1)
    with raises(ShrewIndexError, "narrow", "dim 2"):
        x.narrow(2, 0, 1)
    with raises(ShrewIndexError, "index", "out of range"):
        x[3]
    with raises(ValueError, "index", "step"):  # as torch: a ValueError for steps below 1
        x[::-1]


def test_reshape_to_a_different_element_count(no_kernels):
    no_kernels("reshape")
    with raises(ShapeError, "reshape", "[2, 3]", "6 elements", "[4]"):
        ones(2, 3).reshape(4)
    with raises(ShapeError, "reshape", "[2, 3]", "[4, -1]"):
        ones(2, 3).reshape(4, -1)
    with raises(ShapeError, "reshape", "-1"):
        ones(2, 3).reshape(-1, -1)


def test_other_shape_errors():
    with raises(ShrewIndexError, "transpose", "dim 2", "2-d"):
        ones(2, 3).transpose(0, 2)
    with raises(ShrewIndexError, "sum", "dim -3"):
        ones(2, 3).sum(-3)
    with raises(ShapeError, "mean", "twice"):
        ones(2, 3).mean((1, -1))
    with raises(ShrewIndexError, "max", "zero-size"):
        ones(0, 3).max(0)
    with raises(ShapeError, "permute", "permutation"):
        ones(2, 3).permute(0, 0)
    with raises(ShapeError, "expand", "[2]", "[3]"):
        ones(2).expand(3)
    with raises(ShapeError, "expand", "[-1, 1]"):
        ones(1).expand(-1, 1)
    with raises(ShapeError, "cat", "[2, 3]", "[2, 4]"):
        shrew.cat([ones(2, 3), ones(2, 4)], 0)
    with raises(ShrewError, "cat"):
        shrew.cat([])
    with raises(ShapeError, "pad"):
        ones(2, 3).pad((1,))
    with raises(ShapeError, "pad", "negative"):
        ones(2, 3).pad((-2, -2))
    with raises(ShapeError, "item", "[2]"):
        ones(2).item()
    with raises(ShrewError, "ambiguous"):
        bool(ones(2))
    with raises(ShapeError, "zeros"):
        zeros(2, -1)
    with raises(ShapeError, "narrow", "0-d"):
        T(1.0).narrow(0, 0, 1)


def test_backward_on_non_scalar_or_without_grad():
    x = ones(3, requires_grad=True)
    with raises(ShrewError, "backward", "single-element", "[3]"):
        (x * 2.0).backward()
    with raises(ShrewError, "backward", "does not require grad"):
        ones(1).backward()
    with shrew.no_grad():
        y = (x * 2.0).sum()
    with raises(ShrewError, "backward", "does not require grad"):
        y.backward()


def test_ragged_and_non_numeric_data():
    with raises(ShrewValueError, "tensor", "rectangular"):
        T([[1, 2], [3]])
    with raises(ShrewValueError, "tensor"):  # torch: ValueError
        T([[1.0], [2.0, 3.0]])
    with raises(ShrewValueError, "tensor"):
        T(["a", "b"])
    with raises(DTypeError, "tensor"):
        T([1, None])
    with raises(ShrewValueError, "tensor"):
        T([2 ** 70])
    with raises(DTypeError, "uint16"):
        T(np.zeros(2, dtype=np.uint16))
    with raises(DTypeError, "from_numpy", "complex256"):
        shrew.from_numpy(np.zeros(2, dtype=np.clongdouble))
    with raises(ShrewTypeError, "dtype"):
        ones(2, dtype="float8")


def test_integer_tensors_cannot_require_grad():
    with raises(DTypeError, "int64", "require grad"):
        T([1, 2], requires_grad=True)
    with raises(DTypeError, "zeros", "int32"):
        zeros(2, dtype=shrew.int32, requires_grad=True)
    with raises(DTypeError, "bool"):
        T([True], requires_grad=True)
    with raises(DTypeError, "requires_grad_", "int64"):
        T([1]).requires_grad_()
    with raises(DTypeError, "arange"):
        shrew.arange(3, requires_grad=True)


def test_other_dtype_errors():
    with raises(DTypeError, "matmul", "float32", "float64"):
        ones(2, 2) @ ones(2, 2, dtype=shrew.float64)
    with raises(DTypeError, "matmul", "int64"):
        T([[1]]) @ T([[1]])
    with raises(DTypeError, "mean", "int64"):
        T([1, 2]).mean()
    with raises(DTypeError, "conv2d", "float64"):
        shrew.conv2d(ones(1, 1, 3, 3), ones(1, 1, 2, 2, dtype=shrew.float64))
    with raises(DTypeError, "where", "int64"):
        shrew.where(T([1, 0]), ones(2), zeros(2))
    with raises(DTypeError, "sub", "bool"):
        T([True]) - T([False])
    with raises(UnsupportedError, "randn", "int64"):
        shrew.randn(2, dtype=shrew.int64)


def test_bad_scalar_arguments():
    x = ones(2)
    with raises(ArgumentError, "clamp"):
        x.clamp()
    with raises(ShrewTypeError, "clamp", "min"):
        x.clamp(min="a")
    with raises(ShrewTypeError, "powf", "exponent"):
        x.powf("2")
    with raises(ArgumentError, "gelu", "approximate"):
        x.gelu(approximate="fast")
    with raises(ShrewTypeError, "pow", "real base"):
        "2" ** x
    with raises(ShrewTypeError, "full", "value"):
        shrew.full((2,), "x")
    with raises(ArgumentError, "arange"):
        shrew.arange(-1)
    with raises(ShrewTypeError, "checkpoint", "callable"):
        shrew.checkpoint(3, x)
    with pytest.raises(TypeError):
        x + "a"
    with raises(ShrewTypeError, "matmul", "list"):
        x.matmul([1.0, 1.0])


# -- devices ---------------------------------------------------------------------------------
def test_unknown_device_lists_the_available_ones():
    with raises(DeviceError, "unknown device 'nosuchdevice'", "available devices", "cpu"):
        ones(2, device="nosuchdevice")
    with raises(DeviceError, "nosuchdevice"):
        ones(2).to("nosuchdevice:1")
    with raises(DeviceError, "cpu:x"):
        ones(2, device="cpu:x")
    with raises(DeviceError, "cpu:3"):
        ones(2, device="cpu:3")
    with raises(DeviceError, "string"):
        ones(2, device=3)


def test_cross_device_ops(other_device, no_kernels):
    no_kernels("binary", "matmul", "where", "cat", "gather", "im2col", "compare")
    a = ones(2, 2)
    b = ones(2, 2, device=other_device)
    cond = T([[True, False]])
    for op, name in [(lambda: a + b, "add"), (lambda: b * a, "mul"), (lambda: a @ b, "matmul"),
                     (lambda: a < b, "lt"), (lambda: shrew.cat([a, b]), "cat"),
                     (lambda: shrew.where(cond, a, b), "where"),
                     (lambda: a.gather(0, T([[0, 1]], device=other_device)), "gather"),
                     (lambda: shrew.conv2d(ones(1, 2, 3, 3), ones(1, 2, 2, 2, device=other_device)),
                      "conv2d")]:
        with raises(DeviceError, name, "cpu", other_device):
            op()


# -- NaN and inf are values --------------------------------------------------------------------
def test_nan_and_inf_propagate_forward():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        x = T([0.0, -1.0, np.inf, np.nan])
        np.testing.assert_array_equal(x.log().numpy(), [-np.inf, np.nan, np.inf, np.nan])
        np.testing.assert_array_equal(x.sqrt().numpy(), [0.0, np.nan, np.inf, np.nan])
        np.testing.assert_array_equal((T([1.0, 0.0, -1.0]) / T(0.0)).numpy(),
                                      [np.inf, np.nan, -np.inf])
        assert np.isnan(x.sum().item()) and np.isnan(x.max().item())
        assert np.isnan(x.mean().item())
        assert np.isnan((x.reshape(1, 4) @ ones(4, 1)).item())
        np.testing.assert_array_equal(T([np.inf, -np.inf]).exp().numpy(), [np.inf, 0.0])
        np.testing.assert_array_equal(T([np.inf, -np.inf, np.nan]).sigmoid().numpy(),
                                      [1.0, 0.0, np.nan])
        np.testing.assert_array_equal(T([np.nan, 2.0]).clamp(0.0, 1.0).numpy(), [np.nan, 1.0])


def test_nan_and_inf_propagate_backward():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        x = T([0.0, 4.0], requires_grad=True)
        x.sqrt().sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [np.inf, 0.25])
        y = T([np.nan, 1.0], requires_grad=True)
        (y * 2.0).sum().backward()
        np.testing.assert_array_equal(y.grad.numpy(), [2.0, 2.0])
        z = T([np.nan, 1.0], requires_grad=True)
        (z * z).sum().backward()
        np.testing.assert_array_equal(z.grad.numpy(), [np.nan, 2.0])
