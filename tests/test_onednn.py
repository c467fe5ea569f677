"""The oneDNN path of the cpu backend (backends/cpu/onednn/): the binding against PyTorch
(with dilation and groups), the cpu backend's use of it against its numpy code,
determinism, the cache, the switch and the threads."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import shrew
from shrew.backends import cpu
from shrew.backends.cpu import onednn
from support import (active_in_a_fresh_process, assert_live_where_wheels_exist,
                     needs_loadable, switched_on)

F = torch.nn.functional

needs_onednn = needs_loadable(onednn)


onednn_on = switched_on(cpu.use_onednn)


def test_onednn_loads_where_its_wheels_exist():
    assert_live_where_wheels_exist(onednn, cpu.onednn_active)


def _close(got, want, terms):
    """float32 results against PyTorch's, with room for a different summation order."""
    tol = 1e-6 * max(terms, 1)
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * scale)


@st.composite
def convs(draw):
    groups = draw(st.integers(1, 3))
    c, o = groups * draw(st.integers(1, 4)), groups * draw(st.integers(1, 3))
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = (draw(st.integers(0, 3)), draw(st.integers(0, 3)))
    span = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    hw = tuple(draw(st.integers(max(1, s - 2 * p), s + 8)) for s, p in zip(span, padding))
    n = draw(st.integers(1, 3))
    return (n, c, *hw), (o, c // groups, *kernel), stride, padding, dilation, groups


@needs_onednn
@given(conv=convs(), seed=st.integers(0, 2**16))
def test_convolution_matches_torch(conv, seed):
    x_shape, w_shape, stride, padding, dilation, groups = conv
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ty = F.conv2d(tx, tw, None, stride, padding, dilation, groups)
    g = rng.standard_normal(ty.shape).astype(np.float32)
    ty.backward(torch.tensor(g))
    args = (stride, padding, dilation, groups)
    y = onednn.conv2d(x, w, *args)
    dx = onednn.conv2d_backward_data(g, w, x.shape, *args)
    dw = onednn.conv2d_backward_weights(x, g, w.shape, *args)
    _close(y, ty.detach().numpy(), w[0].size)
    _close(dx, tx.grad.numpy(), w.shape[0] * w[0, 0].size)
    _close(dw, tw.grad.numpy(), g.shape[0] * g[0, 0].size)


@needs_onednn
@pytest.mark.parametrize("stride, padding, dilation, groups",
                         [(1, 0, 1, 1), (2, 3, 1, 1), (1, 2, 3, 2), (3, 1, 2, 4)])
def test_conv1d_as_a_conv2d_one_row_high_matches_torch(stride, padding, dilation, groups):
    rng = np.random.default_rng(groups)
    x = rng.standard_normal((2, 8, 23)).astype(np.float32)
    w = rng.standard_normal((4, 8 // groups, 3)).astype(np.float32)
    want = F.conv1d(torch.tensor(x), torch.tensor(w), None, stride, padding, dilation, groups)
    got = onednn.conv2d(x[:, :, None], w[:, :, None], (1, stride), (0, padding),
                        (1, dilation), groups)
    _close(got[:, :, 0], want.numpy(), w[0].size)


@needs_onednn
@pytest.mark.parametrize("alg", ["max", "avg_include", "avg_exclude"])
@pytest.mark.parametrize("x_shape, kernel, stride, padding",
                         [((2, 3, 8, 8), (2, 2), (2, 2), (0, 0)),
                          ((2, 3, 9, 7), (3, 2), (2, 1), (1, 1)),
                          ((1, 2, 5, 6), (3, 3), (1, 2), (1, 0))])
def test_pooling_matches_torch(alg, x_shape, kernel, stride, padding):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(x_shape).astype(np.float32)
    x[0, 0, :2, :2] = 1.5   # ties: each picks its first maximum in the window
    tx = torch.tensor(x, requires_grad=True)
    if alg == "max":
        code, ty = onednn.POOL_MAX, F.max_pool2d(tx, kernel, stride, padding)
    else:
        code = onednn.POOL_AVG_INCLUDE if alg == "avg_include" else onednn.POOL_AVG_EXCLUDE
        ty = F.avg_pool2d(tx, kernel, stride, padding, count_include_pad=alg == "avg_include")
    g = rng.standard_normal(ty.shape).astype(np.float32)
    ty.backward(torch.tensor(g))
    y, workspace = onednn.pool2d(x, code, kernel, stride, padding)
    assert (workspace is not None) == (alg == "max")
    dx = onednn.pool2d_backward(g, x.shape, code, kernel, stride, padding, workspace)
    _close(y, ty.detach().numpy(), kernel[0] * kernel[1])
    _close(dx, tx.grad.numpy(), kernel[0] * kernel[1])


@needs_onednn
def test_max_pooling_backward_needs_the_workspace():
    x = np.ones((1, 1, 4, 4), np.float32)
    onednn.pool2d(x, onednn.POOL_MAX, (2, 2), (2, 2), (0, 0))
    with pytest.raises(onednn.OneDNNError, match="workspace"):
        onednn.pool2d_backward(np.ones((1, 1, 2, 2), np.float32), x.shape, onednn.POOL_MAX,
                               (2, 2), (2, 2), (0, 0))


@needs_onednn
def test_repeated_calls_give_the_same_bits():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((16, 16, 14, 14)).astype(np.float32)
    w = rng.standard_normal((32, 16, 5, 5)).astype(np.float32)
    g = rng.standard_normal((16, 32, 14, 14)).astype(np.float32)

    def once():
        return (onednn.conv2d(x, w, (1, 1), (2, 2)),
                onednn.conv2d_backward_data(g, w, x.shape, (1, 1), (2, 2)),
                onednn.conv2d_backward_weights(x, g, w.shape, (1, 1), (2, 2)))

    first = once()
    for _ in range(3):
        assert all(np.array_equal(a, b) for a, b in zip(first, once()))


def _cnn_grads(dtype):
    """Loss and gradients of a small convolutional net on the default cpu device."""
    rng = np.random.default_rng(2)
    x = shrew.tensor(rng.standard_normal((4, 3, 12, 12)).astype(dtype), requires_grad=True)
    w1 = shrew.tensor(rng.standard_normal((8, 3, 3, 3)).astype(dtype) / 5, requires_grad=True)
    w2 = shrew.tensor(rng.standard_normal((6, 8, 1, 5)).astype(dtype) / 6, requires_grad=True)
    w3 = shrew.tensor(rng.standard_normal((5, 6, 3)).astype(dtype) / 4, requires_grad=True)
    h = shrew.conv2d(x, w1, 1, 1).relu()
    h = shrew.avg_pool2d(h, 2, padding=1)
    h = shrew.conv2d(h, w2, (1, 2), (0, 2)).tanh()
    h = shrew.conv1d(h.reshape(4, 6, -1), w3, 2, 1)
    loss = (h * h).sum()
    grads = loss.backward()
    return [loss.numpy()] + [grads[t].numpy() for t in (x, w1, w2, w3)]


@needs_onednn
def test_the_cpu_backend_runs_float32_on_onednn_and_agrees_with_numpy(monkeypatch):
    calls = []
    for module, name in ((onednn.conv, "conv2d"), (onednn.conv, "conv2d_backward_data"),
                         (onednn.conv, "conv2d_backward_weights"), (onednn.pool, "pool2d"),
                         (onednn.pool, "pool2d_backward")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name,
                            lambda *a, real=real, name=name: calls.append(name) or real(*a))
    fast = _cnn_grads(np.float32)
    assert sorted(set(calls)) == ["conv2d", "conv2d_backward_data", "conv2d_backward_weights",
                                  "pool2d", "pool2d_backward"]
    with cpu.use_onednn(False):
        reference = _cnn_grads(np.float32)
    for got, want in zip(fast, reference):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * np.abs(want).max())
    assert all(np.array_equal(a, b) for a, b in zip(fast, _cnn_grads(np.float32)))


@needs_onednn
@pytest.mark.parametrize("mkl_on", [False, True])
def test_shallow_inputs_take_the_weight_gradient_from_the_lowering(monkeypatch, mkl_on):
    """Beside OpenBLAS's GEMMs oneDNN's weight gradient is slow on few input channels
    (cnn_step's first layer): there, MKL off, the whole backward is the core's; the
    forward stays on oneDNN.  With MKL's GEMMs on oneDNN's threads oneDNN serves it."""
    calls = []
    for name in ("conv2d", "conv2d_backward_data", "conv2d_backward_weights"):
        real = getattr(onednn.conv, name)
        monkeypatch.setattr(onednn.conv, name,
                            lambda *a, real=real, name=name: calls.append(name) or real(*a))
    rng = np.random.default_rng(3)
    x_np = rng.standard_normal((4, 1, 10, 10)).astype(np.float32)
    w_np = rng.standard_normal((6, 1, 5, 5)).astype(np.float32)
    x, w = shrew.tensor(x_np, requires_grad=True), shrew.tensor(w_np, requires_grad=True)
    with cpu.use_mkl(mkl_on):
        shrew.conv2d(x, w, 1, 2).sum().backward()
    if mkl_on and cpu.mkl.load_error() is None:
        assert calls == ["conv2d", "conv2d_backward_data", "conv2d_backward_weights"]
    else:
        assert calls == ["conv2d"]
    tx, tw = torch.tensor(x_np, requires_grad=True), torch.tensor(w_np, requires_grad=True)
    F.conv2d(tx, tw, None, 1, 2).sum().backward()
    _close(x.grad.numpy(), tx.grad.numpy(), 6 * 25)
    _close(w.grad.numpy(), tw.grad.numpy(), 4 * 100)


def _count_calls(monkeypatch, names):
    """Record the names of the onednn functions in `names` as the cpu backend calls them
    (each patched in the onednn module that defines it)."""
    calls = []
    for name in names:
        real = getattr(onednn, name)
        monkeypatch.setattr(sys.modules[real.__module__], name,
                            lambda *a, real=real, name=name: calls.append(name) or real(*a))
    return calls


def _grouped_dilated(x, w, g, kind, stride, padding, dilation, groups, create_graph=False,
                     grads=True):
    """conv2d, conv1d (x and w one row high, squeezed) or conv_transpose2d of shrew's
    or torch's tensors, and the gradients of sum(y * g)."""
    lib = shrew if isinstance(x, shrew.Tensor) else torch
    conv = {"conv2d": lambda: lib.nn.functional.conv2d(x, w, None, stride, padding, dilation,
                                                       groups),
            "conv1d": lambda: lib.nn.functional.conv1d(
                x[:, :, 0], w[:, :, 0], None, stride[1], padding[1], dilation[1], groups),
            "conv_transpose2d": lambda: lib.nn.functional.conv_transpose2d(
                x, w, None, stride, padding, 0, groups, dilation)}[kind]
    y = conv()
    if not grads:
        return (y,)
    loss = (y * lib.tensor(g[:, :, 0] if kind == "conv1d" else g)).sum()
    if lib is torch:
        gx, gw = torch.autograd.grad(loss, (x, w), create_graph=create_graph)
    else:
        grads = loss.backward(create_graph=create_graph)
        gx, gw = grads[x], grads[w]
    return y, gx, gw


def _output_shape(x, w, kind, *args):
    """The shape of the output, one row high for conv1d too."""
    y = _grouped_dilated(torch.tensor(x), torch.tensor(w), None, kind, *args, grads=False)[0]
    return tuple(y.shape) if kind != "conv1d" else (y.shape[0], y.shape[1], 1, y.shape[2])


_GROUPED = [("conv2d", (1, 1), (1, 1), (2, 2), 2), ("conv2d", (2, 1), (2, 0), (1, 3), 4),
            ("conv2d", (1, 2), (0, 1), (1, 1), 8), ("conv1d", (1, 2), (0, 3), (1, 2), 2),
            ("conv_transpose2d", (2, 2), (1, 0), (2, 1), 2)]


@needs_onednn
@pytest.mark.parametrize("kind, stride, padding, dilation, groups", _GROUPED)
def test_grouped_and_dilated_convolutions_run_on_onednn(monkeypatch, kind, stride, padding,
                                                        dilation, groups):
    """A dilated or grouped convolution is one oneDNN call each way (not the composition of
    one convolution per group with a zero-dilated kernel), agrees with torch, and with the
    composition that runs with oneDNN off."""
    rng = np.random.default_rng(groups)
    x = rng.standard_normal((2, 8, 1 if kind == "conv1d" else 11, 13)).astype(np.float32)
    kh = 1 if kind == "conv1d" else 3
    w_shape = (8, 16 // groups, kh, 3) if kind == "conv_transpose2d" else (16, 8 // groups, kh, 3)
    w = rng.standard_normal(w_shape).astype(np.float32)
    g = rng.standard_normal(_output_shape(x, w, kind, stride, padding, dilation, groups))
    g = g.astype(np.float32)
    want = _grouped_dilated(torch.tensor(x, requires_grad=True),
                            torch.tensor(w, requires_grad=True), g, kind, stride, padding,
                            dilation, groups)
    calls = _count_calls(monkeypatch, ("conv2d", "conv2d_backward_data",
                                       "conv2d_backward_weights"))
    got = _grouped_dilated(shrew.tensor(x, requires_grad=True),
                           shrew.tensor(w, requires_grad=True), g, kind, stride, padding,
                           dilation, groups)
    assert calls == ["conv2d", "conv2d_backward_data", "conv2d_backward_weights"]
    with cpu.use_onednn(False):
        composed = _grouped_dilated(shrew.tensor(x, requires_grad=True),
                                    shrew.tensor(w, requires_grad=True), g, kind, stride,
                                    padding, dilation, groups)
    terms = w[0].size * max(dilation) * 4
    for ours, ref, theirs in zip(got, composed, want):
        _close(ours.numpy(), theirs.detach().numpy(), terms)
        _close(ours.numpy(), ref.numpy(), terms)


@needs_onednn
@pytest.mark.parametrize("kind, stride, padding, dilation, groups", _GROUPED[1:3] + _GROUPED[4:])
def test_grouped_and_dilated_second_derivatives_and_a_backward_without_onednn(
        kind, stride, padding, dilation, groups):
    """Where the forward ran on oneDNN but the backward cannot (create_graph=True, or the
    path switched off in between), the gradient is the composition's, recorded: first and
    second derivatives agree with torch's."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 8, 9, 10)).astype(np.float32)
    w_shape = (8, 16 // groups, 3, 2) if kind == "conv_transpose2d" else (16, 8 // groups, 3, 2)
    w = rng.standard_normal(w_shape).astype(np.float32)
    args = (kind, stride, padding, dilation, groups)
    g = rng.standard_normal(_output_shape(x, w, *args)).astype(np.float32)
    v = rng.standard_normal(x.shape).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    _, tgx, tgw = _grouped_dilated(tx, tw, g, *args, create_graph=True)
    t_hx, t_hw = torch.autograd.grad(((tgx * torch.tensor(v)).sum() + (tgw ** 2).sum()),
                                     (tx, tw))
    sx, sw = shrew.tensor(x, requires_grad=True), shrew.tensor(w, requires_grad=True)
    _, gx, gw = _grouped_dilated(sx, sw, g, *args, create_graph=True)
    hv = ((gx * shrew.tensor(v)).sum() + (gw ** 2).sum()).backward()
    terms = w[0].size * max(dilation) * 4
    for ours, theirs in ((gx, tgx), (gw, tgw), (hv[sx], t_hx), (hv[sw], t_hw)):
        _close(ours.numpy(), theirs.detach().numpy(), terms * terms)
    sx, sw = shrew.tensor(x, requires_grad=True), shrew.tensor(w, requires_grad=True)
    y = _grouped_dilated(sx, sw, g, *args, grads=False)[0]
    with cpu.use_onednn(False):
        grads = (y * shrew.tensor(g)).sum().backward()
    _close(grads[sx].numpy(), tgx.detach().numpy(), terms)
    _close(grads[sw].numpy(), tgw.detach().numpy(), terms)


@needs_onednn
def test_float64_and_float16_stay_on_numpy():
    """float64 is the bitwise reference: the switch changes none of its bits; float16
    declines (no oneDNN float16 kernels on AVX2 machines, no float16 matmul kernel without
    AVX512-FP16: onednn/matmul.py) and runs numpy's code too."""
    before = onednn.cache_info()["entries"]
    half = () if onednn.matmul.serves(np.dtype(np.float16)) else (np.float16,)
    for dtype in (np.float64, *half):
        on = _cnn_grads(dtype)
        with cpu.use_onednn(False):
            off = _cnn_grads(dtype)
        assert all(np.array_equal(a, b) for a, b in zip(on, off))
    assert onednn.cache_info()["entries"] == before


@needs_onednn
def test_empty_batches_decline():
    x, w = np.zeros((0, 3, 5, 5), np.float32), np.zeros((2, 3, 3, 3), np.float32)
    assert onednn.conv2d(x, w) is NotImplemented
    assert shrew.conv2d(shrew.tensor(x), shrew.tensor(w)).shape == (0, 2, 3, 3)


@needs_onednn
def test_the_cache_is_bounded_and_frees_what_it_evicts(monkeypatch):
    onednn.clear_cache()
    monkeypatch.setattr(onednn.primitive, "CACHE_SIZE", 3)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    for size in range(4, 10):
        x = rng.standard_normal((1, 2, size, size)).astype(np.float32)
        want = F.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
        _close(onednn.conv2d(x, w, (1, 1), (1, 1)), want, w[0].size)
        assert onednn.cache_info() == {"entries": min(size - 3, 3), "capacity": 3}
    # The most recently used entries survive; a hit moves an entry to the end.
    keys = list(onednn.primitive._cache)
    assert [k[1][2] for k in keys] == [7, 8, 9]
    onednn.conv2d(rng.standard_normal((1, 2, 7, 7)).astype(np.float32), w, (1, 1), (1, 1))
    assert [k[1][2] for k in onednn.primitive._cache] == [8, 9, 7]
    onednn.clear_cache()
    assert onednn.cache_info()["entries"] == 0


def test_the_switch():
    assert cpu.set_onednn(False) is True
    assert not cpu.onednn_active()
    with cpu.use_onednn(True):
        assert cpu.onednn_active() == (onednn.load_error() is None)
    assert not cpu.onednn_active()
    assert cpu.set_onednn(True) is False
    x = np.ones((1, 1, 3, 3), np.float32)
    with cpu.use_onednn(False):
        assert onednn.conv2d(x, x) is NotImplemented


@pytest.mark.parametrize("value, active", [("0", False), ("off", False), ("1", True)])
def test_the_environment_variable(value, active):
    out = active_in_a_fresh_process("SHREW_CPU_ONEDNN", value, "onednn_active")
    assert out == str(active and onednn.load_error() is None)


@needs_onednn
def test_threads_follow_the_setting():
    old = cpu.get_num_threads()
    try:
        cpu.set_num_threads(1)
        assert cpu.get_num_threads() == 1
        rng = np.random.default_rng(4)
        x = rng.standard_normal((8, 8, 10, 10)).astype(np.float32)
        w = rng.standard_normal((8, 8, 3, 3)).astype(np.float32)
        one = onednn.conv2d(x, w, (1, 1), (1, 1))
        cpu.set_num_threads(2)
        assert cpu.get_num_threads() == 2
        _close(onednn.conv2d(x, w, (1, 1), (1, 1)), one, w[0].size)
    finally:
        cpu.set_num_threads(old)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(shrew.ShrewError, match="set_num_threads"):
            cpu.set_num_threads(bad)


def test_omp_num_threads_sets_the_default():
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", "from shrew.backends import cpu; "
                          "print(cpu.get_num_threads())"], env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    assert out == ("1" if onednn.load_error() is None else "None")


@pytest.mark.parametrize("mkl", ["1", "0"])
@pytest.mark.parametrize("policy", [None, "ACTIVE"])
def test_idle_openmp_threads_sleep_where_openblas_runs_the_products(policy, mkl):
    """Where OpenBLAS runs the GEMMs (MKL off or absent), oneDNN's idle threads sleep, so
    as not to hold the cores OpenBLAS's need; where MKL shares them they keep libgomp's
    default; a policy the user set is kept either way."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["SHREW_CPU_MKL"] = mkl
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, "-c", "import os; from shrew.backends import cpu; "
                          "cpu.onednn_active(); print(os.environ.get('OMP_WAIT_POLICY'))"],
                         env=env, check=True, capture_output=True, text=True).stdout.strip()
    loads = onednn.load_error() is None
    mkl_serves = mkl == "1" and cpu.mkl.load_error() is None
    assert out == (policy or ("PASSIVE" if loads and not mkl_serves else "None"))


LARGE = cpu.thresholds.MIN_ELEMENTWISE_SIZE   # elementwise calls below it stay on numpy


@needs_onednn
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape, dim", [((4, 2, 64, 64), 3), ((LARGE // 100 + 1, 100, 1), 1),
                                        ((4, 2, 64, 64), 1)])
def test_softmax_matches_torch_and_numpy(monkeypatch, log, shape, dim):
    """softmax and log_softmax along the innermost dim run on oneDNN; along an outer dim,
    on numpy."""
    calls = []
    name = "log_softmax" if log else "softmax"
    real = getattr(onednn, name)
    monkeypatch.setattr(onednn.elementwise, name, lambda *a: calls.append(a[1:]) or real(*a))
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32) * 4
    np.moveaxis(x, dim, -1)[0, ..., 5:] = -np.inf     # a causal mask's -inf
    be = cpu.CPUBackend()
    got = be.softmax(x, dim, log)
    want = (F.log_softmax if log else F.softmax)(torch.tensor(x), dim).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with cpu.use_onednn(False):
        np.testing.assert_allclose(got, be.softmax(x, dim, log), rtol=1e-5, atol=1e-6)
    innermost = all(n == 1 for n in shape[dim + 1:])
    assert calls[:1] == [(dim,)]
    assert (real(x, dim) is NotImplemented) != innermost   # outer dims: numpy's code


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf inputs, on purpose
@needs_onednn
def test_log_softmax_leaves_rows_without_a_finite_max_to_numpy_as_torch_has_them():
    """A NaN, a +inf or a row masked whole makes oneDNN's log_softmax decline, and numpy's
    code gives PyTorch's NaNs; rows of finite values with some -inf (a mask) stay on
    oneDNN, within float32 rounding of PyTorch, its -inf exactly where PyTorch's are."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((LARGE // 256 + 1, 256)) * 30).astype(np.float32)
    x[:, 200:] = -np.inf
    x[1, 3] = -1e30
    got = onednn.log_softmax(x, 1)
    want = F.log_softmax(torch.tensor(x), 1).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    assert np.array_equal(got == -np.inf, want == -np.inf)
    for row, value in ((3, np.nan), (4, np.inf)):
        bad = x.copy()
        bad[row, 7] = value
        assert onednn.log_softmax(bad, 1) is NotImplemented
    bad[5] = -np.inf
    assert onednn.log_softmax(bad, 1) is NotImplemented
    got = cpu.CPUBackend().softmax(bad, 1, True)
    want = F.log_softmax(torch.tensor(bad), 1).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[6:], want[6:], rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf inputs, on purpose
@needs_onednn
def test_softmax_carries_a_nan_to_its_whole_row_as_torch_does():
    x = np.zeros((LARGE // 64, 64), np.float32)
    x[3, 10] = np.nan
    x[5] = -np.inf   # all masked: NaN too
    got = cpu.CPUBackend().softmax(x, 1, False)
    want = F.softmax(torch.tensor(x), 1).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[[3, 5]]).all() and not np.isnan(np.delete(got, [3, 5], 0)).any()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf inputs, on purpose
@needs_onednn
@pytest.mark.parametrize("fn, approximate", [("gelu", "none"), ("gelu_tanh", "tanh")])
def test_gelu_matches_torch(fn, approximate):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(LARGE + 7) * 3).astype(np.float32)
    x[:9] = [np.inf, -np.inf, np.nan, 1e10, -1e10, 20, -20, -5, 0]
    got = cpu.CPUBackend().unary(fn, x)
    want = F.gelu(torch.tensor(x), approximate=approximate).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    small = x[:100]   # below MIN_ELEMENTWISE_SIZE: numpy's code, the same bits as off
    on = cpu.CPUBackend().unary(fn, small)
    with cpu.use_onednn(False):
        assert np.array_equal(on, cpu.CPUBackend().unary(fn, small), equal_nan=True)


@needs_onednn
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradient_matches_torch(monkeypatch, approximate):
    """GELU's gradient rule multiplies by its derivative, a unary function the cpu backend
    takes from oneDNN's eltwise backward on large float32 arrays (with an output gradient
    of ones), under create_graph, where the product stays a recorded operation; a plain
    backward runs that eltwise backward on the gradient itself (FastGrad)."""
    calls = _count_calls(monkeypatch, ("eltwise_derivative", "eltwise_backward"))
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(LARGE + 7) * 3).astype(np.float32)
    x[:9] = [np.inf, -np.inf, np.nan, 1e10, -1e10, 20, -20, -5, 0]
    g = rng.standard_normal(x.shape).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    F.gelu(tx, approximate=approximate).backward(torch.tensor(g))
    want = tx.grad.numpy()
    for create_graph in (False, True):
        calls.clear()
        sx = shrew.tensor(x, requires_grad=True)
        got = (shrew.nn.functional.gelu(sx, approximate=approximate) * shrew.tensor(g)).sum()
        got = got.backward(create_graph=create_graph)[sx].numpy()
        assert calls == (["eltwise_derivative"] if create_graph else ["eltwise_backward"])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert np.array_equal(np.isnan(got), np.isnan(want))


def _fused_gradient_case(kind):
    """(shrew function, torch function, input) of a FastGrad gradient on a large input."""
    rng = np.random.default_rng(11)
    if kind in ("softmax", "log_softmax"):
        x = (rng.standard_normal((8, 4, 64, 64)) * 3).astype(np.float32)
        x[..., 40:] = -np.inf                   # a causal mask's -inf
        if kind == "softmax":
            x[0, 0, 0] = -np.inf                # a row masked whole: NaN, as torch
        return (lambda t: getattr(t, kind)(-1)), (lambda t: getattr(t, kind)(-1)), x
    if kind.startswith("layer_norm"):
        shape = (16, 8, 32, 12) if kind.endswith("2") else (64, 24, 96)
        ndims = 2 if kind.endswith("2") else 1
        w = rng.standard_normal(shape[-ndims:]).astype(np.float32)
        b = rng.standard_normal(shape[-ndims:]).astype(np.float32)
        x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
        x[0, 0] = np.nan
        if kind == "layer_norm_plain":   # standardize's gradient (without weight or bias)
            return (lambda t: shrew.nn.functional.layer_norm(t, shape[-1:]),
                    lambda t: F.layer_norm(t, shape[-1:]), x)
        return (lambda t: shrew.nn.functional.layer_norm(t, shape[-ndims:], shrew.tensor(w),
                                                         shrew.tensor(b)),
                lambda t: F.layer_norm(t, shape[-ndims:], torch.tensor(w), torch.tensor(b)),
                x)
    if kind == "relu":
        x = rng.standard_normal((64, 16, 28, 28)).astype(np.float32)
        x[0, 0, 0, :4] = [0, np.nan, np.inf, -np.inf]
        return shrew.relu, torch.relu, x
    approximate = "tanh" if kind == "gelu_tanh" else "none"
    x = (rng.standard_normal(LARGE + 7) * 3).astype(np.float32)
    return (lambda t: shrew.nn.functional.gelu(t, approximate=approximate),
            lambda t: F.gelu(t, approximate=approximate), x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN inputs, on purpose
@needs_onednn
@pytest.mark.parametrize("kind, fused", [("softmax", "softmax_backward"),
                                         ("log_softmax", "softmax_backward"),
                                         ("layer_norm_plain", "standardized_backward"),
                                         ("layer_norm", "layer_norm_affine_backward"),
                                         ("layer_norm2", "layer_norm_affine_backward"),
                                         ("gelu", "eltwise_backward"),
                                         ("gelu_tanh", "eltwise_backward"),
                                         ("relu", "relu_backward")])
def test_fused_gradients_match_torch_and_numpy(monkeypatch, kind, fused):
    """In a plain backward the gradients of softmax, log-softmax, layer norm and GELU are
    one oneDNN call each (base.FastGrad); they match PyTorch's and the core's own rules
    (oneDNN off, and under create_graph, where they stay recorded operations)."""
    calls = []   # the calls oneDNN served
    real = getattr(onednn, fused)
    monkeypatch.setattr(onednn.elementwise, fused, lambda *a: (lambda out: calls.append(
        out is not NotImplemented) or out)(real(*a)))
    fn, torch_fn, x = _fused_gradient_case(kind)
    g = np.random.default_rng(12).standard_normal(x.shape).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    torch_fn(tx).backward(torch.tensor(g))
    want = tx.grad.numpy()
    got = {}
    for label, onednn_on, create_graph in (("fused", True, False), ("numpy", False, False),
                                           ("graph", True, True)):
        calls.clear()
        with cpu.use_onednn(onednn_on):
            sx = shrew.tensor(x, requires_grad=True)
            loss = (fn(sx) * shrew.tensor(g)).sum()
            got[label] = loss.backward(create_graph=create_graph)[sx].numpy()
        assert any(calls) == (label == "fused"), (label, calls)
    for label, grad in got.items():
        np.testing.assert_array_equal(np.isnan(grad), np.isnan(want), err_msg=label)
        np.testing.assert_allclose(grad, want, rtol=1e-4, atol=2e-5, err_msg=label)
        if kind == "relu":   # a select: PyTorch's very bits, +0.0 where it passes nothing
            np.testing.assert_array_equal(grad.view(np.int32), want.view(np.int32))


@needs_onednn
def test_relu_is_numpys_maximum_bit_for_bit(monkeypatch):
    """The cpu backend's relu on oneDNN: numpy's max(x, 0) bit for bit (+0.0 for -0.0, -inf
    and every negative; subnormals kept), and an x holding a NaN left to the next step,
    which keeps the NaN (oneDNN's relu gives 0 there)."""
    served = []
    real = onednn.elementwise.eltwise
    monkeypatch.setattr(onednn.elementwise, "eltwise",
                        lambda x, alg: (lambda out: served.append(out is not NotImplemented)
                                        or out)(real(x, alg)))
    be = shrew.tensor([0.0])._backend
    x = np.random.default_rng(8).standard_normal(LARGE + 5).astype(np.float32)
    x[:100] *= np.finfo(np.float32).tiny
    x[100:105] = [np.inf, -np.inf, -0.0, 0.0, 1.0]
    got = be.unary("relu", x)
    assert served == [True]
    np.testing.assert_array_equal(got.view(np.int32), np.maximum(x, np.float32(0)).view(np.int32))
    x[7] = np.nan
    served.clear()
    got = be.unary("relu", x)
    assert not any(served) and np.isnan(got[7])
    np.testing.assert_array_equal(got, torch.relu(torch.tensor(x)).numpy())


@needs_onednn
def test_relu_backward_is_a_select_bit_for_bit():
    """onednn.relu_backward: g where x > 0 or x is NaN, +0.0 elsewhere (PyTorch's
    threshold_backward), with subnormal, signed-zero, infinite and NaN x and negative,
    zero and subnormal g; bit for bit, but for a g of -0.0 where x passes it, which comes
    out +0.0 (the pass's closing + 0, which makes the other zeros +0.0)."""
    rng = np.random.default_rng(14)
    x = rng.standard_normal(LARGE).astype(np.float32)
    g = rng.standard_normal(LARGE).astype(np.float32)
    tiny = np.finfo(np.float32).tiny
    x[:500] *= tiny
    g[250:750] *= tiny
    x[1000:1006] = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1.0]
    g[1000:1012] = -0.0
    got = onednn.relu_backward(g.reshape(-1, 64), x.reshape(-1, 64))
    want = torch.ops.aten.threshold_backward(torch.tensor(g), torch.tensor(x), 0).numpy()
    assert got.shape == (LARGE // 64, 64)
    got = got.reshape(-1)
    np.testing.assert_array_equal(got, want)
    signed = (g == 0) & np.signbit(g) & ~(x <= 0)   # -0.0 passed
    assert signed.any() and not np.signbit(got[signed]).any()
    np.testing.assert_array_equal(got[~signed].view(np.int32), want[~signed].view(np.int32))
    assert onednn.relu_backward(g[:64], x[:64]) is NotImplemented        # small
    assert onednn.relu_backward(g, x.astype(np.float64)) is NotImplemented


@needs_onednn
def test_relu_gradient_of_an_infinite_or_nan_g_is_left_to_numpy():
    """oneDNN's relu backward multiplies g by 0 where x <= 0, which makes an infinite or NaN
    g a NaN where PyTorch passes 0: with one in g the cpu backend declines."""
    be = cpu.CPUBackend()
    x = -np.ones(LARGE, np.float32)
    for bad in (np.inf, np.nan):
        g = np.ones(LARGE, np.float32)
        g[7] = bad
        assert be.unary_backward("relu", g, x) is NotImplemented
        sx = shrew.tensor(x, requires_grad=True)
        got = (shrew.relu(sx) * shrew.tensor(g)).sum().backward()[sx].numpy()
        assert not got.any() and not np.signbit(got).any()


_POOLS = [((64, 16, 28, 28), (2, 2), (2, 2), (0, 0)), ((8, 16, 29, 29), (3, 3), (2, 2), (1, 1)),
          ((4, 16, 30, 31), (3, 2), (1, 2), (1, 0))]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN inputs, on purpose
@needs_onednn
@pytest.mark.parametrize("shape, kernel, stride, padding", _POOLS)
@pytest.mark.parametrize("kind", ["normal", "ties", "minus_inf_window", "nan"])
def test_max_pooling_forward_on_onednn_gives_numpys_and_torchs_bits(shape, kernel, stride,
                                                                    padding, kind):
    """Large float32 max pooling runs on oneDNN, its index taken from the workspace (the
    first of equal maxima, as PyTorch); a NaN (which oneDNN skips) or a window of -inf
    (where it gives the lowest float) sends the call to numpy."""
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    if kind == "ties":      # relu's zeros, and whole rows of them
        x = np.maximum(x, 0)
        x[:, :, ::3] = 0
    elif kind == "minus_inf_window":
        x[0, 0, :4, :4] = -np.inf
    elif kind == "nan":
        x[1, 2, 3, 3] = np.nan
    be = cpu.CPUBackend()
    served = onednn.max_pool.forward(x, kernel, stride, padding, (1, 1), False)
    assert (served is not NotImplemented) == (kind in ("normal", "ties"))
    values, index = be.max_pool2d(x, kernel, stride, padding, (1, 1), False)
    with cpu.use_onednn(False):
        want_values, want_index = be.max_pool2d(x, kernel, stride, padding, (1, 1), False)
    t_values, t_index = F.max_pool2d(torch.tensor(x), kernel, stride, padding,
                                     return_indices=True)
    assert index.dtype == np.int64
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(values, t_values.numpy())
    np.testing.assert_array_equal(index, want_index)
    np.testing.assert_array_equal(index, t_index.numpy())


@needs_onednn
@pytest.mark.parametrize("shape, kernel, stride, padding", _POOLS)
def test_max_pooling_backward_runs_through_the_forwards_workspace(monkeypatch, shape, kernel,
                                                                   stride, padding):
    """The backward handed the index its oneDNN forward made runs oneDNN's backward with
    the remembered workspace: PyTorch's gradient, bit for bit; any other index array, or
    one whose memory was evicted, goes to numpy."""
    served = []
    real = onednn.pool2d_backward
    monkeypatch.setattr(onednn.pool, "pool2d_backward",
                        lambda *a: served.append(1) or real(*a))
    rng = np.random.default_rng(4)
    x = np.maximum(rng.standard_normal(shape).astype(np.float32), 0)   # ties
    g = rng.standard_normal(F.max_pool2d(torch.tensor(x), kernel, stride, padding).shape)
    g = g.astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    F.max_pool2d(tx, kernel, stride, padding).backward(torch.tensor(g))
    sx = shrew.tensor(x, requires_grad=True)
    out = shrew.nn.functional.max_pool2d(sx, kernel, stride, padding)
    got = (out * shrew.tensor(g)).sum().backward()[sx].numpy()
    assert served == [1]
    overlap = any(k > st for k, st in zip(kernel, stride))
    if overlap:   # overlapping windows sum into one element, in oneDNN's order
        np.testing.assert_allclose(got, tx.grad.numpy(), rtol=1e-6, atol=1e-6)
    else:         # a store: PyTorch's bits
        np.testing.assert_array_equal(got, tx.grad.numpy())
    be = cpu.CPUBackend()
    _, index = be.max_pool2d(x, kernel, stride, padding, (1, 1), False)
    copy = index.copy()   # the same values, another array: numpy's store
    assert onednn.max_pool.backward(g, copy, shape, kernel, stride, (1, 1)) is NotImplemented
    later = [be.max_pool2d(x, kernel, stride, padding, (1, 1), False)   # evict it
             for _ in range(onednn.max_pool.RECENT)]
    assert len(later) == onednn.max_pool.RECENT
    assert onednn.max_pool.backward(g, index, shape, kernel, stride, (1, 1)) is NotImplemented
    if not overlap:   # numpy's store (overlapping windows: the core's scatter_add)
        np.testing.assert_array_equal(be.max_pool2d_backward(g, index, shape, kernel, stride,
                                                             (1, 1)), tx.grad.numpy())


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN inputs, on purpose
@needs_onednn
def test_a_nan_log_probability_leaves_the_gradient_to_the_core(monkeypatch):
    """oneDNN's log-softmax backward takes a NaN log-probability (a row masked whole) to a
    number; PyTorch's gradient is NaN there, and so is the core rule's, whose calls the
    backend then makes."""
    calls = []
    real = onednn.softmax_backward
    monkeypatch.setattr(onednn.elementwise, "softmax_backward",
                        lambda *a: calls.append(a) or real(*a))
    x = np.zeros((LARGE // 64, 64), np.float32)
    x[5] = -np.inf
    g = np.ones_like(x)
    be = cpu.CPUBackend()
    y = be.softmax(x, 1, True)
    with np.errstate(invalid="ignore"):
        composed = g - np.exp(y) * g.sum(1, keepdims=True)
    np.testing.assert_array_equal(be.softmax_backward(g, y, 1, True), composed)
    assert not calls
    sx = shrew.tensor(x, requires_grad=True)
    got = sx.log_softmax(1).sum().backward()[sx].numpy()
    tx = torch.tensor(x, requires_grad=True)
    tx.log_softmax(1).sum().backward()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(tx.grad.numpy()))
    assert np.isnan(got[5]).all()


@needs_onednn
@pytest.mark.parametrize("shape, ndims", [((8, 64, 96), 1), ((4, 32, 16, 24), 2)])
def test_standardize_matches_layer_norm(shape, ndims):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    x[0, 0] = np.nan
    be = cpu.CPUBackend()
    y, rstd = be.standardize(x, tuple(range(x.ndim - ndims, x.ndim)), 1e-5)
    want = F.layer_norm(torch.tensor(x), shape[-ndims:], eps=1e-5).numpy()
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    with cpu.use_onednn(False):
        y_np, rstd_np = be.standardize(x, tuple(range(x.ndim - ndims, x.ndim)), 1e-5)
    assert rstd.shape == rstd_np.shape and rstd.dtype == rstd_np.dtype == np.float32
    np.testing.assert_allclose(rstd, rstd_np, rtol=1e-5)
    np.testing.assert_allclose(y, y_np, rtol=1e-4, atol=1e-5)


@needs_onednn
def test_threads_share_the_cache_while_it_evicts(monkeypatch):
    """A cache of one entry and four threads on three geometries: every call evicts
    another's primitive, which must wait for the thread using it, and every result holds."""
    import threading
    monkeypatch.setattr(onednn.primitive, "CACHE_SIZE", 1)
    rng = np.random.default_rng(6)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    inputs = [rng.standard_normal((2, 3, s, s)).astype(np.float32) for s in (9, 11, 13)]
    wants = [F.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy() for x in inputs]
    failures = []

    def work(seed):
        for i in range(30):
            k = (seed + i) % 3
            got = onednn.conv2d(inputs[k], w, (1, 1), (1, 1))
            if not np.allclose(got, wants[k], rtol=1e-4, atol=1e-4):
                failures.append((seed, i))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    onednn.clear_cache()


@needs_onednn
def test_threadpoolctl_limits_onednn_threads_too():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    old = cpu.get_num_threads()
    with threadpoolctl.threadpool_limits(1, user_api="openmp"):
        assert cpu.get_num_threads() == 1
    assert cpu.get_num_threads() == old


def _a_step_on_every_onednn_path():
    """Outputs and gradients of conv2d (grouped and dilated too), avg_pool2d, softmax,
    layer norm and GELU on float32 inputs large enough for oneDNN."""
    rng = np.random.default_rng(9)
    x = shrew.tensor(rng.standard_normal((4, 8, 24, 24)).astype(np.float32), requires_grad=True)
    w = shrew.tensor(rng.standard_normal((16, 8, 3, 3)).astype(np.float32) / 8,
                     requires_grad=True)
    wg = shrew.tensor(rng.standard_normal((16, 4, 3, 3)).astype(np.float32) / 8,
                      requires_grad=True)
    h = shrew.conv2d(x, w, 1, 1) + shrew.conv2d(x, wg, 1, 2, 2, 2)
    h = shrew.avg_pool2d(h, 2)                                     # [4, 16, 12, 12]
    rows = h.reshape(64, -1).repeat(1, 8)                          # [64, 1152]: > 32768
    out = shrew.nn.functional.layer_norm(rows, (rows.shape[1],))
    out = shrew.nn.functional.gelu(out).softmax(-1)
    loss = (out * shrew.tensor(rng.standard_normal(out.shape).astype(np.float32))).sum()
    grads = loss.backward()
    return [out.numpy()] + [grads[t].numpy() for t in (x, w, wg)]


@needs_onednn
def test_the_same_inputs_give_the_same_bits_run_to_run(monkeypatch):
    """Determinism through shrew with oneDNN on: every path, several runs, several
    thread counts each (oneDNN's primitives are deterministic for a fixed count)."""
    calls = _count_calls(monkeypatch, ("conv2d", "conv2d_backward_data",
                                       "conv2d_backward_weights", "pool2d",
                                       "pool2d_backward", "softmax", "layer_norm", "eltwise"))
    old = shrew.get_num_threads()
    try:
        for threads in (1, 2):
            shrew.set_num_threads(threads)
            first = _a_step_on_every_onednn_path()
            for _ in range(2):
                assert all(np.array_equal(a, b)
                           for a, b in zip(first, _a_step_on_every_onednn_path()))
    finally:
        shrew.set_num_threads(old)
    assert set(calls) == {"conv2d", "conv2d_backward_data", "conv2d_backward_weights",
                          "pool2d", "pool2d_backward", "softmax", "layer_norm", "eltwise"}


@needs_onednn
def test_shrew_set_num_threads_sets_onednn_and_blas_threads():
    """shrew.set_num_threads (torch's name) sizes oneDNN's OpenMP pool and the BLAS pools
    alike; get_num_threads reads it back."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    old = shrew.get_num_threads()
    try:
        for n in (1, 2):
            shrew.set_num_threads(n)
            assert shrew.get_num_threads() == n == cpu.get_num_threads()
            # Where MKL serves the products, OpenBLAS stays on one thread (mkl.py).
            blas = {(p["internal_api"], p["num_threads"])
                    for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}
            assert blas and all(threads == (1 if api == "openblas" and cpu.mkl_active()
                                            else n) for api, threads in blas)
    finally:
        shrew.set_num_threads(old)
    for bad in (0, -2, 2.0, False, "2"):
        with pytest.raises(shrew.ShrewError, match="set_num_threads"):
            shrew.set_num_threads(bad)
