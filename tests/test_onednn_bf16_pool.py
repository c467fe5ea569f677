"""bfloat16 max pooling (and its gradient) and a bias's in-place add on oneDNN, and float16
and bfloat16 relu and its gradient on their bit patterns (backends/cpu/onednn/max_pool.py,
onednn/elementwise.py's add_into, cpu/bits16.py): PyTorch's bits on the same 16-bit inputs,
edge values included (NaN of either sign, infinities, -0.0, subnormals, the largest
finite values), whether the fast path serves or declines; and that it serves on cnn_step's
shapes (benchmarks/workloads.py).  NaNs are compared as NaN: PyTorch's own payloads differ
between its scalar and vectorised loops."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew.backends import cpu
from shrew.backends.cpu import bits16, onednn
from shrew.backends.cpu.onednn import elementwise, max_pool
from shrew.ops.elementwise.recorded import add_bias
from support import needs_loadable, switched_on

pytestmark = needs_loadable(onednn)
onednn_on = switched_on(cpu.use_onednn)

BF16, F16 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
TORCH = {BF16: torch.bfloat16, F16: torch.float16}
SHREW = {BF16: shrew.bfloat16, F16: shrew.float16}
EDGES = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-40, 2e-39,
                  3.3e38, -3.3e38, 1.0, -1.0], np.float32)
"""Values each path must treat as PyTorch does (1e-40, 2e-39: bfloat16 subnormals; float16
takes them as zeros, its own overflow the infinities)."""


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(np.int16)


def _to_torch(x: np.ndarray) -> torch.Tensor:
    """x's very bits as a torch tensor of its dtype."""
    return torch.from_numpy(_bits(x).copy()).view(TORCH[x.dtype])


def _from_torch(t: torch.Tensor, dtype: np.dtype) -> np.ndarray:
    return t.detach().contiguous().view(torch.int16).numpy().view(dtype)


def _assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """The same bits everywhere, but NaNs only as NaN (of any payload)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)
    np.testing.assert_array_equal(_bits(got)[~nan], _bits(want)[~nan])


def _with_edges(shape: tuple, dtype: np.dtype, seed: int, count: int) -> np.ndarray:
    """Normal samples of `shape` with `count` edge values planted at random places."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[rng.integers(0, x.size, count)] = rng.choice(EDGES, count)
    with np.errstate(over="ignore"):
        return x.astype(dtype)


@contextmanager
def _spy(module, name: str) -> Iterator[list]:
    """Whether each call of module.name in the block served (True) or declined (False)."""
    served: list = []
    real = getattr(module, name)

    def spying(*args):
        out = real(*args)
        served.append(out is not NotImplemented and out is not False)
        return out
    setattr(module, name, spying)
    try:
        yield served
    finally:
        setattr(module, name, real)


def _max_pool_both(x: np.ndarray, g: np.ndarray, kernel: int, stride: int,
                   padding: int) -> tuple:
    """(values, indices, gradient) from shrew and from torch."""
    xs = shrew.tensor(x, requires_grad=True)
    values, index = shrew.nn.functional.max_pool2d(xs, kernel, stride, padding,
                                                   return_indices=True)
    values.backward(shrew.tensor(g))
    xt = _to_torch(x).requires_grad_()
    want, want_index = torch.nn.functional.max_pool2d(xt, kernel, stride, padding,
                                                      return_indices=True)
    want.backward(_to_torch(g))
    return ((values.numpy(), index.numpy(), xs.grad.numpy()),
            (_from_torch(want, x.dtype), want_index.numpy(), _from_torch(xt.grad, x.dtype)))


