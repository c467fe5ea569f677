"""Helpers for the core tests: hypothesis strategies and a gradcheck wrapper."""
from __future__ import annotations

import math
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import strategies as st

import shrew
from shrew.testing import gradcheck

LAYOUTS = ("plain", "transpose", "narrow")
CPU_FAST_WHEELS_EXIST = sys.platform == "linux" and platform.machine() == "x86_64"
"""Where the cpu backend's libraries (oneDNN, MKL) have wheels: there every install of
shrew brings them, and their tests must find them live."""
FULL_JACOBIAN_MAX = 40  # checked inputs with more elements use random directions


def switched_on(use):
    """An autouse fixture that runs each test of a module with one of the cpu backend's
    libraries switched on (`use`: cpu.use_onednn, cpu.use_mkl), whatever the environment
    (SHREW_CPU_ONEDNN, SHREW_CPU_MKL) says."""
    @pytest.fixture(autouse=True)
    def library_on():
        with use(True):
            yield
    return library_on


def assert_live_where_wheels_exist(library, active) -> None:
    """shrew installs oneDNN's and MKL's wheels on x86-64 Linux: there the library must
    load and serve (`active`), or every test of it would be skipped without anyone
    noticing."""
    if CPU_FAST_WHEELS_EXIST:
        assert library.load_error() is None
        assert active()


def active_in_a_fresh_process(variable: str, value: str, probe: str) -> str:
    """What `cpu.<probe>()` (onednn_active, mkl_active) prints in a new interpreter whose
    environment sets `variable` to `value`: the switch is read at import."""
    env = {**os.environ, variable: value}
    return subprocess.run([sys.executable, "-c", "from shrew.backends import cpu; "
                           f"print(cpu.{probe}())"], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def needs_loadable(*libraries) -> pytest.MarkDecorator:
    """Skip where one of the cpu backend's libraries (its onednn and mkl modules) does not
    load, saying why."""
    errors = [lib.load_error() for lib in libraries if lib.load_error() is not None]
    return pytest.mark.skipif(bool(errors), reason="not loadable: " + "; ".join(errors))


class Input:
    """A float64 leaf plus the view that turns it into the operand a test wants.

    With layout "transpose" or "narrow" the leaf is stored in another shape and the view
    (a Transpose or Narrow) hands the op a non-contiguous operand of `shape`."""

    def __init__(self, shape, seed=0, layout="plain", positive=False, away_from_zero=False,
                 requires_grad=True, device="cpu"):
        shape = tuple(shape)
        if layout == "transpose" and len(shape) < 2:
            layout = "plain"
        if layout == "narrow" and len(shape) < 1:
            layout = "plain"
        stored = list(shape)
        if layout == "transpose":
            stored[-1], stored[-2] = stored[-2], stored[-1]
        elif layout == "narrow":
            stored[-1] += 2
        rng = np.random.default_rng(seed)
        data = np.asarray(rng.standard_normal(stored))  # a 0-d draw is a Python float
        if positive:
            data = np.abs(data) + 0.5
        elif away_from_zero:
            data = np.sign(data + 1e-12) * (np.abs(data) + 0.5)
        self.shape, self.layout = shape, layout
        self.leaf = shrew.tensor(data, device=device, requires_grad=requires_grad)
        self.value = np.asarray(self.view(shrew.tensor(data)).numpy())

    def view(self, t):
        if self.layout == "transpose":
            return t.transpose(-1, -2)
        if self.layout == "narrow":
            return t.narrow(-1, 1, self.shape[-1])
        return t


def check_grad(op, *inputs, eps=1e-6, atol=1e-6, rtol=1e-5, directions=None):
    """gradcheck `op` applied to the views of `inputs` (Input objects or plain values).

    Small problems compare the full Jacobian; larger ones use random directions."""
    leaves = [i.leaf if isinstance(i, Input) else i for i in inputs]

    def fn(*args):
        return op(*[i.view(a) if isinstance(i, Input) else a for i, a in zip(inputs, args)])

    size = sum(math.prod(i.leaf.shape) for i in inputs
               if isinstance(i, Input) and i.leaf.requires_grad)
    if directions is None and size > FULL_JACOBIAN_MAX:
        directions = 6
    assert gradcheck(fn, leaves, eps=eps, atol=atol, rtol=rtol, directions=directions)


# -- strategies ------------------------------------------------------------------------
seeds = st.integers(0, 2**31 - 1)
layouts = st.sampled_from(LAYOUTS)


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=3):
    return st.lists(st.integers(min_side, max_side), min_size=min_dims,
                    max_size=max_dims).map(tuple)


@st.composite
def broadcast_pairs(draw, min_dims=0, max_dims=3):
    """Two shapes that broadcast: the second drops leading dims and/or has 1s."""
    full = draw(shapes(min_dims, max_dims))
    drop = draw(st.integers(0, len(full)))
    other = tuple(1 if draw(st.booleans()) else s for s in full[drop:])
    return (other, full) if draw(st.booleans()) else (full, other)


# -- devices ---------------------------------------------------------------------------
def device_or_fail(name: str) -> str:
    """`name` ("cpu", "opencl" or "opencl:N") as a device string for a test that must run
    on it.

    On a machine without such a working device the test is skipped, saying why (the
    DeviceError names each OpenCL device left out, its compiler's message and what to
    install), unless the environment sets SHREW_REQUIRE_OPENCL=1, as CI does where pip's
    OpenCL extra guarantees a device: then it fails, so CI cannot pass by skipping."""
    if name == "cpu":
        return "cpu"
    listed = shrew.devices()
    found = [d for d in listed if d == name or d.split(":")[0] == name]
    if found:
        return found[0]
    try:
        shrew.zeros(1, device=name)
        why = f"shrew.devices() is {listed}"
    except shrew.DeviceError as exc:
        why = str(exc)
    if os.environ.get("SHREW_REQUIRE_OPENCL") == "1":
        pytest.fail(f"no {name} device (SHREW_REQUIRE_OPENCL=1): {why}")
    pytest.skip(f"no {name} device: {why}")


def each_device(name: str) -> list[str]:
    """Every device of `name` ("opencl": opencl:0, opencl:1, ...) to parametrize a test
    with; [name] when there is none, for device_or_fail to skip or fail on."""
    return [d for d in shrew.devices() if d.split(":")[0] == name] or [name]


def numpy_layer_norm(backend, x, weight, bias, ndims, eps):
    """base.FastNorm's layer_norm on numpy, for every float dtype: a stand-in for the cpu
    backend's method (oneDNN: float32, large inputs only) where a test needs LayerNorm
    nodes on float64 (gradcheck); their gradient is then the core's rule, since the cpu
    backend's layer_norm_backward declines what oneDNN does not take."""
    dims = tuple(range(x.ndim - ndims, x.ndim))
    mean = x.mean(dims, keepdims=True)
    rstd = 1 / np.sqrt(np.square(x - mean).mean(dims, keepdims=True) + eps)
    return (x - mean) * rstd * weight + bias, mean, rstd


def numpy_attention(backend, q, k, v, bias, scale):
    """base.FastAttention's attention on numpy, for every float dtype: a stand-in for the
    cpu backend's method (MKL and oneDNN: float32, large inputs only) where a test needs
    Attention nodes on float64 (gradcheck); their gradient is then the core's rule, since
    the cpu backend's attention_backward declines what it does not take."""
    if q.shape[:-2] != k.shape[:-2] or k.shape[:-2] != v.shape[:-2]:
        return NotImplemented
    scores = (q @ np.swapaxes(k, -1, -2)) * scale
    if bias is not None:
        scores = scores + bias
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return weights @ v, weights
