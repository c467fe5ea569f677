"""The convolution fast path (base.FastConv): the cpu backend's conv2d and conv2d_backward,
which fold the batch into their GEMMs (backends/array_module/folded_conv.py), against the
core's lowering (im2col, matmul, col2im) that a backend without them gets.  oneDNN, which
serves float32 before folding, is switched off here (tests/test_onednn.py tests it)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shrew
from shrew.backends.base import FAST_CONV, FastConv
from shrew.backends.array_module import folded_conv
from shrew.backends.cpu import CPUBackend, use_onednn
from shrew.testing.conformance.cases import CASES


class Folding(CPUBackend):
    """Folds every convolution, however few its input channels."""

    conv_fold_min_depth = 0


class Lowering(CPUBackend):
    """Without the fast path: the core lowers convolutions to im2col, matmul and col2im."""

    conv2d = None
    conv2d_backward = None


@pytest.fixture
def devices(isolated_registry):
    for cls in (Folding, Lowering):
        name = cls.__name__.lower()
        shrew.register_backend(name, lambda index=0, cls=cls, name=name: _named(cls, name))
    with use_onednn(False):
        yield "folding", "lowering"


def _named(cls, name):
    backend = cls()
    backend.device = name
    return backend


def _run(device, fn, x_np, w_np, g_np, need_x=True, need_w=True):
    """fn(x, w) and the gradients of sum(fn(x, w) * g) on `device`, as numpy arrays."""
    x = shrew.tensor(x_np, device=device, requires_grad=need_x)
    w = shrew.tensor(w_np, device=device, requires_grad=need_w)
    out = fn(x, w)
    (out * shrew.tensor(g_np, device=device)).sum().backward()
    return (out.numpy(), None if x.grad is None else x.grad.numpy(),
            None if w.grad is None else w.grad.numpy())


def _assert_same(got, want, rtol=1e-12):
    for a, b in zip(got, want):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.shape == b.shape
            scale = max(1.0, np.abs(b).max(initial=0))
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)


@st.composite
def geometries(draw):
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = (draw(st.integers(0, 3)), draw(st.integers(0, 3)))
    hw = tuple(draw(st.integers(max(1, k - 2 * p), 9)) for k, p in zip(kernel, padding))
    n, c, o = draw(st.integers(0, 3)), draw(st.integers(1, 6)), draw(st.integers(1, 4))
    need = draw(st.sampled_from(((True, True), (True, False), (False, True))))
    return (n, c, *hw), (o, c, *kernel), stride, padding, need


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # registers only
@given(geometry=geometries(), seed=st.integers(0, 2**16))
def test_conv2d_fast_path_equals_the_lowering(devices, geometry, seed):
    x_shape, w_shape, stride, padding, (need_x, need_w) = geometry
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    out_hw = tuple((x_shape[2 + d] + 2 * padding[d] - w_shape[2 + d]) // stride[d] + 1
                   for d in range(2))
    g = rng.standard_normal((x_shape[0], w_shape[0], *out_hw))

    def conv(a, b):
        return shrew.conv2d(a, b, stride, padding)

    _assert_same(_run("folding", conv, x, w, g, need_x, need_w),
                 _run("lowering", conv, x, w, g, need_x, need_w))


@pytest.mark.parametrize("n, c, length, o, k, stride, padding",
                         [(2, 5, 11, 3, 3, 1, 1), (1, 3, 9, 2, 4, 2, 2), (3, 16, 7, 4, 1, 3, 0),
                          (0, 2, 5, 3, 2, 1, 0)])
def test_conv1d_fast_path_equals_the_lowering(devices, n, c, length, o, k, stride, padding):
    rng = np.random.default_rng(length)
    x, w = rng.standard_normal((n, c, length)), rng.standard_normal((o, c, k))
    g = rng.standard_normal((n, o, (length + 2 * padding - k) // stride + 1))

    def conv(a, b):
        return shrew.conv1d(a, b, stride, padding)

    _assert_same(_run("folding", conv, x, w, g), _run("lowering", conv, x, w, g))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_narrower_dtypes_agree_with_the_lowering(devices, dtype):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6, 7, 8)).astype(dtype)
    w = (rng.standard_normal((5, 6, 3, 2)) / 6).astype(dtype)
    g = rng.standard_normal((4, 5, 4, 9)).astype(dtype)

    def conv(a, b):
        return shrew.conv2d(a, b, (2, 1), (1, 1))

    got, want = _run("folding", conv, x, w, g), _run("lowering", conv, x, w, g)
    assert all(a.dtype == np.dtype(dtype) for a in got)
    _assert_same(got, want, rtol=1e-5 if dtype == "float32" else 2e-2)


def test_cpu_folds_deep_convolutions_and_lowers_shallow_ones(monkeypatch):
    """The cpu backend folds when C*kw reaches conv_fold_min_depth; either way it is
    the same convolution."""
    calls = []
    for name in ("conv2d", "conv2d_backward"):
        real = getattr(folded_conv, name)
        monkeypatch.setattr(folded_conv, name,
                            lambda *a, real=real, name=name: calls.append(name) or real(*a))
    depth = CPUBackend.conv_fold_min_depth
    rng = np.random.default_rng(0)
    for c, folds in ((math.ceil(depth / 3), True), (1, False)):
        x = shrew.tensor(rng.standard_normal((3, c, 6, 6)), requires_grad=True)
        w = shrew.tensor(rng.standard_normal((2, c, 3, 3)), requires_grad=True)
        shrew.conv2d(x, w, 1, 1).sum().backward()
        assert calls == (["conv2d", "conv2d_backward"] if folds else []), c
        calls.clear()


def test_second_derivatives_through_the_fast_path(devices):
    """Under create_graph=True the rule is recorded operations, also where the forward ran
    the backend's conv2d, so a Hessian-vector product works and matches the lowering."""
    rng = np.random.default_rng(7)
    x_np, w_np = rng.standard_normal((2, 4, 6, 5)), rng.standard_normal((3, 4, 3, 2))
    v_np = rng.standard_normal(x_np.shape)
    results = []
    for device in devices:
        x = shrew.tensor(x_np, device=device, requires_grad=True)
        w = shrew.tensor(w_np, device=device, requires_grad=True)
        loss = (shrew.conv2d(x, w, (1, 2), 1).tanh() ** 2.0).sum()
        grads = loss.backward(create_graph=True)
        gx = grads[x]
        assert gx.requires_grad
        hv = (gx * shrew.tensor(v_np, device=device)).sum().backward()
        results.append((gx.numpy(), hv[x].numpy(), hv[w].numpy()))
    _assert_same(*results, rtol=1e-10)


