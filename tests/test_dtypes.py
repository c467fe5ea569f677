"""dtypes and PyTorch's type-promotion rules (expected results written out by hand)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import shrew

F16, F32, F64 = shrew.float16, shrew.float32, shrew.float64
I32, I64, B = shrew.int32, shrew.int64, shrew.bool


def t(dtype, ndim=1):
    """A tensor of `dtype` with `ndim` dims (values 1 or True)."""
    return shrew.ones(*([2] * ndim), dtype=dtype)


@pytest.mark.parametrize("a, b, expect", [
    # dimensioned tensors: the wider type of the higher category
    (t(I32), t(I64), I64), (t(F16), t(F32), F32), (t(F32), t(F64), F64), (t(I64), t(F16), F16),
    (t(B), t(I32), I32), (t(B), t(F16), F16), (t(I32), t(I32), I32), (t(B), t(B), B),
    # 0-dim tensors rank below dimensioned ones of the same category ...
    (t(F32), t(F64, 0), F32), (t(I32), t(I64, 0), I32), (t(F16), t(F64, 0), F16),
    # ... but a higher category still wins, at the 0-dim tensor's width
    (t(I64), t(F64, 0), F64), (t(I32), t(F16, 0), F16), (t(B), t(I32, 0), I32),
    # two 0-dim tensors: the usual rule
    (t(I32, 0), t(I64, 0), I64), (t(F16, 0), t(F32, 0), F32),
    # Python scalars keep the tensor's dtype unless their category is higher
    (t(F16), 2.5, F16), (t(F64), 2, F64), (t(I32), 5, I32), (t(I64), 3, I64),
    (t(F32, 0), 2.5, F32), (t(I32, 0), 7, I32),
    (t(I64), 1.5, F32), (t(I32), 1.5, F32), (t(I64, 0), 1.5, F32),
    (t(B), 3, I64), (t(B), 1.5, F32), (t(B), True, B), (t(I32), True, I32),
])
@pytest.mark.parametrize("order", ["tensor_first", "tensor_second"])
def test_add_and_mul_promotion(a, b, expect, order):
    x, y = (a, b) if order == "tensor_first" else (b, a)
    assert (x + y).dtype is expect
    assert (x * y).dtype is expect


@pytest.mark.parametrize("a, b, expect", [
    (t(I64), t(I64), F32), (t(I32), t(I32), F32), (t(I32), 2, F32), (t(I64), t(I32, 0), F32),
    (t(B), t(B), F32), (t(I64), 2.0, F32), (t(F16), 2, F16), (t(F64), t(F32), F64),
    (t(I64), t(F64, 0), F64),
])
def test_division_promotion(a, b, expect):
    assert (a / b).dtype is expect
    assert (b / a).dtype is expect


def test_promoted_values_are_exact():
    i = shrew.tensor([1, 2, 3])
    np.testing.assert_array_equal((i + 0.5).numpy(), np.float32([1.5, 2.5, 3.5]))
    np.testing.assert_array_equal((i / 2).numpy(), np.float32([0.5, 1.0, 1.5]))
    np.testing.assert_array_equal((7 / i).numpy(), np.float32([7, 3.5, 7 / 3]))
    np.testing.assert_array_equal((2.5 - i).numpy(), np.float32([1.5, 0.5, -0.5]))
    b = shrew.tensor([True, False])
    assert (b + 2).tolist() == [3, 2] and (b + 2).dtype is I64
    assert (b * b).tolist() == [True, False]
    big = shrew.tensor(np.array([2 ** 40], dtype=np.int64))
    assert (big + 1).tolist() == [2 ** 40 + 1]            # no silent float round trip
    h = shrew.tensor(np.array([1.0, 2.0], dtype=np.float16))
    np.testing.assert_array_equal((h * 1.5).numpy(), np.float16([1.5, 3.0]))


def test_comparison_dtype_and_promotion():
    i = shrew.tensor([1, 2, 3])
    assert (i < 2.5).dtype is B and (i < 2.5).tolist() == [True, True, False]
    assert (i == 2.0).tolist() == [False, True, False]
    assert (shrew.tensor([0.1]) == shrew.tensor(np.array([0.1]))).tolist() == [False]
    assert (shrew.tensor([True, False]) != True).tolist() == [False, True]  # noqa: E712


def test_where_and_cat_promotion():
    cond = shrew.tensor([True, False])
    assert shrew.where(cond, shrew.tensor([1, 2]), 0.5).dtype is F32
    assert shrew.where(cond, shrew.tensor([1, 2]), 0).dtype is I64
    assert shrew.where(cond, t(F16), t(F32)).dtype is F32
    assert shrew.where(cond, 1.0, 2.0).dtype is F32
    assert shrew.cat([t(I32), t(F64)]).dtype is F64
    assert shrew.cat([t(I32), t(I64)]).dtype is I64
    # PyTorch's legacy rule: a 1-D empty tensor is left out, but its dtype still counts
    legacy = shrew.cat([shrew.zeros(0, dtype=F64), shrew.ones(2, 2, dtype=F32)])
    want = torch.cat([torch.zeros(0, dtype=torch.float64), torch.ones(2, 2)])
    assert legacy.shape == tuple(want.shape) and legacy.dtype is F64


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(-2), sqrt(-2): nan, by design
@pytest.mark.parametrize("dtype", [I32, I64])
def test_unary_on_integers(dtype):
    x = shrew.tensor(np.array([-2, 0, 3]), dtype=dtype)
    for fn in ("exp", "sqrt", "sigmoid", "tanh", "sin", "log"):
        assert getattr(x, fn)().dtype is F32, fn
    for fn in ("neg", "abs", "square", "relu"):
        out = getattr(x, fn)()
        assert out.dtype is dtype, fn
    assert x.abs().tolist() == [2, 0, 3] and x.relu().tolist() == [0, 0, 3]
    assert x.square().tolist() == [4, 0, 9] and (-x).tolist() == [2, 0, -3]
    assert (x ** 2.0).dtype is F32


def test_reduction_dtypes():
    assert t(I32).sum().dtype is I64 and t(B).sum().dtype is I64
    assert t(B).sum().item() == 2
    assert t(I32).max().dtype is I32 and t(F16).sum().dtype is F16
    assert t(F64).mean().dtype is F64
    assert t(F32).argmax().dtype is I64 and t(I32, 2).argmin(1).dtype is I64


def test_dtype_objects():
    assert repr(F32) == "shrew.float32" and F32.is_floating_point and not I64.is_floating_point
    assert pickle.loads(pickle.dumps(F16)) is F16
    for d in (F16, F32, F64, I32, I64, B):
        assert shrew.tensor([1], dtype=d).dtype is d
        assert shrew.tensor([1], dtype=d.np).dtype is d
        assert shrew.tensor([1], dtype=d.name).dtype is d
    assert shrew.tensor([1], dtype=int).dtype is I64
    assert shrew.tensor([1], dtype=bool).dtype is B


@pytest.mark.parametrize("dtype", [F16, F32, F64])
def test_float_ops_keep_the_dtype_and_match_numpy(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(dtype.np)
    b = rng.uniform(0.5, 2, (4,)).astype(dtype.np)
    x, y = shrew.tensor(a), shrew.tensor(b)
    tol = {F16: 2e-3, F32: 1e-6, F64: 1e-14}[dtype]
    for out, ref in [(x + y, a + b), (x * y, a * b), (x / y, a / b), (x - y, a - b),
                     (x.exp(), np.exp(a)), (x.tanh(), np.tanh(a)), (x.sum(1), a.sum(1)),
                     (x.amax(0), a.max(0)), (x * 0.5 + 1.0, a * 0.5 + 1.0)]:
        assert out.dtype is dtype
        np.testing.assert_allclose(out.numpy().astype(np.float64), ref.astype(np.float64),
                                   rtol=tol, atol=tol)


def test_numpy_scalars_count_by_kind():
    # np.float32 is not a Python float, but it is still a float: never truncated to int.
    i = shrew.tensor([1, 2])
    out = i * np.float32(2.5)
    assert out.dtype is F32 and out.tolist() == [2.5, 5.0]
    assert (i + np.float64(0.5)).tolist() == [1.5, 2.5]
    assert (np.float32(0.5) - i).tolist() == [-0.5, -1.5]
    assert i.clamp(np.float32(1.5), 3).tolist() == [1.5, 2.0]
    assert i.affine(np.float32(0.5), 0).tolist() == [0.5, 1.0]
    assert (shrew.tensor([True]) + np.int64(1)).dtype is I64
    assert (shrew.tensor(np.ones(2, np.int32)) * np.int64(3)).dtype is I32
    assert (shrew.tensor(np.ones(2, np.float16)) * np.float64(3)).dtype is F16
