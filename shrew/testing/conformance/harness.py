"""Running a table entry on the device under test and on the CPU reference, and comparing.

The reference is the CPU backend in float64, fed the very values the device got (already
rounded to the dtype under test), so only the device's own arithmetic can differ.
"""
from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import shrew
from shrew.backends.registry import get_backend, parse

from ..gradcheck import gradcheck
from .spec import KINKS

LAYOUTS = ("contiguous", "transposed", "narrowed", "expanded")
DEFAULT_LAYOUT = "transposed"  # every input is non-contiguous unless a test says otherwise

# (rtol, atol) for one term; both grow with the number of terms an output element sums.
TOLERANCE = {"bfloat16": (4e-2, 8e-3), "float16": (5e-3, 1e-3), "float32": (1e-5, 1e-6),
             "float64": (1e-10, 1e-12)}
_FLOAT_NAMES = frozenset(TOLERANCE)
_PAD = 7  # fills the storage around a narrowed view: a kernel that ignores the offset reads it


class Target:
    """The device under test, looked up through the public registry."""

    def __init__(self, device: str):
        listed = shrew.devices()
        try:
            self.backend = get_backend(device)
        except shrew.ShrewError as exc:
            raise pytest.UsageError(f"--shrew-device {device}: {exc}") from None
        if device not in listed and self.backend.device not in listed:
            raise pytest.UsageError(f"--shrew-device {device}: shrew.devices() does not list "
                                    f"it (it lists {', '.join(listed)})")
        self.device = device
        self.name = parse(device)[0]
        self.dtypes = frozenset(np.dtype(d).name for d in self.backend.dtypes)

    def applies(self, case, sample, dtype="float32") -> bool:
        return dtype in case.dtypes and {dtype, *sample.needs} <= self.dtypes

    def param(self, case, *extra, dtype="float32"):
        """pytest.param(case, *extra), marked xfail where the entry lists a known failure."""
        keys = (self.name, f"{self.name}/{dtype}")
        marks = [pytest.mark.xfail(reason=why) for key, why in case.known.items() if key in keys]
        return pytest.param(case, *extra, id="-".join([case.name, *map(str, extra)]), marks=marks)


# Drawn shapes: few examples per entry (the table has many), the same ones every run.
DRAWN = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.filter_too_much])


def over(names: str, build):
    """Parametrize a test with build(target); conftest.py calls it once the device is known."""
    def mark(test):
        test.shrew_params = (names, build)
        return test
    return mark


# -- inputs ----------------------------------------------------------------------------------
def make_inputs(case, sample, dtype: str, layout: str) -> list:
    """Host arrays for the leaves of `sample`: data inputs in `dtype`, stored for `layout`."""
    rng = np.random.default_rng(zlib.crc32(f"{case.name}{sample!r}".encode()))
    return [_stored(_values(arg, np.dtype(dtype), rng), layout, arg.kind) for arg in sample.args]


def _values(arg, dtype: np.dtype, rng) -> np.ndarray:
    """Random values for one input (np.asarray: numpy draws 0-d shapes as Python scalars)."""
    if arg.kind != "data":
        dtype = np.dtype(np.int64 if arg.kind == "index" else bool)
    if arg.value is not None:
        return np.asarray(arg.value, dtype=dtype)
    if arg.kind == "index":
        return np.asarray(rng.integers(0, arg.high, arg.shape))
    if dtype.kind == "b":
        return np.asarray(rng.random(arg.shape) < 0.5)
    if arg.domain == "lowest":  # every element the dtype's lowest value: -inf for floats
        # (bfloat16, from ml_dtypes, is a float whose numpy kind is "V")
        return np.full(arg.shape, np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf, dtype)
    if dtype.kind in "iu":
        low, high = {"positive": (1, 6), "ties": (-2, 3)}.get(arg.domain, (-5, 6))
        if dtype.kind == "u":  # unsigned: the same spread, shifted up
            low, high = low + 5, high + 5
        v = rng.integers(low, high, arg.shape)
        return np.asarray(v if arg.domain != "nonzero" else np.where(v >= 0, v + 1, v), dtype)
    shape = arg.shape
    v = {"normal": lambda: rng.standard_normal(shape),
         "wide": lambda: 3 * rng.standard_normal(shape),
         "positive": lambda: rng.uniform(0.5, 2.0, shape),
         "nonzero": lambda: rng.uniform(0.5, 2.0, shape) * rng.choice((-1, 1), shape),
         "unit": lambda: rng.uniform(-0.9, 0.9, shape),
         "probability": lambda: rng.uniform(0.05, 0.95, shape),
         "above_one": lambda: rng.uniform(1.2, 3.0, shape),
         "halves": lambda: rng.integers(-4, 4, shape) + 0.5,
         "ties": lambda: rng.integers(-2, 3, shape).astype(np.float64)}[arg.domain]()
    return np.asarray(v).astype(dtype)


