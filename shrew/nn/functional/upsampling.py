"""Padding modes, pixel (un)shuffle and interpolation, composed of gathers and
reshapes: a gather's backward is a scatter-add, so every one is differentiable."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...ops.creation import tensor
from ...core.errors import ShapeError, ShrewError
from ...core.shape import fmt
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def take(x: Tensor, dim: int, index: np.ndarray) -> Tensor:
    """x's entries along dim at the (host) integer positions `index`."""
    shape = [1] * x.ndim
    shape[dim] = len(index)
    target = list(x.shape)
    target[dim] = len(index)
    positions = tensor(index.astype(np.int64), device=x.device)
    return x.gather(dim, positions.reshape(*shape).expand(*target))


def _source_index(mode: str, size: int, lo: int, hi: int) -> np.ndarray:
    """For each position of a dim padded by lo / hi, the input position it copies."""
    i = np.arange(-lo, size + hi)
    if mode == "replicate":
        return np.clip(i, 0, size - 1)
    if mode == "circular":
        return i % size
    period = 2 * (size - 1)  # reflect: mirror at the edges, not repeating them
    i = np.abs(i) % period if period else np.zeros_like(i)
    return np.where(i >= size, period - i, i)


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """Pad the last len(pad) // 2 dims (pad as (left, right, top, bottom, ...), last dim
    first).  mode: "constant" (value, default 0; negative pads crop), "reflect" (mirror
    without repeating the edge, pads < size), "replicate" (repeat the edge), "circular"
    (wrap around, pads <= size)."""
    x = _tensor("pad", "input", input)
    if mode not in _PAD_MODES:
        raise ShrewError(f"pad: mode must be one of {', '.join(_PAD_MODES)}, got {mode!r}")
    pads = tuple(pad)
    if mode == "constant":
        return x.pad(pads, 0.0 if value is None else value)
    if value not in (None, 0, 0.0):
        raise ShrewError(f"pad: a value is only for mode='constant', got {value!r} with "
                         f"mode={mode!r}")
    if len(pads) % 2 or len(pads) // 2 >= x.ndim or any(p < 0 for p in pads):
        raise ShapeError(f"pad: mode {mode!r} takes non-negative pads for at most "
                         f"{x.ndim - 1} trailing dims of input {fmt(x.shape)}, got {pads}")
    for i in range(len(pads) // 2):
        dim, lo, hi = x.ndim - 1 - i, pads[2 * i], pads[2 * i + 1]
        size = x.shape[dim]
        limit = size - 1 if mode == "reflect" else size
        if mode != "replicate" and max(lo, hi) > limit:
            raise ShapeError(f"pad: {mode} padding ({lo}, {hi}) of dim {dim} must be at most "
                             f"{limit} for input {fmt(x.shape)}")
        if size == 0:
            raise ShapeError(f"pad: cannot {mode}-pad the empty dim {dim} of {fmt(x.shape)}")
        if lo or hi:
            x = take(x, dim, _source_index(mode, size, lo, hi))
    return x


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """[*, C r^2, H, W] -> [*, C, H r, W r]: channel blocks become r x r pixel blocks."""
    x, r = _tensor("pixel_shuffle", "input", input), upscale_factor
    if x.ndim < 3 or r < 1 or x.shape[-3] % (r * r):
        raise ShapeError(f"pixel_shuffle: input must be [*, C * {r}^2, H, W], got "
                         f"{fmt(x.shape)}")
    *lead, c, h, w = x.shape
    k = len(lead)
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    y = y.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """[*, C, H r, W r] -> [*, C r^2, H, W]: the inverse of pixel_shuffle."""
    x, r = _tensor("pixel_unshuffle", "input", input), downscale_factor
    if x.ndim < 3 or r < 1 or x.shape[-1] % r or x.shape[-2] % r:
        raise ShapeError(f"pixel_unshuffle: input must be [*, C, H * {r}, W * {r}], got "
                         f"{fmt(x.shape)}")
    *lead, c, h, w = x.shape
    k = len(lead)
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    y = y.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return y.reshape(*lead, c * r * r, h // r, w // r)


# -- interpolation ----------------------------------------------------------------------------
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
        raise ShrewError(f"{op}: mode must be one of {', '.join(_MODES)}, got {mode!r}")
    spatial = x.ndim - 2
    if spatial < 1 or (mode not in ("nearest", "nearest-exact") and spatial != _MODES[mode]):
        raise ShapeError(f"{op}: mode {mode!r} does not fit input {fmt(x.shape)}")
    if antialias:
        raise ShrewError(f"{op}: antialias=True is not supported")
    if align_corners is not None and mode.startswith("nearest"):
        raise ShrewError(f"{op}: align_corners is only for the linear and cubic modes")
    if (size is None) == (scale_factor is None):
        raise ShrewError(f"{op}: give exactly one of size and scale_factor")
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
