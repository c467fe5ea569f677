"""Window functions: torch.signal.windows (hann, hamming, kaiser, ... with sym=) and the
top-level torch.hann_window, hamming_window, blackman_window, bartlett_window and
kaiser_window (with periodic=, the opposite of sym).  Each window is computed on the host in
float64 from its formula and made a leaf of the requested dtype on the device, as
linspace and arange are (ops/creation.py)."""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.dtype import as_dtype, get_default_dtype
from ..core.errors import ArgumentError, DTypeError, ShrewTypeError, ShrewValueError, type_name
from .creation import _host

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import DTypeLike, DeviceLike

_NUTTALL = (0.3635819, 0.4891775, 0.1365995, 0.0106411)
_BLACKMAN = (0.42, 0.5, 0.08)


def _length(op: str, M: Any, error: type[Exception], name: str = "M") -> int:  # noqa: N803
    if not isinstance(M, numbers.Integral) or isinstance(M, bool):
        raise ShrewTypeError(f"{op}: the window length must be an int, got {type_name(M)}")
    if M < 0:
        raise error(f"{op} requires non-negative window length, got {name}={M}")
    return int(M)


def _window(op: str, host: np.ndarray, dtype: DTypeLike | None, device: DeviceLike | None,
            requires_grad: bool, floats: tuple[str, ...]) -> Tensor:
    dt = get_default_dtype() if dtype is None else as_dtype(dtype)
    if dt.name not in floats:
        error = ShrewValueError if len(floats) == 2 else DTypeError
        raise error(f"{op} expects {' or '.join(floats)} dtypes, got: {dt}")
    return _host(op, host, dt, device, requires_grad)


# -- torch.signal.windows: a symmetric window of M points, or (sym=False) the first M of
#    M + 1, for spectral analysis ---------------------------------------------------------------
def _signal_window(op: str, M: Any, sym: bool, dtype: DTypeLike | None,  # noqa: N803
                   device: DeviceLike | None, requires_grad: bool,
                   values: Callable[[int], np.ndarray]) -> Tensor:
    """values(N) gives the N-point symmetric window (N >= 2)."""
    n = _length(op, M, ShrewValueError)
    if n <= 1:
        host = np.ones(n)
    else:
        host = values(n) if sym else values(n + 1)[:n]
    return _window(op, host, dtype, device, requires_grad, ("float32", "float64"))


