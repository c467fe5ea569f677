"""The MKL path of the cpu backend (backends/cpu/mkl.py): its products against numpy's and
PyTorch's over shapes, broadcasting and memory layouts, the cpu backend's use of it,
determinism, the switch, the threads and a library that cannot load."""
from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew.backends import cpu
from shrew.backends.cpu import mkl
from support import (active_in_a_fresh_process, assert_live_where_wheels_exist,
                     needs_loadable, switched_on)

needs_mkl = needs_loadable(mkl)


mkl_on = switched_on(cpu.use_mkl)


def test_mkl_loads_where_its_wheels_exist():
    assert_live_where_wheels_exist(mkl, cpu.mkl_active)


def _close(got, want, k):
    """A product against a float64 reference, with room for a sum of k terms."""
    eps = np.finfo(got.dtype).eps
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=4 * eps * max(k, 1) * scale)


def _layout(draw, x):
    """x as one of the layouts a product meets: contiguous, transposed in memory (its last
    two dims), a slice of a wider buffer, every other element, reversed, or unaligned."""
    kind = draw(st.sampled_from(["contiguous", "transposed", "sliced", "strided", "reversed",
                                 "unaligned"]))
    if kind == "transposed" and x.ndim >= 2:
        return np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)
    if kind == "sliced":
        wide = np.zeros(x.shape[:-1] + (x.shape[-1] + 3,), x.dtype)
        wide[..., 1:1 + x.shape[-1]] = x
        return wide[..., 1:1 + x.shape[-1]]
    if kind == "strided":
        twice = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        twice[..., ::2] = x
        return twice[..., ::2]
    if kind == "reversed":
        return np.ascontiguousarray(x[..., ::-1])[..., ::-1]
    if kind == "unaligned":
        raw = np.zeros(x.nbytes + 1, np.uint8)[1:].view(x.dtype).reshape(x.shape)
        raw[...] = x
        return raw
    return x


@st.composite
def products(draw):
    """(a, b) of one float dtype with numpy matmul's shapes: 1-d operands, and batch dims
    that broadcast (sizes 1 against n, missing dims)."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    m, k, n = (draw(st.integers(1, 9)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 4), max_size=3))
    a_batch = [d if draw(st.booleans()) else 1 for d in batch]
    b_batch = [d if draw(st.booleans()) else 1 for d in batch]
    a_batch = a_batch[draw(st.integers(0, len(a_batch))):]
    b_batch = b_batch[draw(st.integers(0, len(b_batch))):]
    a_shape = (k,) if draw(st.integers(0, 5)) == 0 else (*a_batch, m, k)
    b_shape = (k,) if draw(st.integers(0, 5)) == 0 else (*b_batch, k, n)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    a = rng.standard_normal(a_shape).astype(dtype)
    b = rng.standard_normal(b_shape).astype(dtype)
    return _layout(draw, a), _layout(draw, b)


@needs_mkl
@settings(max_examples=300, deadline=None)
@given(products())
def test_products_match_numpy_and_torch(ab):
    a, b = ab
    got = mkl.matmul(a, b)
    assert got is not NotImplemented
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.shape == want.shape and got.dtype == a.dtype
    _close(got, want, a.shape[-1])
    _close(got, torch.matmul(torch.from_numpy(np.array(a)), torch.from_numpy(np.array(b)))
           .numpy().astype(np.float64), a.shape[-1])


@needs_mkl
def test_attention_heads_a_view_with_uneven_batch_strides(monkeypatch):
    """q and k as attention takes them, [B, heads, T, d] views of [B, T, heads, d]: the
    head and batch dims are no single stride, so the call lists each matrix's address."""
    rng = np.random.default_rng(1)
    q = rng.standard_normal((3, 7, 4, 8)).astype(np.float32).transpose(0, 2, 1, 3)
    k = rng.standard_normal((3, 7, 4, 8)).astype(np.float32).transpose(0, 2, 3, 1)
    listed = []
    real = mkl.Runtime.gemm_pointers
    monkeypatch.setattr(mkl.Runtime, "gemm_pointers",
                        lambda self, *args: listed.append(args[-1]) or real(self, *args))
    _close(mkl.matmul(q, k), q.astype(np.float64) @ k, 8)
    assert listed == [12]   # one call for the 3 x 4 matrices


