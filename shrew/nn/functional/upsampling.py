"""interpolate as a function (nearest, nearest-exact, linear, bilinear, bicubic, trilinear,
area; antialiased bilinear and bicubic) and its older names (upsample, upsample_bilinear,
upsample_nearest).  The point modes are composed of gathers (a gather's backward is a
scatter-add); area and the antialiased modes weigh a window of inputs per output, one
[out, in] matrix per dim, computed from the sizes alone and applied as a product, so every
mode is differentiable on every backend."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...core.autocast import autocast_op
from ...ops.creation import tensor
from ...core.errors import ArgumentError, ShapeError
from ...core.shape import fmt
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor
from .padding import take

_MODES = {"nearest": 1, "nearest-exact": 1, "area": 1, "linear": 1, "bilinear": 2,
          "bicubic": 2, "trilinear": 3}
_ANY_DIMS = ("nearest", "nearest-exact", "area")  # modes for 1, 2 or 3 spatial dims


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
    if mode == "area":
        return _weigh_dim(x, dim, _area_weights(size, out))
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


def _area_weights(size: int, out: int) -> np.ndarray:
    """adaptive_avg_pool's windows as an [out, size] matrix: output i averages the inputs
    from floor(i * size / out) to ceil((i + 1) * size / out)."""
    weights = np.zeros((out, size))
    for i in range(out):
        start, stop = (i * size) // out, -((-(i + 1) * size) // out)
        weights[i, start:stop] = 1.0 / (stop - start)
    return weights


def _antialias_weights(size: int, out: int, mode: str, align_corners: bool,
                       scale: float | None) -> np.ndarray:
    """PyTorch's antialiased resampling as an [out, size] matrix: when shrinking, the
    triangle (bilinear) or cubic (Keys, A = -0.5) filter is stretched by the scale so each
    output averages every input it covers; each row's weights are normalised to sum to 1."""
    if align_corners:
        step = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        step = (1.0 / scale) if scale else size / out
    taps = 4 if mode == "bicubic" else 2
    stretch = max(step, 1.0)
    support = taps / 2 * stretch
    weights = np.zeros((out, size))
    for i in range(out):
        centre = step * (i + 0.5)
        lo = max(int(centre - support + 0.5), 0)
        hi = min(int(centre + support + 0.5), size)
        d = np.abs((np.arange(lo, hi) - centre + 0.5) / stretch)
        if mode == "bicubic":
            a = -0.5
            w = np.where(d < 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                         np.where(d < 2, (((d - 5) * d + 8) * d - 4) * a, 0.0))
        else:
            w = np.maximum(1.0 - d, 0.0)
        total = w.sum()
        weights[i, lo:hi] = w / total if total != 0 else w
    return weights


def _weigh_dim(x: Tensor, dim: int, weights: np.ndarray) -> Tensor:
    """x with dim replaced by weights [out, in] times it: one matrix product."""
    w = tensor(weights.T, dtype=x.dtype, device=x.device)
    return (x.movedim(dim, -1) @ w).movedim(-1, dim)


def _along(values: np.ndarray, dim: int, ndim: int, like: Tensor) -> Tensor:
    shape = [1] * ndim
    shape[dim] = len(values)
    return tensor(values.reshape(shape), dtype=like.dtype, device=like.device)


@autocast_op("upsample")
def interpolate(input: Tensor, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of [N, C, *spatial] to `size`, or by `scale_factor`.
    mode: nearest, nearest-exact, area (1 to 3 spatial dims), linear (1), bilinear /
    bicubic (2), trilinear (3); align_corners for the linear and cubic modes; antialias
    for bilinear and bicubic on 4-d input (a low-pass filter when shrinking, as PyTorch's
    _upsample_*_aa).  recompute_scale_factor=True computes the output size from the
    scale factor and then interpolates as if that size had been given.  Each dim is
    resampled in turn (the modes are separable)."""
    op = "interpolate"
    x = _tensor(op, "input", input)
    if mode not in _MODES:
        raise ArgumentError(f"{op}: mode must be one of {', '.join(_MODES)}, got {mode!r}")
    spatial = x.ndim - 2
    if spatial < 1 or spatial > 3 or (mode not in _ANY_DIMS and spatial != _MODES[mode]):
        raise ShapeError(f"{op}: mode {mode!r} does not fit input {fmt(x.shape)}")
    if antialias and (mode not in ("bilinear", "bicubic") or x.ndim != 4):
        raise ArgumentError(f"{op}: antialias=True is for modes 'bilinear' and 'bicubic' "
                            f"on 4-d input, got mode {mode!r} and input {fmt(x.shape)}")
    if align_corners is not None and mode in _ANY_DIMS:
        raise ArgumentError(f"{op}: align_corners is only for the linear and cubic modes")
    if (size is None) == (scale_factor is None):
        raise ArgumentError(f"{op}: give exactly one of size and scale_factor")
    if recompute_scale_factor and size is not None:
        raise ArgumentError(f"{op}: recompute_scale_factor is not meaningful with an "
                            f"explicit size")
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
        if antialias:
            x = _weigh_dim(x, 2 + i, _antialias_weights(x.shape[2 + i], out, mode,
                                                         bool(align_corners), scale))
        elif out != x.shape[2 + i] or scale not in (None, 1.0):
            x = _resize_dim(x, 2 + i, out, mode, bool(align_corners), scale)
    return x.clone() if x is input else x  # a new tensor, as PyTorch's, at the same size too


def upsample(input: Tensor, size: int | Sequence[int] | None = None,  # noqa: A002
             scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """interpolate's older name (deprecated in PyTorch, kept for old programs)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: int | Sequence[int] | None = None,  # noqa: A002
                     scale_factor: float | Sequence[float] | None = None) -> Tensor:
    """interpolate(mode="nearest")."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: int | Sequence[int] | None = None,  # noqa: A002
                      scale_factor: float | Sequence[float] | None = None) -> Tensor:
    """interpolate(mode="bilinear", align_corners=True), as PyTorch's old layer did."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def upsample_bilinear2d_aa(input: Tensor,  # noqa: A002
                           output_size: Sequence[int] | None = None,
                           align_corners: bool = False,
                           scale_factors: Sequence[float] | None = None,
                           scales_h: float | None = None,
                           scales_w: float | None = None) -> Tensor:
    """torch._upsample_bilinear2d_aa in both its forms: antialiased bilinear resampling to
    output_size (scales_h / scales_w, where given, set the source step as a scale factor
    does), or by scale_factors (then the output size is floor(size * factor))."""
    op = "_upsample_bilinear2d_aa"
    x = _tensor(op, "input", input)
    if x.ndim != 4:
        raise ShapeError(f"{op}: needs 4-d input, got {fmt(x.shape)}")
    if (output_size is None) == (scale_factors is None):
        raise ArgumentError(f"{op}: give exactly one of output_size and scale_factors")
    scales: Sequence[float | None]
    if output_size is None:
        assert scale_factors is not None
        output_size = [math.floor(n * f) for n, f in zip(x.shape[2:], scale_factors)]
        scales = list(scale_factors)
    else:
        scales = (scales_h, scales_w)
    if len(output_size) != 2 or len(scales) != 2 or min(output_size) < 1:
        raise ShapeError(f"{op}: output size {tuple(output_size)} does not fit input "
                         f"{fmt(x.shape)}")
    for i, (out, scale) in enumerate(zip(output_size, scales)):
        x = _weigh_dim(x, 2 + i, _antialias_weights(x.shape[2 + i], int(out), "bilinear",
                                                     align_corners, scale))
    return x
