"""testing.assert_close: PyTorch's comparison for tests, with its default tolerances by
dtype and its messages.  Tensors are compared on the host (numpy), after the checks of
shape, dtype and device that PyTorch makes first."""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.errors import ShrewError, ShrewValueError
from ..core.fields import AnyTensor

# (rtol, atol) by dtype, PyTorch's table; integers and bool compare exactly.
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
               "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
               "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}  # their parts'


def _widened(array: np.ndarray) -> np.ndarray:
    """float64, or complex128 for complex values (whose parts are compared together)."""
    return array.astype(np.complex128 if array.dtype.kind == "c" else np.float64)


class CloseError(ShrewError, AssertionError):
    """Values that assert_close finds apart: an AssertionError, as PyTorch's."""


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: Any = None) -> None:
    """Raise CloseError unless |actual - expected| <= atol + rtol * |expected| everywhere
    (tensors, numbers, numpy arrays, and sequences or mappings of them, pairwise)."""
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ShrewValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, "
                              f"but got no {missing}.")
    try:
        _compare(actual, expected, rtol, atol, equal_nan, check_device, check_dtype)
    except CloseError as exc:
        if msg is None:
            raise
        raise CloseError(msg(str(exc)) if callable(msg) else str(msg)) from None


def _compare(actual: Any, expected: Any, rtol: float | None, atol: float | None,
             equal_nan: bool, check_device: bool, check_dtype: bool) -> None:
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        if set(actual) != set(expected):
            raise CloseError(f"The keys of the mappings do not match: {sorted(actual)} != "
                             f"{sorted(expected)}.")
        for key in expected:
            _compare(actual[key], expected[key], rtol, atol, equal_nan, check_device,
                     check_dtype)
    elif _is_sequence(expected) and _is_sequence(actual):
        if len(actual) != len(expected):
            raise CloseError(f"The length of the sequences mismatch: {len(actual)} != "
                             f"{len(expected)}")
        for a, e in zip(actual, expected):
            _compare(a, e, rtol, atol, equal_nan, check_device, check_dtype)
    elif isinstance(expected, numbers.Number) and isinstance(actual, numbers.Number):
        _scalars(actual, expected, rtol, atol, equal_nan)
    else:
        _tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _scalars(actual: Any, expected: Any, rtol: float | None, atol: float | None,
             equal_nan: bool) -> None:
    exact = isinstance(expected, (bool, int)) and isinstance(actual, (bool, int))
    rtol, atol = (0.0, 0.0) if exact else (rtol, atol) if rtol is not None else (1e-7, 1e-7)
    assert atol is not None
    if actual == expected or (equal_nan and math.isnan(actual) and math.isnan(expected)):
        return
    diff = abs(actual - expected)
    if diff <= atol + rtol * abs(expected):
        return
    rel = diff / abs(expected) if expected else math.inf
    kind = "equal" if exact else "close"
    raise CloseError(f"Scalars are not {kind}!\n\nExpected {expected} but got {actual}.\n"
                     f"Absolute difference: {diff} (up to {atol} allowed)\n"
                     f"Relative difference: {rel} (up to {rtol} allowed)")


def _tensors(actual: Any, expected: Any, rtol: float | None, atol: float | None,
             equal_nan: bool, check_device: bool, check_dtype: bool) -> None:
    if not isinstance(actual, (AnyTensor, np.ndarray)) or not isinstance(
            expected, (AnyTensor, np.ndarray)):
        raise CloseError(f"assert_close: cannot compare {type(actual).__name__} with "
                         f"{type(expected).__name__}")
    for name, check in (("shape", True), ("dtype", check_dtype)):
        a, e = getattr(actual, name), getattr(expected, name)
        if check and a != e:
            raise CloseError(f"The values for attribute '{name}' do not match: {a} != {e}.")
    if check_device and isinstance(actual, AnyTensor) and isinstance(expected, AnyTensor):
        if actual.device != expected.device:
            raise CloseError(f"The values for attribute 'device' do not match: "
                             f"{actual.device} != {expected.device}.")
    dtype_name = str(getattr(expected, "dtype", "")).removeprefix("shrew.")
    if rtol is None:
        rtol, atol = _TOLERANCES.get(dtype_name, (0.0, 0.0))
    assert atol is not None
    a, e = _host(actual), _host(expected)
    _mismatches(a, e, rtol, atol, equal_nan, exact=dtype_name not in _TOLERANCES)


def _host(value: Any) -> np.ndarray:
    array = value.detach().cpu().numpy() if isinstance(value, AnyTensor) else value
    return _widened(np.asarray(array))


def _mismatches(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool,
                exact: bool) -> None:
    with np.errstate(invalid="ignore", divide="ignore"):
        close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if close.all():
            return
        diff = np.abs(a - e)
        rel = diff / np.abs(e)
    bad = int((~close).sum())
    kind = "equal" if exact else "close"
    lines = [f"Tensor-likes are not {kind}!", "",
             f"Mismatched elements: {bad} / {a.size} ({100 * bad / a.size:.1f}%)"]
    for label, values, allowed in (("absolute", diff, atol), ("relative", rel, rtol)):
        flat = np.where(np.isnan(values), -np.inf, values).argmax()
        where = tuple(int(i) for i in np.unravel_index(flat, a.shape))
        value = values.flat[flat]
        shown = int(value) if exact and label == "absolute" else float(value)
        bound = "" if exact else f" (up to {allowed} allowed)"
        lines.append(f"Greatest {label} difference: {shown} at index {where}{bound}")
    raise CloseError("\n".join(lines))


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """PyTorch's older assert_close: `expected` (a tensor, number or sequence) is compared in
    `actual`'s dtype, NaNs equal by default."""
    from .._tensor import Tensor
    from ..ops.creation import tensor
    actual = actual if isinstance(actual, Tensor) else tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype, device=actual.device)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_dtype=False, msg=msg or None)