def _stored(host: np.ndarray, layout: str, kind: str) -> np.ndarray:
    """The leaf's array such that _view(leaf) has host's shape (and values, but for
    "expanded", which repeats host's first slice along dim 0)."""
    if layout == "transposed" and host.ndim >= 2:
        return np.ascontiguousarray(host.swapaxes(-1, -2))
    if layout in ("transposed", "narrowed") and host.ndim >= 1:
        pad = np.full(host.shape[:-1] + (1,), 0 if kind == "index" else _PAD, host.dtype)
        return np.concatenate([pad, host, pad, pad], axis=-1)
    if layout == "expanded" and host.ndim >= 1:
        return host[:1].copy()
    return host


def _view(t, layout: str, shape: tuple):
    if layout == "transposed" and len(shape) >= 2:
        return t.transpose(-1, -2)
    if layout in ("transposed", "narrowed") and len(shape) >= 1:
        return t.narrow(-1, 1, shape[-1])
    if layout == "expanded" and len(shape) >= 1:
        return t.expand(*shape)
    return t


def _leaves(sample, hosts, device, dtype, requires_grad=False) -> list:
    """Tensors on `device`; data inputs converted to `dtype`, and needing grad if asked."""
    return [shrew.tensor(h.astype(dtype) if arg.kind == "data" else h, device=device,
                         requires_grad=requires_grad and arg.kind == "data")
            for arg, h in zip(sample.args, hosts)]


def _call(case, sample, leaves, layout):
    views = [_view(t, layout, arg.shape) for t, arg in zip(leaves, sample.args)]
    return case.fn(*views, **sample.kwargs)


def reference_dtype(dtype: str) -> str:
    return "float64" if dtype in _FLOAT_NAMES else dtype


def forward(case, sample, hosts, layout, device, dtype, requires_grad=False):
    return _call(case, sample, _leaves(sample, hosts, device, dtype, requires_grad), layout)


def backprop(case, sample, hosts, layout, device, dtype, cot_dtype):
    """(output, leaves) after backward of sum(fn(...) * cotangent); the cotangent is rounded
    to cot_dtype, the dtype under test, so that device and reference share it."""
    leaves = _leaves(sample, hosts, device, dtype, requires_grad=True)
    out = _call(case, sample, leaves, layout)
    rng = np.random.default_rng(zlib.crc32(f"cotangent {case.name}{sample!r}".encode()))
    cot = np.asarray(rng.standard_normal(out.shape)).astype(cot_dtype)
    if out.requires_grad:
        (out * shrew.tensor(cot, dtype=out.dtype, device=out.device)).sum().backward()
    return out, [t for t in leaves if t.requires_grad]


# -- comparisons -----------------------------------------------------------------------------
def _where(case, sample, dtype, layout, device) -> str:
    return f"{case.describe()} on {device}, {dtype}, {layout} inputs {sample!r}"


def tolerance(out_dtype: str, in_dtype: str, terms: int):
    """(rtol, atol) for a float output: the looser of its dtype's and the inputs'; None
    (exact) for integer and bool outputs."""
    if out_dtype not in TOLERANCE:
        return None
    rtol, atol = max(TOLERANCE[out_dtype], TOLERANCE.get(in_dtype, (0, 0)))
    terms = max(terms, 1)
    return rtol * math.sqrt(terms), atol * terms


