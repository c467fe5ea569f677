"""set_printoptions and the value formatting of Tensor.__repr__, as PyTorch's
(torch/_tensor_str.py): floats with `precision` digits after the point, all in fixed or all
in scientific notation, integral floats as "1.", summarised past `threshold` elements."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ShrewValueError


@dataclass
class _Options:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTIONS = _Options()
_PROFILES = {"default": _Options(), "short": _Options(2, 1000, 2, 80),
             "full": _Options(4, float("inf"), 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """torch.set_printoptions: a profile ("default", "short", "full") first, then the
    options given; sci_mode None lets the values choose."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ShrewValueError(f"set_printoptions: profile must be one of "
                                  f"{sorted(_PROFILES)}, got {profile!r}")
        base = _PROFILES[profile]
        for name in ("precision", "threshold", "edgeitems", "linewidth"):
            setattr(PRINT_OPTIONS, name, getattr(base, name))
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTIONS, name, value)
    PRINT_OPTIONS.sci_mode = sci_mode


def _float_formatter(values: np.ndarray) -> tuple[str, bool]:
    """(the format spec, whether integral values print as "1."), from the finite non-zero
    values as PyTorch's _Formatter chooses."""
    p = PRINT_OPTIONS.precision
    finite = np.abs(values[np.isfinite(values) & (values != 0)]).astype(np.float64)
    if finite.size == 0:  # zeros, infs and nans only: PyTorch prints "0."
        return ".0f", True
    lo, hi = finite.min(), finite.max()
    integral = bool(np.all(finite == np.ceil(finite)))
    sci = hi / lo > 1000.0 or hi > 1.0e8 or (not integral and lo < 1.0e-4)
    if PRINT_OPTIONS.sci_mode is not None:
        sci = PRINT_OPTIONS.sci_mode
    if sci:
        return f".{p}e", False
    return (".0f", True) if integral else (f".{p}f", False)


def _shown(host: np.ndarray) -> np.ndarray:
    """The values a summarised repr shows (edgeitems at each end of every dim), flat."""
    n = PRINT_OPTIONS.edgeitems
    if host.size <= PRINT_OPTIONS.threshold:
        return host.reshape(-1)
    for d in range(host.ndim):
        if host.shape[d] > 2 * n:
            host = np.concatenate([np.take(host, range(n), d),
                                   np.take(host, range(host.shape[d] - n, host.shape[d]), d)], d)
    return host.reshape(-1)


def _padded_formatter(shown: np.ndarray):  # type: ignore[no-untyped-def]
    """The formatter of one float value: PyTorch's spec, padded to the widest shown."""
    spec, point = _float_formatter(shown)

    def fmt(v: float) -> str:
        text = format(float(v), spec)
        return text + "." if point and np.isfinite(v) else text
    # the width comes from the finite non-zero values shown
    width = max((len(fmt(v)) for v in shown[np.isfinite(shown) & (shown != 0)]),
                default=len(fmt(0.0)))
    return lambda v: fmt(v).rjust(width)


def format_values(host: np.ndarray) -> str:
    """The bracketed values as PyTorch prints them (prefix "tensor(")."""
    opts = PRINT_OPTIONS
    kwargs: dict = {"separator": ", ", "prefix": "tensor(", "max_line_width": opts.linewidth + 1,
                    "threshold": opts.threshold if opts.threshold != float("inf")
                    else np.iinfo(np.int64).max, "edgeitems": opts.edgeitems}
    if host.dtype.kind == "f":
        kwargs["formatter"] = {"float_kind": _padded_formatter(_shown(host))}
    elif host.dtype.kind == "c":  # each part formatted on its own, as PyTorch's
        shown = _shown(host)
        real, imag = _padded_formatter(shown.real), _padded_formatter(shown.imag)

        def complex_text(v: complex) -> str:
            imag_text = (imag(v.imag) + "j").lstrip()
            return real(v.real) + ("" if imag_text[0] in "+-" else "+") + imag_text
        kwargs["formatter"] = {"complex_kind": complex_text}
    # PyTorch marks skipped elements of a row with " ..." (numpy: "...")
    return np.array2string(host, **kwargs).replace(", ...,", ",  ...,")
