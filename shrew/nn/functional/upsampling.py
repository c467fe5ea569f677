"""interpolate as a function (nearest, linear, bilinear, bicubic, trilinear), composed of
gathers: a gather's backward is a scatter-add, so every mode is differentiable."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...ops.creation import tensor
from ...core.errors import ArgumentError, ShapeError, UnsupportedError
from ...core.shape import fmt
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor
from .padding import take

_MODES = {"nearest": 1, "nearest-exact": 1, "linear": 1, "bilinear": 2, "bicubic": 2,
          "trilinear": 3}


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    """Keys' cubic convolution weights (a = -0.75, as PyTorch) of the four taps at
    offsets -1, 0, 1, 2 for fractional positions t."""
    a = -0.75

    def near(d: np.ndarray) -> np.ndarray:
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d: np.ndarray) -> np.ndarray:
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _resize_dim(x: Tensor, dim: int, out: int, mode: str, align_corners: bool,
                scale: float | None) -> Tensor:
    """Resample one dim to `out` entries (scale: the user's scale factor, which sets the
    source step as PyTorch does when one is given)."""
    size = x.shape[dim]
    dst = np.arange(out, dtype=np.float64)
    step = (1.0 / scale) if scale else size / out
    if mode == "nearest":
        return take(x, dim, np.minimum(np.floor(dst * step).astype(np.int64), size - 1))
    if mode == "nearest-exact":
        return take(x, dim, np.minimum(np.floor((dst + 0.5) * step).astype(np.int64),
                                       size - 1))
    if align_corners:
        src = dst * ((size - 1) / (out - 1)) if out > 1 else np.zeros(out)
    else:
        src = (dst + 0.5) * step - 0.5
    if mode == "bicubic":
        base = np.floor(src)
        weights = _cubic_weights(src - base)
        total = None
        for tap, w in zip(range(-1, 3), weights):
            index = np.clip(base.astype(np.int64) + tap, 0, size - 1)
            term = take(x, dim, index) * _along(w, dim, x.ndim, x)
            total = term if total is None else total + term
        assert total is not None
        return total
    src = np.maximum(src, 0.0)  # linear modes clamp below (PyTorch)
    lo = np.minimum(np.floor(src).astype(np.int64), size - 1)
    hi = np.minimum(lo + 1, size - 1)
    frac = src - lo
    return take(x, dim, lo) * _along(1.0 - frac, dim, x.ndim, x) + \
        take(x, dim, hi) * _along(frac, dim, x.ndim, x)


def _along(values: np.ndarray, dim: int, ndim: int, like: Tensor) -> Tensor:
    shape = [1] * ndim
    shape[dim] = len(values)
    return tensor(values.reshape(shape), dtype=like.dtype, device=like.device)


def interpolate(input: Tensor, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of [N, C, *spatial] to `size`, or by `scale_factor`.
    mode: nearest, nearest-exact, linear (1 spatial dim), bilinear / bicubic (2),
    trilinear (3); align_corners for the linear and cubic modes.  Each dim is resampled
    in turn (the modes are separable)."""
    op = "interpolate"
    x = _tensor(op, "input", input)
    if mode not in _MODES:
        raise ArgumentError(f"{op}: mode must be one of {', '.join(_MODES)}, got {mode!r}")
    spatial = x.ndim - 2
    if spatial < 1 or (mode not in ("nearest", "nearest-exact") and spatial != _MODES[mode]):
        raise ShapeError(f"{op}: mode {mode!r} does not fit input {fmt(x.shape)}")
    if antialias:
        raise UnsupportedError(f"{op}: antialias=True is not supported")
    if align_corners is not None and mode.startswith("nearest"):
        raise ArgumentError(f"{op}: align_corners is only for the linear and cubic modes")
    if (size is None) == (scale_factor is None):
        raise ArgumentError(f"{op}: give exactly one of size and scale_factor")
    scales: list[float | None]
    if size is not None:
        sizes = [size] * spatial if isinstance(size, int) else list(size)
        scales = [None] * spatial
    else:
        factors = ([scale_factor] * spatial if isinstance(scale_factor, (int, float))
                   else list(scale_factor))  # type: ignore[arg-type]
        if len(factors) != spatial:
            raise ShapeError(f"{op}: scale_factor {scale_factor} does not fit input "
                             f"{fmt(x.shape)}")
        sizes = [math.floor(n * f) for n, f in zip(x.shape[2:], factors)]
        scales = [None if recompute_scale_factor else float(f) for f in factors]
    if len(sizes) != spatial or any(s < 1 for s in sizes):
        raise ShapeError(f"{op}: size {size} does not fit input {fmt(x.shape)}")
    for i, (out, scale) in enumerate(zip(sizes, scales)):
        if out != x.shape[2 + i] or scale not in (None, 1.0):
            x = _resize_dim(x, 2 + i, out, mode, bool(align_corners), scale)
    return x


def upsample_nearest(input: Tensor, size: int | Sequence[int] | None = None,  # noqa: A002
                     scale_factor: float | Sequence[float] | None = None) -> Tensor:
    """PyTorch's older name for interpolate(mode="nearest")."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: int | Sequence[int] | None = None,  # noqa: A002
                      scale_factor: float | Sequence[float] | None = None) -> Tensor:
    """PyTorch's older name for interpolate(mode="bilinear", align_corners=True)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