@needs_mkl
def test_out_receives_the_product():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((5, 6))
    b = rng.standard_normal((6, 7))
    out = np.empty((5, 7))
    assert mkl.matmul(a, b, out) is out
    _close(out, a @ b, 6)


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_alpha_and_a_strided_out(dtype):
    """alpha * (a @ b) written into a view whose matrices are row-major with a leading
    dimension of their own ([B, H, T, d] heads of a [B, T, H, d] buffer), batched or
    not, and a 1-d operand's product into a strided vector."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 5, 6)).astype(dtype)
    b = rng.standard_normal((2, 3, 6, 4)).astype(dtype)
    buffer = np.full((2, 5, 3, 4), np.nan, dtype)
    out = buffer.transpose(0, 2, 1, 3)
    assert mkl.matmul(a, b, out, 0.5) is out
    _close(out, 0.5 * (a.astype(np.float64) @ b), 6)
    two_d = np.full((5, 9), np.nan, dtype)[:, 2:6]
    assert mkl.matmul(a[0, 0], b[0, 0], two_d, -2.0) is two_d
    _close(two_d, -2.0 * (a[0, 0].astype(np.float64) @ b[0, 0]), 6)
    vector = np.full((2, 3, 10), np.nan, dtype)[..., ::2]
    assert mkl.matmul(a, b[0, 0, :, 0], vector) is vector
    _close(vector, a.astype(np.float64) @ b[0, 0, :, 0], 6)
    assert mkl.matmul(a[0, 0], b[0, 0], np.empty((4, 5), dtype).T) is NotImplemented


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, dims", [
    ((1024, 300), (0,)), ((8, 128, 256), (0, 1)), ((4, 64, 200), (0,)), ((40_000, 1), (0,)),
    ((64, 16, 28, 28), (0, 2, 3)), ((64, 16, 28, 28), (2, 3)), ((300, 200), (1,)),
    ((6, 5, 40, 30), (0, 3)), ((8, 4096), (1,))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sums_around_kept_dims(dtype, shape, dims, keepdim):
    """A bias gradient's sum as products with ones: numpy's values to a sum's rounding,
    the shape numpy gives, and through the cpu backend's reduce."""
    x = np.random.default_rng(4).standard_normal(shape).astype(dtype)
    want = x.astype(np.float64).sum(dims, keepdims=keepdim)
    got = mkl.sum_around(x, dims, keepdim)
    assert got.shape == want.shape and got.dtype == dtype
    _close(got, want, x.size // math.prod(want.shape))
    backend = shrew.backends.registry.get_backend("cpu")
    np.testing.assert_array_equal(backend.reduce("sum", x, dims, keepdim), got)


def test_what_sum_around_leaves_to_numpy():
    big = np.ones((512, 128), np.float32)
    assert mkl.sum_around(np.ones((4, 4), np.float32), (0,), False) is NotImplemented  # small
    assert mkl.sum_around(big.T, (0,), False) is NotImplemented                        # layout
    assert mkl.sum_around(big.astype(np.int64), (0,), False) is NotImplemented        # dtype
    assert mkl.sum_around(big, (), False) is NotImplemented                            # no dims
    assert mkl.sum_around(big, (0, 1), False) is NotImplemented                        # all dims
    assert mkl.sum_around(np.ones((8, 64, 128), np.float32), (1,), False) \
        is NotImplemented                                                  # kept dims split
    with cpu.use_mkl(False):
        assert mkl.sum_around(big, (0,), False) is NotImplemented


@needs_mkl
@pytest.mark.parametrize("fn", ["add", "sub", "mul"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_add_sub_mul_are_numpys_bit_for_bit(fn, dtype):
    """VML's add, sub and mul: IEEE operations, so numpy's exact bits, with subnormals,
    signed zeros, infinities and NaNs among the operands."""
    rng = np.random.default_rng(5)
    tiny = np.finfo(dtype).tiny
    a = rng.standard_normal(1 << 16).astype(dtype)
    b = rng.standard_normal(1 << 16).astype(dtype)
    a[:1000] *= tiny
    b[500:1500] *= tiny
    specials = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1.0], dtype)
    a[2000:2036] = np.repeat(specials, 6)
    b[2000:2036] = np.tile(specials, 6)
    with np.errstate(all="ignore"):
        want = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[fn](a, b)
    got = mkl.binary(fn, a.reshape(256, 256), b.reshape(256, 256))
    assert got.shape == (256, 256)
    bits = np.dtype(f"i{np.dtype(dtype).itemsize}")
    assert np.array_equal(got.reshape(-1).view(bits), want.view(bits))


def _with_specials(dtype, size: int = 1 << 16) -> np.ndarray:
    """Normal values, subnormals of both signs, signed zeros, infinities and NaN."""
    x = np.random.default_rng(6).standard_normal(size).astype(dtype)
    x[:1000] *= np.finfo(dtype).tiny
    x[1000:1006] = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1.0]
    return x


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_is_numpys_maximum_bit_for_bit(dtype):
    """fdim(x, 0) on VML: numpy's max(x, 0), +0.0 for -0.0 and every negative, NaN kept,
    subnormals kept (no flush to zero)."""
    x = _with_specials(dtype).reshape(256, 256)
    got = mkl.relu(x)
    bits = np.dtype(f"i{np.dtype(dtype).itemsize}")
    assert got.shape == x.shape and got.dtype == x.dtype
    assert np.array_equal(got.view(bits), np.maximum(x, dtype(0)).view(bits))
    assert mkl.relu(x[:8]) is NotImplemented and mkl.relu(x.T) is NotImplemented
    assert mkl.relu(x.astype(np.int32)) is NotImplemented
    with cpu.use_mkl(False):
        assert mkl.relu(x) is NotImplemented


