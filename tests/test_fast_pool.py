"""max_pool2d's gradient fast path (base.FastPool): the cpu backend's max_pool2d_backward
against the core's scatter_add, which a backend without it gets."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shrew
from shrew.backends.base import FAST_POOL, FastPool
from shrew.backends.cpu import CPUBackend


class Counting(CPUBackend):
    """The cpu backend, counting the fast path's calls and what it declined."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def max_pool2d_backward(self, g, index, shape, kernel, stride, dilation):
        out = super().max_pool2d_backward(g, index, shape, kernel, stride, dilation)
        self.calls.append("declined" if out is NotImplemented else "stored")
        return out


class Scattering(CPUBackend):
    """Without the fast path: max_pool2d's gradient is the core's scatter_add."""

    max_pool2d_backward = None


@pytest.fixture
def devices(isolated_registry):
    backends = {"counting": Counting(), "scattering": Scattering()}
    for name, backend in backends.items():
        backend.device = name
        shrew.register_backend(name, lambda index=0, backend=backend: backend)
    return backends


def _grad(device, x_np, g_np, kernel, stride, padding, dilation=1, ceil_mode=False):
    x = shrew.tensor(x_np, device=device, requires_grad=True)
    out = shrew.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode)
    return (out * shrew.tensor(g_np, device=device)).sum().backward()[x].numpy()


@st.composite
def pools(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    size = tuple(draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), 9))
                 for k, p, d in zip(kernel, padding, dilation))
    shape = (draw(st.integers(0, 3)), draw(st.integers(1, 3))) + size  # an empty batch too
    return shape, kernel, stride, padding, dilation, draw(st.booleans())


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # calls cleared below
@given(geometry=pools(), seed=st.integers(0, 2**16), ties=st.booleans())
def test_the_fast_path_is_the_scatter_bit_for_bit(devices, geometry, seed, ties):
    """Where windows do not overlap, the store gives scatter_add's gradient exactly
    (ties and -0.0 included); where they overlap, it declines and scatter_add runs."""
    shape, kernel, stride, padding, dilation, ceil_mode = geometry
    rng = np.random.default_rng(seed)
    x = rng.integers(-1, 2, shape).astype(float) if ties else rng.standard_normal(shape)
    probe = shrew.max_pool2d(shrew.tensor(x), kernel, stride, padding, dilation, ceil_mode)
    g = rng.standard_normal(probe.shape) * rng.choice([1.0, -0.0], probe.shape)
    devices["counting"].calls.clear()
    got = _grad("counting", x, g, kernel, stride, padding, dilation, ceil_mode)
    want = _grad("scattering", x, g, kernel, stride, padding, dilation, ceil_mode)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert not np.signbit(got[got == 0]).any()
    overlap = any(d * (k - 1) >= s for k, s, d in zip(kernel, stride, dilation))
    assert devices["counting"].calls == ["declined" if overlap else "stored"]


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_narrower_dtypes(devices, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 8, 6)).astype(dtype)
    g = rng.standard_normal((2, 3, 4, 3)).astype(dtype)
    got, want = (_grad(d, x, g, 2, 2, 0) for d in ("counting", "scattering"))
    assert got.dtype == np.dtype(dtype) and np.array_equal(got, want)


def test_create_graph_keeps_the_recorded_scatter(devices):
    """Under create_graph=True the gradient is a recorded scatter_add, so it can be
    differentiated again; the fast path is not asked."""
    rng = np.random.default_rng(2)
    x = shrew.tensor(rng.standard_normal((1, 2, 4, 4)), device="counting", requires_grad=True)
    v = shrew.tensor(rng.standard_normal((1, 2, 4, 4)), device="counting")
    gx = (shrew.max_pool2d(x, 2) ** 2.0).sum().backward(create_graph=True)[x]
    assert gx.requires_grad and devices["counting"].calls == []
    hv = (gx * v).sum().backward()[x].numpy()
    # d/dx of 2 * max * [x is the max]: 2 * v at each window's maximum, 0 elsewhere.
    winners = gx.numpy() != 0
    np.testing.assert_allclose(hv, np.where(winners, 2 * v.numpy(), 0))


def test_the_cpu_and_cuda_backends_offer_it():
    assert all(callable(getattr(CPUBackend, name)) for name in FAST_POOL)
    assert set(FAST_POOL) == {n for n in vars(FastPool) if not n.startswith("_")}


def test_a_retained_graphs_second_backward_gives_the_first_ones_numbers():
    """oneDNN's max-pool backward reads the workspace its forward left: a retained graph
    differentiated again (as shrew.compile's capture does, and retain_graph=True) must
    find it again, not fall back to the scatter, whose sum of overlapping windows
    rounds otherwise (it once did: a compiled resnet18 drifted from eager in 1e-5)."""
    rng = np.random.default_rng(3)
    x = shrew.tensor(rng.standard_normal((8, 16, 28, 28)).astype(np.float32),
                     requires_grad=True)
    g = shrew.tensor(rng.standard_normal((8, 16, 14, 14)).astype(np.float32))
    y = shrew.max_pool2d(x.tanh(), 3, 2, 1)  # overlapping windows
    first = y.backward(g, retain_graph=True)[x].numpy()
    second = y.backward(g)[x].numpy()
    np.testing.assert_array_equal(first, second)