def general_cosine(M: int, *, a: Iterable[float], sym: bool = True,  # noqa: N803
                   dtype: DTypeLike | None = None, layout: Any = None,
                   device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """sum_i (-1)^i a_i cos(2 pi i n / (N - 1)), n = 0 .. N - 1."""
    if not isinstance(a, (list, tuple)):
        raise ShrewTypeError("general_cosine: Coefficients must be a list/tuple")
    coefficients = [float(c) for c in a]

    def values(n: int) -> np.ndarray:
        k = np.arange(n) * (2 * math.pi / (n - 1))
        return sum(((-1) ** i) * c * np.cos(i * k) for i, c in enumerate(coefficients))
    return _signal_window("general_cosine", M, sym, dtype, device, requires_grad, values)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True,  # noqa: N803
                    dtype: DTypeLike | None = None, layout: Any = None,
                    device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """alpha - (1 - alpha) cos(2 pi n / (N - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: DTypeLike | None = None,  # noqa: N803
         layout: Any = None, device: DeviceLike | None = None,
         requires_grad: bool = False) -> Tensor:
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, device=device,
                           requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: DTypeLike | None = None,  # noqa: N803
            layout: Any = None, device: DeviceLike | None = None,
            requires_grad: bool = False) -> Tensor:
    return general_hamming(M, sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: DTypeLike | None = None,  # noqa: N803
             layout: Any = None, device: DeviceLike | None = None,
             requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=list(_BLACKMAN), sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: DTypeLike | None = None,  # noqa: N803
            layout: Any = None, device: DeviceLike | None = None,
            requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=list(_NUTTALL), sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: DTypeLike | None = None,  # noqa: N803
             layout: Any = None, device: DeviceLike | None = None,
             requires_grad: bool = False) -> Tensor:
    """The triangle 1 - |2 n / (N - 1) - 1|."""
    return _signal_window("bartlett", M, sym, dtype, device, requires_grad,
                          lambda n: 1 - np.abs(np.arange(n) * (2 / (n - 1)) - 1))


def cosine(M: int, *, sym: bool = True, dtype: DTypeLike | None = None,  # noqa: N803
           layout: Any = None, device: DeviceLike | None = None,
           requires_grad: bool = False) -> Tensor:
    """sin(pi (n + 1/2) / N)."""
    return _signal_window("cosine", M, sym, dtype, device, requires_grad,
                          lambda n: np.sin((np.arange(n) + 0.5) * (math.pi / n)))


def exponential(M: int, *, center: float | None = None, tau: float = 1.0,  # noqa: N803
                sym: bool = True, dtype: DTypeLike | None = None, layout: Any = None,
                device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """exp(-|n - center| / tau); center (N - 1) / 2 by default, and given only with
    sym=False."""
    if sym and center is not None:
        raise ShrewValueError("exponential: Center must be None for symmetric windows")
    if tau <= 0:
        raise ShrewValueError(f"exponential: Tau must be positive, got: {tau} instead.")

    def values(n: int) -> np.ndarray:
        c = (n - 1) / 2 if center is None else center
        return np.exp(-np.abs(np.arange(n) - c) / tau)
    return _signal_window("exponential", M, sym, dtype, device, requires_grad, values)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True,  # noqa: N803
             dtype: DTypeLike | None = None, layout: Any = None,
             device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """exp(-(n - (N - 1) / 2)^2 / (2 std^2))."""
    if std <= 0:
        raise ShrewValueError(f"gaussian: Standard deviation must be positive, got: {std} "
                              "instead.")
    return _signal_window("gaussian", M, sym, dtype, device, requires_grad,
                          lambda n: np.exp(-((np.arange(n) - (n - 1) / 2) / std) ** 2 / 2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True,  # noqa: N803
           dtype: DTypeLike | None = None, layout: Any = None,
           device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)."""
    if beta < 0:
        raise ShrewValueError(f"kaiser: beta must be non-negative, got: {beta} instead.")
    return _signal_window("kaiser", M, sym, dtype, device, requires_grad,
                          lambda n: _kaiser(n, beta))


def _kaiser(n: int, beta: float) -> np.ndarray:
    r = np.arange(n) * (2 / (n - 1)) - 1
    return np.i0(beta * np.sqrt(np.clip(1 - r * r, 0, None))) / np.i0(beta)


# -- torch.<name>_window: periodic=True gives the first N of N + 1 points ---------------------
def _periodic_window(op: str, window_length: Any, periodic: bool, dtype: DTypeLike | None,
                     device: DeviceLike | None, requires_grad: bool,
                     values: Callable[[int], np.ndarray]) -> Tensor:
    n = _length(op, window_length, ArgumentError, "window_length")
    if n <= 1:
        host = np.ones(n)
    else:
        host = values(n + 1)[:n] if periodic else values(n)
    return _window(op, host, dtype, device, requires_grad, ("float16", "bfloat16", "float32",
                                                            "float64"))


def _cosine_sum(coefficients: tuple[float, ...]) -> Callable[[int], np.ndarray]:
    def values(n: int) -> np.ndarray:
        k = np.arange(n) * (2 * math.pi / (n - 1))
        return sum(((-1) ** i) * c * np.cos(i * k) for i, c in enumerate(coefficients))
    return values


def hann_window(window_length: int, periodic: bool = True, *, dtype: DTypeLike | None = None,
                layout: Any = None, device: DeviceLike | None = None,
                requires_grad: bool = False) -> Tensor:
    return _periodic_window("hann_window", window_length, periodic, dtype, device,
                            requires_grad, _cosine_sum((0.5, 0.5)))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: DTypeLike | None = None, layout: Any = None,
                   device: DeviceLike | None = None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Tensor:
    """alpha - beta cos(2 pi n / (N - 1)) (pin_memory: accepted, as torch's signature has
    it; shrew's host memory needs no pinning)."""
    return _periodic_window("hamming_window", window_length, periodic, dtype, device,
                            requires_grad, _cosine_sum((alpha, beta)))


def blackman_window(window_length: int, periodic: bool = True, *,
                    dtype: DTypeLike | None = None, layout: Any = None,
                    device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return _periodic_window("blackman_window", window_length, periodic, dtype, device,
                            requires_grad, _cosine_sum(_BLACKMAN))


def bartlett_window(window_length: int, periodic: bool = True, *,
                    dtype: DTypeLike | None = None, layout: Any = None,
                    device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return _periodic_window("bartlett_window", window_length, periodic, dtype, device,
                            requires_grad,
                            lambda n: 1 - np.abs(np.arange(n) * (2 / (n - 1)) - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: DTypeLike | None = None, layout: Any = None,
                  device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return _periodic_window("kaiser_window", window_length, periodic, dtype, device,
                            requires_grad, lambda n: _kaiser(n, beta))