def test_what_binary_leaves_to_numpy():
    big = np.ones((256, 256), np.float32)
    assert mkl.binary("add", big[:8], big[:8]) is NotImplemented                   # small
    assert mkl.binary("div", big, big) is NotImplemented                           # not IEEE-only
    assert mkl.binary("add", big, big[:1]) is NotImplemented                       # broadcast
    assert mkl.binary("add", big.T, big) is NotImplemented                         # layout
    assert mkl.binary("add", big, big.astype(np.float64)) is NotImplemented        # mixed
    assert mkl.binary("add", big.astype(np.int32), big.astype(np.int32)) is NotImplemented
    with cpu.use_mkl(False):
        assert mkl.binary("add", big, big) is NotImplemented


@pytest.mark.parametrize("a, b", [
    (np.ones((2, 3), np.float16), np.ones((3, 2), np.float16)),        # no half GEMM
    (np.ones((2, 3), np.int64), np.ones((3, 2), np.int64)),
    (np.ones((2, 3), np.complex64), np.ones((3, 2), np.complex64)),
    (np.ones((2, 3), np.float32), np.ones((3, 2), np.float64)),        # mixed
    (np.ones((0, 3), np.float32), np.ones((3, 2), np.float32)),        # empty
    (np.ones((2, 0), np.float32), np.ones((0, 2), np.float32)),        # empty sum
    (np.ones((2, 3), np.float32), np.ones((4, 2), np.float32)),        # mismatch
    (np.ones((2, 2, 3), np.float32), np.ones((3, 3, 2), np.float32)),  # batch mismatch
])
def test_what_it_leaves_to_numpy(a, b):
    assert mkl.matmul(a, b) is NotImplemented


