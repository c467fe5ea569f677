"""grid_sample and affine_grid (a spatial transformer's sampler and its grid), in 2-d and
3-d, composed of gathers: each output point reads its neighbours' values from the
flattened input at indices computed on the device from the grid, so backward is a
scatter-add into the input and, through the interpolation weights, a gradient for the grid.

Coordinates follow PyTorch's grid_sampler: a grid value of -1 / 1 is the centre of the
first / last pixel (align_corners=True) or its outer edge (False); padding_mode decides
what a point outside reads: zeros, the border's value, or the input reflected at its
edges.  The padding's gradient is PyTorch's too (0 where a coordinate is clipped, the
sign flipped where it is reflected)."""
from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ...core.dtype import int64
from ...core.errors import ArgumentError, DTypeError, ShapeError
from ...core.shape import fmt, numel
from ...ops.creation import tensor
from ...ops.elementwise.recorded import where
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor

MODES = ("bilinear", "nearest", "bicubic")  # PyTorch's interpolation_mode 0, 1, 2
PADDINGS = ("zeros", "border", "reflection")  # its padding_mode 0, 1, 2


def _unnormalize(g: Tensor, size: int, align_corners: bool) -> Tensor:
    """Grid values in [-1, 1] as pixel coordinates of a dim of `size` entries."""
    if align_corners:
        return (g + 1) * ((size - 1) / 2)
    return ((g + 1) * size - 1) / 2


def _clip(c: Tensor, size: int) -> Tensor:
    """c clipped to [0, size - 1], its gradient 0 where clipped (the bounds included), as
    PyTorch's clip_coordinates."""
    limit = size - 1
    return where(c <= 0, 0.0, where(c >= limit, float(limit), c))