def test_the_fast_path_is_deterministic(devices):
    rng = np.random.default_rng(11)
    x, w = rng.standard_normal((5, 7, 9, 8)), rng.standard_normal((4, 7, 3, 3))
    g = rng.standard_normal((5, 4, 5, 8))

    def conv(a, b):
        return shrew.conv2d(a, b, (2, 1), (1, 1))

    first, second = _run("folding", conv, x, w, g), _run("folding", conv, x, w, g)
    for a, b in zip(first, second):
        assert np.array_equal(a, b)


def test_the_cpu_and_cuda_backends_offer_it():
    assert all(callable(getattr(CPUBackend, name)) for name in FAST_CONV)
    assert set(FAST_CONV) == {n for n in vars(FastConv) if not n.startswith("_")}


def test_the_conformance_table_takes_the_cpu_fast_path():
    """The conv2d and conv1d entries have samples that the cpu backend folds, among them
    a batch of one, strides above one, padding and non-square kernels."""
    folded = []
    for case in CASES:
        if case.name not in ("conv2d", "conv1d"):
            continue
        for sample in case.samples:
            x, w = (arg.shape for arg in sample.args[:2])
            if w[1] * w[-1] >= CPUBackend.conv_fold_min_depth:
                stride, padding = (sample.kwargs.get(k, 0) for k in ("stride", "padding"))
                folded.append((case.name, x[0], stride, padding, w[2:]))
    assert {name for name, *_ in folded} == {"conv2d", "conv1d"}
    assert any(batch == 1 for _, batch, *_ in folded)
    assert any(np.max(stride) > 1 for *_, stride, _, _ in folded)
    assert any(np.max(padding) > 0 for *_, padding, _ in folded)
    assert any(len(kernel) == 2 and kernel[0] != kernel[1] for *_, kernel in folded)