def assert_close(got: np.ndarray, want: np.ndarray, tol, where: str) -> None:
    if got.shape != want.shape:
        raise AssertionError(f"{where}: shape {got.shape}, expected {want.shape}")
    if tol is None:
        bad = got != want
    else:
        got, want = got.astype(np.float64), want.astype(np.float64)
        bad = ~np.isclose(got, want, rtol=tol[0], atol=tol[1], equal_nan=True)
    if bad.any():
        error = np.where(bad, np.abs(got.astype(np.float64) - want.astype(np.float64)), 0)
        at = np.unravel_index(np.argmax(np.nan_to_num(error, nan=np.inf)), got.shape)
        limits = "exact" if tol is None else f"rtol {tol[0]:.1e}, atol {tol[1]:.1e}"
        raise AssertionError(f"{where}: {bad.sum()} of {bad.size} values differ ({limits}); "
                             f"worst at {tuple(map(int, at))}: got {got[at].item()!r}, "
                             f"expected {want[at].item()!r}")


def _attempt(run):
    """run()'s result, or the ShrewError it raised."""
    try:
        return run()
    except shrew.ShrewError as exc:
        return exc


def _expect_same_error(expected: Exception, run, where: str) -> None:
    try:
        run()
    except Exception as exc:  # the device must raise what the CPU raises, nothing else
        if type(exc) is not type(expected):
            raise AssertionError(f"{where}: raised {type(exc).__name__}: {exc}; the CPU raises "
                                 f"{type(expected).__name__}: {expected}") from exc
        return
    raise AssertionError(f"{where}: did not raise; the CPU raises "
                         f"{type(expected).__name__}: {expected}")


def check_forward(device, case, sample, dtype, layout) -> None:
    """The device gives the CPU's shape and dtype, and float64 values within tolerance;
    or it raises the CPU's error."""
    where = _where(case, sample, dtype, layout, device)
    hosts = make_inputs(case, sample, dtype, layout)
    expected = _attempt(lambda: forward(case, sample, hosts, layout, "cpu", dtype))
    if isinstance(expected, Exception):
        _expect_same_error(expected, lambda: forward(case, sample, hosts, layout, device, dtype),
                           where)
        return
    got = forward(case, sample, hosts, layout, device, dtype)
    if got.dtype is not expected.dtype:
        raise AssertionError(f"{where}: dtype {got.dtype}, expected {expected.dtype}")
    values = got.detach().numpy()
    if case.check is not None:
        problem = case.check(values)
        assert problem is None, f"{where}: {problem}"
        assert values.shape == expected.shape, \
            f"{where}: shape {values.shape}, expected {expected.shape}"
        return
    ref = forward(case, sample, hosts, layout, "cpu", reference_dtype(dtype))
    assert_close(values, ref.detach().numpy(), tolerance(got.dtype.name, dtype, case.terms(sample)),
                 where)


def check_gradients(device, case, sample, layout, dtype="float32") -> None:
    """Leaf gradients from backward on the device match the CPU's float64 ones."""
    where = _where(case, sample, dtype, layout, device) + ", gradient of input"
    hosts = make_inputs(case, sample, dtype, layout)
    reference = _attempt(lambda: backprop(case, sample, hosts, layout, "cpu",
                                          reference_dtype(dtype), dtype))
    if isinstance(reference, Exception):
        _expect_same_error(reference, lambda: backprop(case, sample, hosts, layout, device,
                                                       dtype, dtype), where)
        return
    out, grads = backprop(case, sample, hosts, layout, device, dtype, dtype)
    ref_grads = reference[1]
    terms = case.terms(sample)
    for i, (leaf, ref) in enumerate(zip(grads, ref_grads)):
        want = np.zeros(ref.shape) if ref.grad is None else ref.grad.numpy()
        if leaf.grad is None:
            assert not want.any(), f"{where} {i}: no gradient reached it"
            continue
        assert leaf.grad.dtype is leaf.dtype and leaf.grad.device == leaf.device, \
            f"{where} {i}: gradient is {leaf.grad.dtype} on {leaf.grad.device}"
        # Gradients sum over what the forward spread: outputs per input times terms.
        spread = math.ceil(math.prod(out.shape) * max(terms, 1) / max(math.prod(leaf.shape), 1))
        tol = tolerance(out.dtype.name, dtype, max(terms, spread))
        if case.normwise and tol is not None and want.size:
            tol = (tol[0], max(tol[1], tol[0] * float(np.abs(want).max())))
        assert_close(leaf.grad.numpy(), want, tol, f"{where} {i} (stored as {list(leaf.shape)})")