def _assert_max_pool_matches(x: np.ndarray, g_seed: int, kernel: int, stride: int,
                             padding: int) -> None:
    out_hw = [(n + 2 * padding - kernel) // stride + 1 for n in x.shape[2:]]
    g = _with_edges((*x.shape[:2], *out_hw), x.dtype, g_seed, 0)
    got, want = _max_pool_both(x, g, kernel, stride, padding)
    _assert_same_bits(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    _assert_same_bits(got[2], want[2])


@settings(max_examples=15, deadline=None)
@given(n=st.integers(16, 24), c=st.integers(8, 12), h=st.integers(16, 21),
       w=st.integers(16, 21), kernel=st.integers(1, 4), stride=st.integers(1, 4),
       padding=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_bfloat16_max_pool_matches_torch(n, c, h, w, kernel, stride, padding, seed):
    padding = min(padding, kernel // 2)   # (PyTorch's limit)
    x = _with_edges((n, c, h, w), BF16, seed, 0)
    with _spy(max_pool, "forward") as forward, _spy(max_pool, "backward") as backward:
        _assert_max_pool_matches(x, seed + 1, kernel, stride, padding)
    assert forward == [True]   # large enough, dilation 1, no edge values: served
    assert backward == [kernel <= stride]   # (overlapping windows: the core's rule)


@pytest.mark.parametrize("kernel, stride, padding", [(2, 2, 0), (3, 2, 1), (2, 2, 1),
                                                     (3, 3, 0)])
@pytest.mark.parametrize("edges", [1, 40])
def test_bfloat16_max_pool_edge_values_match_torch(kernel, stride, padding, edges):
    for seed in range(4):
        x = _with_edges((16, 8, 18, 18), BF16, seed, edges)
        _assert_max_pool_matches(x, seed + 100, kernel, stride, padding)


def test_bfloat16_max_pool_windows_of_minus_infinity_match_torch():
    x = _with_edges((16, 8, 18, 18), BF16, 0, 0)
    x[0, 0, :3, :3] = -np.inf            # windows all -inf, some reaching into the padding
    x[1, 1, :2, :2] = ml_dtypes.finfo(BF16).min
    for padding in (0, 1):
        _assert_max_pool_matches(x, 7, 2, 2, padding)


def test_bfloat16_max_pool_declines_what_onednn_would_change():
    x = _with_edges((16, 8, 18, 18), BF16, 0, 0)
    for value, served in ((np.nan, False), (-np.nan, False), (1e-40, False), (-1e-40, False),
                          (np.inf, True), (-0.0, True)):
        x[3, 2, 5, 7] = value
        with _spy(max_pool, "forward") as forward:
            _assert_max_pool_matches(x, 1, 2, 2, 0)
        assert forward == [served], value
    x[3, 2, 5, 7] = 1.0
    g = np.ones((16, 8, 9, 9), BF16)
    g[0, 0, 0, 0] = 1e-40                # a subnormal gradient: oneDNN would flush it
    with _spy(max_pool, "forward") as forward, _spy(max_pool, "backward") as backward:
        got, want = _max_pool_both(x, g, 2, 2, 0)
    _assert_same_bits(got[2], want[2])
    assert forward == [True] and backward == [False]


def test_cnn_step_shapes_take_onednn_and_the_bit_paths():
    """cnn_step's layers in bfloat16 (conv 1->16 5x5 and 16->32 5x5 with bias, relu,
    max_pool 2): every fast path served, the input gradient and the activations PyTorch's
    bits given the same convolution outputs."""
    with ExitStack() as stack:
        forward, backward, adds, relus, relu_grads = (
            stack.enter_context(_spy(module, name)) for module, name in (
                (max_pool, "forward"), (max_pool, "backward"), (elementwise, "add_into"),
                (bits16, "relu"), (bits16, "relu_backward")))
        _cnn_layers()
    assert forward == backward == adds == relus == relu_grads == [True, True]


def _cnn_layers() -> None:
    rng = np.random.default_rng(0)
    for shape in ((64, 16, 28, 28), (64, 32, 14, 14)):
        conv = rng.standard_normal(shape).astype(BF16)
        bias = rng.standard_normal((shape[1],)).astype(BF16)
        g = rng.standard_normal((*shape[:2], shape[2] // 2, shape[3] // 2)).astype(BF16)
        # the bias added into a convolution's output, as conv2d's add_bias does
        y = shrew.tensor(conv.copy(), requires_grad=True)
        y_bias = add_bias(y * 1, shrew.tensor(bias.reshape(-1, 1, 1)))
        pooled = shrew.nn.functional.max_pool2d(shrew.relu(y_bias), 2)
        pooled.backward(shrew.tensor(g))
        yt = _to_torch(conv).requires_grad_()
        want = torch.nn.functional.max_pool2d(
            torch.relu(yt * 1 + _to_torch(bias).reshape(1, -1, 1, 1)), 2)
        want.backward(_to_torch(g))
        _assert_same_bits(y_bias.numpy(), _from_torch(yt * 1 + _to_torch(bias).reshape(
            1, -1, 1, 1), BF16))
        _assert_same_bits(pooled.numpy(), _from_torch(want, BF16))
        _assert_same_bits(y.grad.numpy(), _from_torch(yt.grad, BF16))


@pytest.mark.parametrize("dtype", [BF16, F16])
@pytest.mark.parametrize("edges", [0, 300])
def test_relu_and_its_gradient_match_torch(dtype, edges):
    x = _with_edges((64, 16, 28), dtype, 1, edges)
    g = _with_edges((64, 16, 28), dtype, 2, edges)
    _assert_same_bits(bits16.relu(x), _from_torch(torch.relu(_to_torch(x)), dtype))
    _assert_same_bits(bits16.relu_backward(g, x), _from_torch(
        torch.ops.aten.threshold_backward(_to_torch(g), _to_torch(x), 0), dtype))


@pytest.mark.parametrize("dtype", [BF16, F16])
def test_relu_of_every_bit_pattern_matches_torch(dtype):
    every = np.arange(-32768, 32768, dtype=np.int32).astype(np.int16).view(dtype)
    g = np.random.default_rng(0).permutation(every)
    _assert_same_bits(bits16.relu(every), _from_torch(torch.relu(_to_torch(every)), dtype))
    _assert_same_bits(bits16.relu_backward(g, every), _from_torch(
        torch.ops.aten.threshold_backward(_to_torch(g), _to_torch(every), 0), dtype))


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 40), min_size=1, max_size=4),
       dtype=st.sampled_from([BF16, F16]), seed=st.integers(0, 2**16))
def test_relu_through_shrew_matches_torch(shape, dtype, seed):
    x = _with_edges(tuple(shape), dtype, seed, max(1, int(np.prod(shape)) // 50))
    g = _with_edges(tuple(shape), dtype, seed + 1, 0)
    xs = shrew.tensor(x, requires_grad=True)
    y = shrew.relu(xs)
    y.backward(shrew.tensor(g))
    xt = _to_torch(x).requires_grad_()
    want = torch.relu(xt)
    want.backward(_to_torch(g))
    _assert_same_bits(y.numpy(), _from_torch(want, dtype))
    _assert_same_bits(xs.grad.numpy(), _from_torch(xt.grad, dtype))


@settings(max_examples=15, deadline=None)
@given(shape=st.sampled_from([(64, 16, 28, 28), (64, 32, 14, 14), (8, 4096), (2, 64, 256)]),
       broadcast=st.integers(0, 3), edges=st.sampled_from([0, 50]),
       seed=st.integers(0, 2**16))
def test_bfloat16_bias_add_into_matches_torch(shape, broadcast, edges, seed):
    bias_shape = [(1,) * len(shape), shape[1:2] + (1,) * (len(shape) - 2), shape[-1:],
                  (1,) + shape[1:]][broadcast]
    dst = _with_edges(shape, BF16, seed, edges)
    src = _with_edges(bias_shape, BF16, seed + 1, 1 if edges else 0)
    want = _from_torch(_to_torch(dst) + _to_torch(src), BF16)
    got = dst.copy()
    with _spy(elementwise, "add_into") as adds:
        cpu.backend.CPUBackend().add_into_(got, src)
    _assert_same_bits(got, want)
    tiny = np.abs(np.concatenate([dst.ravel(), src.ravel()]).astype(np.float32))
    has_tiny = bool(((tiny > 0) & (tiny < 2.0 ** -118)).any())
    assert adds == [not has_tiny]


def test_bfloat16_add_into_declines_sums_that_may_come_out_subnormal():
    dst = np.full((64, 1024), 2.0 ** -126 * 1.5, BF16)
    src = np.full((1, 1024), -(2.0 ** -126), BF16)
    want = _from_torch(_to_torch(dst) + _to_torch(src), BF16)   # 2^-127: subnormal
    got = dst.copy()
    with _spy(elementwise, "add_into") as adds:
        cpu.backend.CPUBackend().add_into_(got, src)
    _assert_same_bits(got, want)
    assert adds == [False] and np.all(got.astype(np.float32) > 0)


def test_float16_pooling_and_add_decline_to_numpy():
    """oneDNN has no float16 kernels for these here but its reference ones (none without
    AVX512-FP16): the numpy paths serve, with PyTorch's bits."""
    x = _with_edges((16, 8, 18, 18), F16, 0, 0)
    assert max_pool.forward(x, (2, 2), (2, 2), (0, 0), (1, 1), False) is NotImplemented
    assert elementwise.add_into(x.copy(), np.ones((1, 8, 1, 1), F16)) is False
    _assert_max_pool_matches(x, 1, 2, 2, 0)


def test_cnn_layer_under_autocast_matches_torch():
    """A conv (with bias), relu, max_pool layer as cnn_step runs it under bfloat16
    autocast: the bias added into the convolution's output (oneDNN), relu (bits) and the
    pooling (oneDNN) give torch's bits on the same convolution output, each way."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 1, 32, 32)).astype(np.float32)
    w = rng.standard_normal((16, 1, 5, 5)).astype(np.float32) * 0.2
    b = rng.standard_normal(16).astype(np.float32)
    g = rng.standard_normal((64, 16, 14, 14)).astype(BF16)
    conv = shrew.nn.functional.conv2d
    with ExitStack() as stack:
        spies = [stack.enter_context(_spy(module, name)) for module, name in (
            (elementwise, "add_into"), (bits16, "relu"), (max_pool, "forward"),
            (max_pool, "backward"), (bits16, "relu_backward"))]
        with shrew.autocast("cpu", dtype=shrew.bfloat16):
            plain = conv(shrew.tensor(x), shrew.tensor(w))
            z = conv(shrew.tensor(x), shrew.tensor(w, requires_grad=True), shrew.tensor(b))
            z.retain_grad()
            y = shrew.nn.functional.max_pool2d(shrew.relu(z), 2)
        y.backward(shrew.tensor(g))
    assert z.dtype == y.dtype == shrew.bfloat16
    assert all(spy == [True] for spy in spies), spies
    zt = (_to_torch(plain.numpy()) + torch.tensor(b).to(torch.bfloat16).reshape(-1, 1, 1))
    _assert_same_bits(z.detach().numpy(), _from_torch(zt, BF16))
    zt = zt.detach().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        yt = torch.nn.functional.max_pool2d(torch.relu(zt), 2)
    yt.backward(_to_torch(g))
    _assert_same_bits(y.detach().numpy(), _from_torch(yt, BF16))
    _assert_same_bits(z.grad.numpy(), _from_torch(zt.grad, BF16))


def test_bfloat16_average_pooling_stays_off_onednn():
    """Average pooling rounds its sums, which oneDNN's bfloat16 kernel does in its own
    way: only max pooling takes bfloat16 there."""
    x = _with_edges((16, 8, 18, 18), BF16, 0, 0)
    avg = onednn.POOL_AVG_INCLUDE
    assert onednn.pool2d(x, avg, (2, 2), (2, 2), (0, 0)) is NotImplemented
    g = _with_edges((16, 8, 9, 9), BF16, 1, 0)
    assert onednn.pool2d_backward(g, x.shape, avg, (2, 2), (2, 2), (0, 0)) is NotImplemented
    assert onednn.pool2d(x, onednn.POOL_MAX, (2, 2), (2, 2), (0, 0)) is not NotImplemented