def test_the_cpu_backend_runs_float_products_on_mkl(monkeypatch):
    """Through shrew: float32 and float64 products (and their gradients) call MKL; with
    MKL off numpy computes them, to the same values within rounding."""
    calls = []
    real = mkl.matmul
    monkeypatch.setattr(mkl.gemm, "matmul", lambda *args: calls.append(args[0].dtype) or
                        real(*args))
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        a_np = rng.standard_normal((4, 5, 6)).astype(dtype)
        b_np = rng.standard_normal((6, 3)).astype(dtype)
        results = []
        for on in (True, False):
            with cpu.use_mkl(on):
                a = shrew.tensor(a_np, requires_grad=True)
                b = shrew.tensor(b_np, requires_grad=True)
                y = a @ b
                grads = (y * y).sum().backward()
                results.append([y.numpy(), grads[a].numpy(), grads[b].numpy()])
        for got, want in zip(*results):
            _close(got, want.astype(np.float64), 20)
    live = mkl.load_error() is None
    assert (np.dtype(np.float32) in calls and np.dtype(np.float64) in calls) == live


@needs_mkl
def test_float64_convolutions_fold_into_mkl_products(monkeypatch):
    """A float64 convolution (oneDNN serves float32 only) runs on the folded GEMMs, which
    go through the backend's gemm, products written into `out` included."""
    calls = []
    real = mkl.matmul
    monkeypatch.setattr(mkl.gemm, "matmul", lambda a, b, out=None: calls.append(out is not None)
                        or real(a, b, out))
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 16, 9, 9))    # C*kw = 48: deep enough to fold
    w = rng.standard_normal((4, 16, 3, 3))
    xt, wt = shrew.tensor(x, requires_grad=True), shrew.tensor(w, requires_grad=True)
    y = shrew.conv2d(xt, wt, padding=1)
    grads = (y * y).sum().backward()
    want = torch.nn.functional.conv2d(torch.tensor(x, requires_grad=True),
                                      torch.tensor(w), padding=1)
    np.testing.assert_allclose(y.numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert grads[xt].shape == x.shape and grads[wt].shape == w.shape
    assert True in calls and False in calls   # products into `out` and fresh ones


@needs_mkl
def test_the_same_inputs_give_the_same_bits():
    """Run to run, thread count to thread count fixed, and wherever the operands lie in
    memory (MKL's kernels may depend on alignment; these do not)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((257, 300)).astype(np.float32)
    b = rng.standard_normal((300, 129)).astype(np.float32)
    old = shrew.get_num_threads()
    try:
        for threads in (1, 2):
            shrew.set_num_threads(threads)
            first = mkl.matmul(a, b)
            for offset in range(1, 16):
                raw = np.empty(a.size + offset, np.float32)[offset:].reshape(a.shape)
                raw[...] = a
                assert np.array_equal(mkl.matmul(raw, b), first)
    finally:
        shrew.set_num_threads(old)


def test_the_switch():
    assert cpu.set_mkl(False) is True
    assert not cpu.mkl_active()
    assert mkl.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32)) \
        is NotImplemented
    with cpu.use_mkl(True):
        assert cpu.mkl_active() == (mkl.load_error() is None)
    assert not cpu.mkl_active()
    assert cpu.set_mkl(True) is False


@pytest.mark.parametrize("value, active", [("0", False), ("off", False), ("1", True)])
def test_the_environment_variable(value, active):
    out = active_in_a_fresh_process("SHREW_CPU_MKL", value, "mkl_active")
    assert out == str(active and mkl.load_error() is None)


def test_a_library_that_cannot_load_leaves_the_products_to_numpy():
    env = {**os.environ, "SHREW_MKL_LIBRARY": "/nonexistent/libmkl_rt.so.2"}
    code = ("import numpy as np, shrew; from shrew.backends.cpu import mkl; "
            "print(mkl.load_error()); "
            "print((shrew.ones(2, 3) @ shrew.ones(3, 2)).tolist())")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True).stdout.splitlines()
    assert "/nonexistent/libmkl_rt.so.2" in out[0]
    assert out[1] == "[[3.0, 3.0], [3.0, 3.0]]"


@needs_mkl
def test_openblas_keeps_one_thread_and_mkl_follows_set_num_threads():
    """While MKL serves the products numpy's OpenBLAS (and scipy's) stay on one thread, so
    that their idle workers do not spin on the cores MKL's and oneDNN's OpenMP threads
    share; MKL's count is shrew's."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import scipy.linalg  # noqa: F401  (scipy's own OpenBLAS, loaded after MKL)
    old = shrew.get_num_threads()
    try:
        for n in (1, 2):
            shrew.set_num_threads(n)
            pools = {(p["internal_api"], p["num_threads"])
                     for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}
            assert ("mkl", n) in pools
            assert all(threads == 1 for api, threads in pools if api == "openblas")
            assert mkl.get_num_threads() == n
    finally:
        shrew.set_num_threads(old)


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("alpha", [1.0, -0.01, 3.5])
def test_in_place_adds_of_large_arrays_run_as_one_axpy(dtype, alpha):
    """add_ (an optimizer's update, a gradient accumulated): dst += alpha * src in one
    rounding, as PyTorch's fused add; at alpha 1 the very bits of numpy's +=."""
    rng = np.random.default_rng(6)
    n = cpu.thresholds.AXPY_MIN_SIZE + 7
    dst, src = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    want = dst.astype(np.float64) + alpha * src.astype(np.float64)
    numpy_sum = dst + src
    t_dst = torch.from_numpy(dst.copy())
    t_dst.add_(torch.from_numpy(src), alpha=alpha)
    assert mkl.axpy(dst, src, alpha)
    _close(dst, want, 1)
    _close(t_dst.numpy(), want, 1)
    if alpha == 1:
        assert np.array_equal(dst, numpy_sum)