def check_gradcheck(device, case, sample, layout, directions) -> None:
    """gradcheck on the device in float64: random directions, or the full Jacobian."""
    hosts = make_inputs(case, sample, "float64", layout)
    leaves = _leaves(sample, hosts, device, "float64", requires_grad=True)
    try:
        gradcheck(lambda *ts: _call(case, sample, ts, layout), leaves, directions=directions)
    except shrew.ShrewError as exc:
        where = _where(case, sample, "float64", layout, device)
        raise AssertionError(f"{where}: {exc}") from None


def differentiable(sample) -> bool:
    return not any(arg.domain in KINKS for arg in sample.args if arg.kind == "data")


def check_repeatable(device, case, sample, layout, dtype="float32") -> None:
    """The same computation (and seed) twice gives the same bits, gradients included."""
    hosts = make_inputs(case, sample, dtype, layout)
    runs = []
    for _ in range(2):
        shrew.manual_seed(1234)
        if case.grad:
            out, leaves = backprop(case, sample, hosts, layout, device, dtype, dtype)
            grads = [t.grad.numpy() for t in leaves if t.grad is not None]
            runs.append([out.detach().numpy()] + grads)
        else:
            runs.append([forward(case, sample, hosts, layout, device, dtype).detach().numpy()])
    for i, (a, b) in enumerate(zip(*runs)):
        if a.shape != b.shape or a.tobytes() != b.tobytes():
            what = "output" if i == 0 else f"gradient {i - 1}"
            raise AssertionError(f"{_where(case, sample, dtype, layout, device)}: the {what} "
                                 f"differs between two identical runs")


def check_compiled(device, case, sample, layout, dtype="float32") -> None:
    """shrew.compile of the case's call gives eager's output and gradients bit for bit, on
    the captures and on the replays that follow (a graph break runs eagerly: also equal).
    Unfused: this checks that the backend's primitives replay (fusion, which builds a
    kernel per program, is tested on models and on a chain of every fusable function)."""
    hosts = make_inputs(case, sample, dtype, layout)
    eager = _attempt(lambda: _run_with_grads(case, sample, hosts, layout, device, dtype, None))
    if isinstance(eager, Exception):
        return  # (check_raises covers the error)
    compiled = shrew.compile(lambda *leaves: _call(case, sample, leaves, layout),
                             options={"fuse": False})
    for call in range(4):  # two captures settle the program, then replays
        got = _run_with_grads(case, sample, hosts, layout, device, dtype, compiled)
        for i, (a, b) in enumerate(zip(got, eager)):
            if a.shape != b.shape or a.tobytes() != b.tobytes():
                what = "output" if i == 0 else f"gradient {i - 1}"
                raise AssertionError(f"{_where(case, sample, dtype, layout, device)}: compiled "
                                     f"call {call}'s {what} differs from eager's")


def _run_with_grads(case, sample, hosts, layout, device, dtype, compiled) -> list:
    """[output, leaf gradients...] as host arrays, from fn or its compiled twin."""
    shrew.manual_seed(1234)
    leaves = _leaves(sample, hosts, device, dtype, requires_grad=case.grad)
    out = compiled(*leaves) if compiled is not None else _call(case, sample, leaves, layout)
    if out.requires_grad:
        rng = np.random.default_rng(zlib.crc32(f"cotangent {case.name}{sample!r}".encode()))
        cot = np.asarray(rng.standard_normal(out.shape)).astype(dtype)
        (out * shrew.tensor(cot, dtype=out.dtype, device=out.device)).sum().backward()
    return [out.detach().numpy()] + [np.zeros(0) if t.grad is None else t.grad.numpy()
                                     for t in leaves if t.requires_grad]


def check_raises(device, case, sample, layout=DEFAULT_LAYOUT) -> None:
    """A bad input raises on the device the ShrewError it raises on the CPU."""
    where = _where(case, sample, "float32", layout, device)
    hosts = make_inputs(case, sample, "float32", layout)
    expected = _attempt(lambda: forward(case, sample, hosts, layout, "cpu", "float32"))
    if not isinstance(expected, shrew.ShrewError):
        raise AssertionError(f"{where}: the table says this must raise, but the CPU accepts it")
    _expect_same_error(expected, lambda: forward(case, sample, hosts, layout, device, "float32"),
                       where)