def _reflect(c: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """c reflected into [twice_low / 2, twice_high / 2] as often as needed (the gradient's
    sign flips with each reflection), as PyTorch's reflect_coordinates."""
    if twice_low == twice_high:
        return c * 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    offset = c - low
    sign = where(offset < 0, -1.0, 1.0).detach()
    distance = offset * sign
    flips = (distance / span).floor().detach()
    extra = distance - flips * span
    return where(flips % 2 == 0, extra + low, (span - extra) + low)


def _pad(c: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """A continuous coordinate moved inside the input as padding_mode says (zeros leaves
    it: its points outside read zeros)."""
    if padding_mode == "border":
        return _clip(c, size)
    if padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        return _clip(c, size)
    return c


def _cubic(t: Tensor) -> list[Tensor]:
    """The four cubic-convolution weights (A = -0.75, PyTorch's) of the taps at offsets
    -1, 0, 1, 2 from a point at fraction t past the second."""
    a = -0.75

    def near(d: Tensor) -> Tensor:
        return ((d * (a + 2) - (a + 3)) * d) * d + 1

    def far(d: Tensor) -> Tensor:
        return ((d * a - 5 * a) * d + 8 * a) * d - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


class _Reader:
    """Reads input values at integer coordinates (one [N, P] tensor per spatial dim,
    outermost first), zero where a coordinate falls outside."""

    def __init__(self, x: Tensor, points: int) -> None:
        self.n, self.c = x.shape[0], x.shape[1]
        self.sizes = x.shape[2:]
        self.flat = x.reshape(self.n, self.c, numel(self.sizes))
        self.points = points

    def read(self, coords: Sequence[Tensor]) -> Tensor:
        """[N, C, P] values at `coords` (float tensors holding whole numbers)."""
        linear: Tensor | None = None
        inside: Tensor | None = None
        for c, size in zip(coords, self.sizes):
            ok = (c >= 0) & (c <= size - 1)
            inside = ok if inside is None else inside & ok
            i = where(ok, c, 0.0).to_dtype(int64)  # outside (NaN too): any valid index
            linear = i if linear is None else linear * size + i
        assert linear is not None and inside is not None
        index = linear.reshape(self.n, 1, self.points).expand(self.n, self.c, self.points)
        values = self.flat.gather(2, index)
        return where(inside.reshape(self.n, 1, self.points), values, 0.0)


def _check(op: str, x: Tensor, grid: Tensor, mode: str, padding_mode: str) -> int:
    """The number of spatial dims, after checking the arguments as grid_sample does."""
    if mode not in MODES:
        raise ArgumentError(f"{op}: mode must be one of {', '.join(MODES)}, got {mode!r}")
    if padding_mode not in PADDINGS:
        raise ArgumentError(f"{op}: padding_mode must be one of {', '.join(PADDINGS)}, "
                            f"got {padding_mode!r}")
    if x.ndim not in (4, 5):
        raise ShapeError(f"{op}: input must be 4-d [N, C, H, W] or 5-d [N, C, D, H, W], "
                         f"got {fmt(x.shape)}")
    spatial = x.ndim - 2
    if grid.ndim != x.ndim or grid.shape[-1] != spatial or grid.shape[0] != x.shape[0]:
        want = "[N, H_out, W_out, 2]" if spatial == 2 else "[N, D_out, H_out, W_out, 3]"
        raise ShapeError(f"{op}: grid must be {want} for input {fmt(x.shape)}, got "
                         f"{fmt(grid.shape)}")
    if mode == "bicubic" and spatial != 2:
        raise ShapeError(f"{op}: mode 'bicubic' needs a 4-d input, got {fmt(x.shape)}")
    if not x.dtype.is_floating_point or grid.dtype != x.dtype:
        raise DTypeError(f"{op}: input and grid must be floating point of one dtype, got "
                         f"{x.dtype} and {grid.dtype}")
    if numel(x.shape[2:]) == 0:
        raise ShapeError(f"{op}: input {fmt(x.shape)} has an empty spatial dim")
    return spatial


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",  # noqa: A002
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample `input` [N, C, *in] at the points of `grid` [N, *out, k] (k = 2: x, y;
    k = 3: x, y, z, each in [-1, 1]), giving [N, C, *out].  mode: bilinear (trilinear for
    5-d input), nearest, or bicubic (4-d only); padding_mode: zeros, border or reflection.
    align_corners=None is False, as PyTorch."""
    op = "grid_sample"
    x, g = _tensor(op, "input", input), _tensor(op, "grid", grid)
    spatial = _check(op, x, g, mode, padding_mode)
    align = bool(align_corners)
    out_shape = g.shape[1:-1]
    reader = _Reader(x, numel(out_shape))
    flat = g.reshape(x.shape[0], reader.points, spatial)
    sizes = x.shape[2:]
    # the grid's last entry is x (the innermost dim): dim d of `sizes` reads entry k-1-d
    coords = [_unnormalize(flat[:, :, spatial - 1 - d], size, align)
              for d, size in enumerate(sizes)]
    if mode == "bicubic":
        out = _bicubic(reader, coords, padding_mode, align)
    else:
        coords = [_pad(c, size, padding_mode, align) for c, size in zip(coords, sizes)]
        if mode == "nearest":
            out = reader.read([c.round().detach() for c in coords])
        else:
            out = _linear(reader, coords)
    return out.reshape(x.shape[0], x.shape[1], *out_shape)


def _linear(reader: _Reader, coords: list[Tensor]) -> Tensor:
    """Bilinear (trilinear) interpolation: the 2**k corners around each point, weighted."""
    lows = [c.floor().detach() for c in coords]
    fracs = [c - lo for c, lo in zip(coords, lows)]
    out: Tensor | None = None
    for corner in itertools.product((0, 1), repeat=len(coords)):
        weight: Tensor | None = None
        for step, frac in zip(corner, fracs):
            w = frac if step else 1 - frac
            weight = w if weight is None else weight * w
        assert weight is not None
        values = reader.read([lo + step for lo, step in zip(lows, corner)])
        term = values * weight.unsqueeze(1)
        out = term if out is None else out + term
    assert out is not None
    return out


def _bicubic(reader: _Reader, coords: list[Tensor], padding_mode: str,
             align_corners: bool) -> Tensor:
    """Bicubic interpolation over the 4 x 4 taps around each point; padding applies to
    each tap's whole-number coordinate (as PyTorch), so the grid's gradient comes from the
    weights alone."""
    (cy, cx), (h, w) = coords, reader.sizes
    y0, x0 = cy.floor().detach(), cx.floor().detach()
    wy, wx = _cubic(cy - y0), _cubic(cx - x0)
    out: Tensor | None = None
    for i, j in itertools.product(range(4), range(4)):
        ty = _pad(y0 + (i - 1), h, padding_mode, align_corners).floor()
        tx = _pad(x0 + (j - 1), w, padding_mode, align_corners).floor()
        term = reader.read([ty, tx]) * (wy[i] * wx[j]).unsqueeze(1)
        out = term if out is None else out + term
    assert out is not None
    return out


def _grid_sampler(op: str, dims: int, input: Tensor, grid: Tensor,  # noqa: A002
                  interpolation_mode: int, padding_mode: int, align_corners: bool) -> Tensor:
    if interpolation_mode not in range(3) or padding_mode not in range(3):
        raise ArgumentError(f"{op}: interpolation_mode and padding_mode must be 0, 1 or 2, "
                            f"got {interpolation_mode} and {padding_mode}")
    if _tensor(op, "input", input).ndim != dims + 2:
        raise ShapeError(f"{op}: input must be {dims + 2}-d, got {fmt(input.shape)}")
    return grid_sample(input, grid, MODES[interpolation_mode], PADDINGS[padding_mode],
                       align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int,  # noqa: A002
                    padding_mode: int, align_corners: bool) -> Tensor:
    """torch.grid_sampler_2d: grid_sample on 4-d input with its modes as numbers
    (interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2
    reflection)."""
    return _grid_sampler("grid_sampler_2d", 2, input, grid, interpolation_mode,
                         padding_mode, align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int,  # noqa: A002
                    padding_mode: int, align_corners: bool) -> Tensor:
    """torch.grid_sampler_3d: grid_sampler_2d's 5-d counterpart."""
    return _grid_sampler("grid_sampler_3d", 3, input, grid, interpolation_mode,
                         padding_mode, align_corners)


def _steps(n: int, align_corners: bool) -> np.ndarray:
    """The normalised coordinates of n pixel centres along a dim."""
    if n <= 1:
        return np.zeros(max(n, 0))
    steps = np.linspace(-1.0, 1.0, n)
    return steps if align_corners else steps * ((n - 1) / n)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid [N, H, W, 2] (or [N, D, H, W, 3]) of the affine maps `theta`
    [N, 2, 3] (or [N, 3, 4]) for an output of `size` [N, C, H, W] (or [N, C, D, H, W]):
    each output pixel's normalised coordinates (x, y[, z], 1) times theta transposed."""
    op = "affine_grid"
    t = _tensor(op, "theta", theta)
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise ShapeError(f"{op}: size must be [N, C, H, W] or [N, C, D, H, W], got {size}")
    k = len(size) - 2
    if t.ndim != 3 or t.shape != (size[0], k, k + 1):
        raise ShapeError(f"{op}: theta must be [{size[0]}, {k}, {k + 1}] for size {size}, "
                         f"got {fmt(t.shape)}")
    if not t.dtype.is_floating_point:
        raise DTypeError(f"{op}: theta must be floating point, got {t.dtype}")
    if min(size) <= 0:
        raise ShapeError(f"{op}: size {size} has an empty dim")
    align = bool(align_corners)
    spatial = size[2:]
    # (x, y[, z], 1) per output pixel, x varying fastest: the innermost dim's coordinate
    axes = np.meshgrid(*[_steps(n, align) for n in spatial], indexing="ij")
    base = np.stack([*axes[::-1], np.ones(spatial)], axis=-1).reshape(1, -1, k + 1)
    points = tensor(base, dtype=t.dtype, device=t.device)
    return (points @ t.transpose(1, 2)).reshape(size[0], *spatial, k)
