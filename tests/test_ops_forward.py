"""Forward values against independent numpy/scipy computations."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import erf as scipy_erf

import shrew
from shrew.ops.elementwise.recorded import unary
from support import seeds, shapes

T = shrew.tensor


def _gelu(v):
    flat = [0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in v.ravel()]
    return np.array(flat).reshape(v.shape)


def _gelu_tanh(v):
    return 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))


def _gelu_derivative(v):
    return 0.5 * (1 + scipy_erf(v / math.sqrt(2))) + v * np.exp(-v * v / 2) / math.sqrt(2 * math.pi)


def _gelu_tanh_derivative(v):
    c = math.sqrt(2 / math.pi)
    t = np.tanh(c * (v + 0.044715 * v ** 3))
    return 0.5 * (1 + t) + 0.5 * v * (1 - t ** 2) * c * (1 + 3 * 0.044715 * v ** 2)


UNARY_REFERENCE = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "square": np.square, "relu": lambda v: np.maximum(v, 0),
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "tanh": np.tanh, "gelu": _gelu, "gelu_tanh": _gelu_tanh,
    "silu": lambda v: v / (1 + np.exp(-v)), "sin": np.sin, "cos": np.cos, "floor": np.floor,
    "ceil": np.ceil, "round": np.round, "erf": scipy_erf, "sign": np.sign,
    "gelu_derivative": _gelu_derivative, "gelu_tanh_derivative": _gelu_tanh_derivative,
}


def call_unary(x, fn):
    if fn == "gelu_tanh":
        return x.gelu(approximate="tanh")
    if fn.endswith("_derivative"):  # for gradient rules: no Tensor method
        return unary(fn, x)
    return getattr(x, fn)()


@pytest.mark.parametrize("fn", sorted(UNARY_REFERENCE))
@pytest.mark.parametrize("dtype", [shrew.float32, shrew.float64])
def test_unary_values(fn, dtype):
    rng = np.random.default_rng(3)
    v = rng.standard_normal((4, 5)) * 3
    if fn in ("log", "sqrt"):
        v = np.abs(v) + 1e-3
    v = v.astype(dtype.np)
    out = call_unary(T(v), fn)
    assert out.dtype is dtype and out.shape == v.shape
    ref = UNARY_REFERENCE[fn](v.astype(np.float64))
    tol = 1e-6 if dtype is shrew.float32 else 1e-13
    np.testing.assert_allclose(out.numpy(), ref, rtol=tol, atol=tol)


def test_gelu_known_values():
    x = T([-3.0, -1.0, 0.0, 1.0, 3.0], dtype=shrew.float64)
    np.testing.assert_allclose(x.gelu().numpy(),
                               [-0.0040496941, -0.1586552539, 0.0, 0.8413447461, 2.9959503059],
                               rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(x.gelu(approximate="tanh").numpy(),
                               [-0.0036373921, -0.1588080094, 0.0, 0.8411919906, 2.9963626079],
                               rtol=1e-8, atol=1e-10)


def test_round_is_half_to_even_and_sigmoid_is_stable():
    assert T([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]).round().tolist() == [-2, -2, -0, 0, 2, 2]
    s = T([-1000.0, 1000.0], dtype=shrew.float64).sigmoid().numpy()
    np.testing.assert_array_equal(s, [0.0, 1.0])
    assert T([-800.0]).silu().item() == 0.0


@pytest.mark.parametrize("fn", ["sum", "mean", "max", "min"])
@given(shape=shapes(1, 4, max_side=4), seed=seeds, data=st.data())
def test_reductions(fn, shape, seed, data):
    v = np.random.default_rng(seed).standard_normal(shape)
    nd = len(shape)
    dim = data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                              st.lists(st.integers(0, nd - 1), unique=True, min_size=1).map(tuple)))
    keepdim = data.draw(st.booleans())
    ref = getattr(np, {"max": "amax", "min": "amin"}.get(fn, fn))(v, axis=dim, keepdims=keepdim)
    out = getattr(T(v), {"max": "amax", "min": "amin"}.get(fn, fn))(dim, keepdim=keepdim)
    assert out.shape == np.shape(ref)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_full_reduction_gives_a_0d_tensor():
    x = T([[1.0, 2.0], [3.0, 4.0]])
    for fn in ("sum", "mean", "max", "min"):
        assert getattr(x, fn)().shape == ()
    assert x.sum(keepdim=True).shape == (1, 1)
    assert x.sum().item() == 10.0 and x.mean().item() == 2.5
    assert T(5.0).sum().item() == 5.0 and T(5.0).amax(0).item() == 5.0
    assert T(5.0).mean(-1, keepdim=True).shape == ()


def test_argmax_argmin():
    v = np.array([[1, 5, 5, 0], [7, 0, 7, -1], [2, 2, 2, 2]])
    x = T(v)
    assert x.argmax(1).tolist() == [1, 0, 0]          # first of the ties, as numpy/torch
    assert x.argmin(1).tolist() == [3, 3, 0]
    assert x.argmax(0).tolist() == v.argmax(0).tolist()
    assert x.argmin(-2).tolist() == v.argmin(0).tolist()
    assert x.argmax().item() == v.argmax() and x.argmin().item() == v.argmin()
    assert x.argmax(1, keepdim=True).shape == (3, 1)
    assert x.argmax(1).dtype is shrew.int64
    f = np.random.default_rng(0).standard_normal((3, 4, 5))
    assert T(f).argmax(2).tolist() == f.argmax(2).tolist()
    assert T(f).argmin(0).tolist() == f.argmin(0).tolist()


@pytest.mark.parametrize("sa, sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                    ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
                                    ((2, 1, 2, 3), (4, 3, 2)), ((3,), (2, 3, 4)),
                                    ((2, 2, 3), (3,))])
def test_matmul_values(sa, sb):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    out = T(a) @ T(b)
    ref = np.matmul(a, b)
    assert out.shape == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(T(a).matmul(T(b)).numpy(), ref, rtol=1e-12, atol=1e-12)


def test_conv_and_pool_hand_computed_values():
    x = T(np.arange(16.0).reshape(1, 1, 4, 4))
    w = T(np.array([[[[1.0, 0.0], [0.0, -1.0]]]]))
    # x[i, j] - x[i+1, j+1] is always -5 inside; with padding the borders see zeros.
    np.testing.assert_array_equal(shrew.conv2d(x, w).numpy(), np.full((1, 1, 3, 3), -5.0))
    padded = shrew.conv2d(x, w, padding=1).numpy()[0, 0]
    assert padded.shape == (5, 5) and padded[0, 0] == -0.0 and padded[4, 4] == 15.0
    assert shrew.conv2d(x, w, stride=(2, 1)).shape == (1, 1, 2, 3)
    np.testing.assert_array_equal(shrew.max_pool2d(x, 2).numpy()[0, 0], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(shrew.avg_pool2d(x, 2).numpy()[0, 0], [[2.5, 4.5], [10.5, 12.5]])
    # padded zeros count in the average (divisor = kernel area), as PyTorch's default
    ones = shrew.ones(1, 1, 2, 2)
    np.testing.assert_array_equal(shrew.avg_pool2d(ones, 2, stride=1, padding=1).numpy()[0, 0],
                                  [[0.25, 0.5, 0.25], [0.5, 1.0, 0.5], [0.25, 0.5, 0.25]])
    # max pool padding is -inf, never 0: an all-negative input keeps its values
    neg = T(-np.arange(1.0, 5.0).reshape(1, 1, 2, 2))
    np.testing.assert_array_equal(shrew.max_pool2d(neg, 2, stride=1, padding=1).numpy()[0, 0],
                                  [[-1, -1, -2], [-1, -1, -2], [-3, -3, -4]])
    sig = T([[[1.0, 2.0, 3.0, 4.0, 5.0]]])
    np.testing.assert_array_equal(shrew.conv1d(sig, T([[[1.0, -1.0]]])).numpy(), [[[-1] * 4]])
    np.testing.assert_array_equal(shrew.conv1d(sig, T([[[1.0, 1.0, 1.0]]]), stride=2,
                                               padding=1).numpy(), [[[3.0, 9.0, 9.0]]])


def test_gather_values():
    x = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.gather(1, T([[2, 0], [1, 1]])).tolist() == [[3.0, 1.0], [5.0, 5.0]]
    assert x.gather(0, T([[1, 0, 1]])).tolist() == [[4.0, 2.0, 6.0]]
    assert x.gather(-1, T([[0], [2]])).tolist() == [[1.0], [6.0]]
    assert x.gather(1, T(np.array([[1]], dtype=np.int32))).tolist() == [[2.0]]


def test_scatter_add_accumulates_duplicates():
    src = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    out = shrew.scatter_add((2, 3), 1, T([[0, 0, 2], [1, 1, 1]]), src)
    assert out.tolist() == [[3.0, 0.0, 3.0], [0.0, 15.0, 0.0]]


def test_pad_torch_order_and_negative_crop():
    x = T(np.arange(6.0).reshape(2, 3))
    assert x.pad((1, 0)).tolist() == [[0, 0, 1, 2], [0, 3, 4, 5]]                  # last dim
    assert x.pad((0, 0, 1, 0)).tolist() == [[0, 0, 0], [0, 1, 2], [3, 4, 5]]        # then dim 0
    assert x.pad((1, 1), value=-1.0).tolist() == [[-1, 0, 1, 2, -1], [-1, 3, 4, 5, -1]]
    assert x.pad((-1, 0)).tolist() == [[1, 2], [4, 5]]
    assert x.pad((0, -2, -1, 1)).tolist() == [[3], [0]]
    assert x.pad((-1, 1)).tolist() == [[1, 2, 0], [4, 5, 0]]
    assert T([[1, 2]]).pad((1, 1), value=7).tolist() == [[7, 1, 2, 7]]


def test_cat_where_clamp():
    a, b = T([[1.0, 2.0]]), T([[3.0, 4.0], [5.0, 6.0]])
    assert shrew.cat([a, b]).tolist() == [[1, 2], [3, 4], [5, 6]]
    assert shrew.cat([b, b], dim=-1).shape == (2, 4)
    assert shrew.cat([a]).tolist() == [[1.0, 2.0]]
    assert shrew.cat([a, shrew.zeros(0, 2)]).shape == (1, 2)
    cond = T([[True], [False]])
    assert shrew.where(cond, b, 0.0).tolist() == [[3, 4], [0, 0]]
    assert shrew.where(cond, -1.0, a).tolist() == [[-1, -1], [1, 2]]
    x = T([-2.0, -0.5, 0.5, 2.0])
    assert x.clamp(-1.0, 1.0).tolist() == [-1, -0.5, 0.5, 1]
    assert x.clamp(min=0.0).tolist() == [0, 0, 0.5, 2]
    assert x.clamp(max=0.0).tolist() == [-2, -0.5, 0, 0]
    assert T([1, 5, 9]).clamp(2, 6).tolist() == [2, 5, 6]
    assert T([1, 5, 9]).clamp(2, 6).dtype is shrew.int64
    assert x.clip(0.0, 1.0).tolist() == [0, 0, 0.5, 1]


def test_comparisons():
    a = np.array([[1.0, 2.0, 3.0]])
    b = np.array([[2.0], [2.0]])
    x, y = T(a), T(b)
    for name, op in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                     ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
        out = getattr(x, name)(y)
        assert out.dtype is shrew.bool
        np.testing.assert_array_equal(out.numpy(), op(a, b))
    assert (x == 2.0).tolist() == [[False, True, False]]
    assert (x > 1).tolist() == [[False, True, True]]
    assert (2.0 < x).tolist() == [[False, False, True]]


def test_affine_powf_and_scalar_arithmetic():
    v = np.array([0.5, 1.0, 2.0], dtype=np.float64)
    x = T(v)
    np.testing.assert_allclose(x.affine(2.0, -1.0).numpy(), v * 2 - 1)
    np.testing.assert_allclose((x ** 1.5).numpy(), v ** 1.5)
    np.testing.assert_allclose(x.powf(-2).numpy(), v ** -2.0)
    np.testing.assert_allclose((2.0 ** x).numpy(), 2.0 ** v)
    np.testing.assert_allclose((1.0 - x).numpy(), 1 - v)
    np.testing.assert_allclose((3.0 / x).numpy(), 3 / v)
    np.testing.assert_allclose((-x).numpy(), -v)
    np.testing.assert_allclose(abs(T(-v)).numpy(), v)
    np.testing.assert_allclose((np.float64(2.0) * x).numpy(), 2 * v)


def test_views_values():
    v = np.arange(24.0).reshape(2, 3, 4)
    x = T(v)
    np.testing.assert_array_equal(x.permute(2, 0, 1).numpy(), v.transpose(2, 0, 1))
    np.testing.assert_array_equal(x.transpose(0, -1).numpy(), v.swapaxes(0, 2))
    np.testing.assert_array_equal(x.flatten().numpy(), v.ravel())
    np.testing.assert_array_equal(x.flatten(1).numpy(), v.reshape(2, 12))
    np.testing.assert_array_equal(x.flatten(0, 1).numpy(), v.reshape(6, 4))
    np.testing.assert_array_equal(x.unsqueeze(-1).numpy(), v[..., None])
    np.testing.assert_array_equal(x[:, None].squeeze(1).numpy(), v)
    np.testing.assert_array_equal(x.narrow(2, 1, 2).numpy(), v[:, :, 1:3])
    np.testing.assert_array_equal(x[1, :, -1].numpy(), v[1, :, -1])
    np.testing.assert_array_equal(x.reshape(4, -1).numpy(), v.reshape(4, -1))
    np.testing.assert_array_equal(x[0].T.numpy(), v[0].T)
    np.testing.assert_array_equal(T([[1.0], [2.0]]).expand(2, 3).numpy(), [[1] * 3, [2] * 3])
    np.testing.assert_array_equal(T([1.0, 2.0]).expand(3, -1).numpy(), [[1, 2]] * 3)