def test_what_axpy_leaves_to_numpy():
    big = cpu.thresholds.AXPY_MIN_SIZE * 2
    x = np.ones(big, np.float32)
    assert not mkl.axpy(np.ones(16, np.float32), np.ones(16, np.float32), 2.0)    # small
    assert not mkl.axpy(x, x, 2.0)                                                # aliased
    assert not mkl.axpy(x[1:], x[:-1], 2.0)                                       # overlapping
    assert not mkl.axpy(np.ones(big, np.float16), np.ones(big, np.float16), 2.0)  # dtype
    assert not mkl.axpy(np.ones((big, 2))[:, 0], np.ones(big), 2.0)              # strided
    assert not mkl.axpy(np.ones(big, np.float32), np.ones(big, np.float64), 2.0)  # mixed


def _sgd_steps(lib, w0, x):
    """Three SGD steps with momentum on tanh(x @ w).sum(), in shrew or torch (one code)."""
    w = lib.tensor(w0, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.01, momentum=0.9)
    for _ in range(3):
        opt.zero_grad()
        (lib.tensor(x) @ w).tanh().sum().backward()
        opt.step()
    return w.detach().numpy()


def test_sgd_steps_through_axpy_match_torch():
    """Through shrew's optimizer (p.add_(grad, alpha=-lr)), with MKL on and off, against
    PyTorch's SGD on the same parameters and gradients."""
    rng = np.random.default_rng(7)
    w0 = rng.standard_normal((300, 200)).astype(np.float32)
    x = rng.standard_normal((16, 300)).astype(np.float32)
    want = _sgd_steps(torch, w0, x)
    for on in (True, False):
        with cpu.use_mkl(on):
            np.testing.assert_allclose(_sgd_steps(shrew, w0, x), want, rtol=1e-5, atol=2e-6)


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_abs_sum_and_has_nan(dtype):
    """sum(|x|) is NaN exactly where x holds a NaN, inf for an inf: the cpu backend's cheap
    test before a oneDNN call that would mishandle them."""
    x = np.random.default_rng(8).standard_normal(50_000).astype(dtype)
    np.testing.assert_allclose(mkl.abs_sum(x), np.abs(x.astype(np.float64)).sum(), rtol=1e-4)
    assert not mkl.has_nan(x)
    for value, nan in ((np.inf, False), (-np.inf, False), (np.nan, True)):
        for where in (0, 12345, -1):
            y = x.copy()
            y[where] = value
            assert mkl.has_nan(y) == nan
            assert np.isnan(mkl.abs_sum(y)) == nan and not np.isfinite(mkl.abs_sum(y))
    strided = np.repeat(x, 2)[::2]
    assert mkl.abs_sum(strided) is None and not mkl.has_nan(strided)   # numpy's pass
    with cpu.use_mkl(False):
        assert mkl.abs_sum(x) is None


@needs_mkl
def test_products_from_several_threads_at_once():
    """ctypes releases the GIL during MKL's call: threads multiplying at once each get
    their own product, the same bits as alone."""
    import threading
    rng = np.random.default_rng(9)
    pairs = [(rng.standard_normal((200, 150)).astype(np.float32),
              rng.standard_normal((150, 120)).astype(np.float32)) for _ in range(4)]
    alone = [mkl.matmul(a, b) for a, b in pairs]
    results: dict = {}

    def work(i):
        a, b = pairs[i]
        results[i] = [mkl.matmul(a, b) for _ in range(20)]
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(got, alone[i]) for i in range(4) for got in results[i])


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dst_shape, src_shape", [
    ((1024, 300), (1, 300)), ((8, 128, 256), (1, 1, 256)), ((64, 16, 28, 28), (1, 16, 1, 1)),
    ((4, 8, 40, 30), (4, 8, 1, 1)), ((4, 8, 40, 30), (1, 8, 40, 1)), ((300, 200), (300, 1))])
def test_bias_adds_are_numpys_bit_for_bit(dtype, dst_shape, src_shape):
    """A bias broadcast into a layer's output as one rank-1 update: numpy's exact bits
    (each element gets bias * 1 added, one rounding), non-finite values included."""
    rng = np.random.default_rng(9)
    dst = rng.standard_normal(dst_shape).astype(dtype)
    src = rng.standard_normal(src_shape).astype(dtype)
    dst.reshape(-1)[:3] = [np.inf, np.nan, -0.0]
    src.reshape(-1)[:1] = [-np.inf]
    with np.errstate(invalid="ignore"):
        want = dst + src
    assert mkl.add_broadcast_(dst, src)
    bits = np.dtype(f"i{np.dtype(dtype).itemsize}")
    assert np.array_equal(dst.view(bits), want.view(bits))


def test_what_add_broadcast_leaves_to_numpy():
    big = np.ones((512, 128), np.float32)
    assert not mkl.add_broadcast_(np.ones((4, 4), np.float32), np.ones((1, 4), np.float32))
    assert not mkl.add_broadcast_(big.T, np.ones((1, 512), np.float32))         # layout
    assert not mkl.add_broadcast_(big, np.ones((1, 128)))                        # dtype
    assert not mkl.add_broadcast_(np.ones((8, 64, 128), np.float32),
                                  np.ones((8, 1, 128), np.float32))              # two runs
    assert not mkl.add_broadcast_(big, np.ones((1, 1), np.float32))             # no sized dim
    assert not mkl.add_broadcast_(big, big[:1])                                  # overlapping
    with cpu.use_mkl(False):
        assert not mkl.add_broadcast_(big, np.ones((1, 128), np.float32))
