"""Numerical calculus on sampled values, as torch's: gradient (central differences inside,
one-sided or second-order edges), trapezoid / trapz and cumulative_trapezoid.  Compositions
of narrow, arithmetic and sums, so they are differentiable and run on every backend."""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import ArgumentError, ShapeError
from ..core.fields import AnyTensor
from ..core.shape import fmt, normalize_dim, normalize_dims
from .shape.recorded import cat

if TYPE_CHECKING:
    from .._tensor import Tensor


def _float(y: Tensor) -> Tensor:
    return y if y.dtype.is_floating_point else y.to_dtype("float32")


def _widths(op: str, y: Tensor, x: Tensor | None, dx: float | None, d: int) -> Any:
    """The spacing between neighbouring samples along d: dx, or x's differences (x 1-d
    along d, or of y's shape)."""
    if x is None:
        return 1.0 if dx is None else dx
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise ShapeError(f"{op}: x {fmt(x.shape)} must have as many samples as dim {d} of "
                             f"y {fmt(y.shape)}")
        diffs = x[1:] - x[:-1]
        return diffs.reshape([-1 if i == d else 1 for i in range(y.ndim)])
    return x.narrow(d, 1, x.shape[d] - 1) - x.narrow(d, 0, x.shape[d] - 1)


def _trapezoids(op: str, y: Tensor, x: Tensor | None, dx: float | None,
                dim: int) -> tuple[int, Tensor | None]:
    """(dim, each interval's trapezoid area along it), None where y has no samples."""
    if x is not None and dx is not None:
        raise ArgumentError(f"{op}: give x or dx, not both")
    if x is not None and not isinstance(x, AnyTensor):
        dx, x = float(x), None
    d = normalize_dim(dim, y.ndim, op)
    n = y.shape[d]
    if n == 0:
        return d, None
    pairs = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    return d, _float(pairs) * _widths(op, y, x, dx, d) / 2


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
              dim: int = -1) -> Tensor:
    """The trapezoid rule's integral of y along dim, with samples at x (or dx apart)."""
    d, areas = _trapezoids("trapezoid", y, x, dx, dim)
    return _float(y).sum(d) * 0 if areas is None else areas.sum(d)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
          dim: int = -1) -> Tensor:
    """trapezoid's older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoid integrals of y along dim (one fewer than y's samples)."""
    d, areas = _trapezoids("cumulative_trapezoid", y, x, dx, dim)
    return _float(y) if areas is None else areas.cumsum(d)


def _spacings(op: str, y: Tensor, spacing: Any, dims: tuple[int, ...]) -> list[Any]:
    """Per dim: a number (uniform step) or a 1-d tensor of coordinates."""
    if spacing is None:
        return [1.0] * len(dims)
    if isinstance(spacing, (numbers.Real, AnyTensor)) and not (
            isinstance(spacing, AnyTensor) and spacing.ndim == 1 and len(dims) > 1):
        if isinstance(spacing, AnyTensor) and spacing.ndim == 0:
            spacing = spacing.item()
        return [spacing] * len(dims)
    items = list(spacing)
    if len(items) != len(dims):
        raise ArgumentError(f"{op}: expected spacing to be unspecified, a scalar or a list of "
                            f"length {len(dims)}, got {len(items)} entries")
    return [s.item() if isinstance(s, AnyTensor) and s.ndim == 0 else s for s in items]


def _one_gradient(y: Tensor, d: int, step: Any, edge_order: int) -> Tensor:
    n = y.shape[d]

    def part(start: int, length: int) -> Tensor:
        return y.narrow(d, start, length)

    def along(t: Tensor) -> Tensor:  # a 1-d tensor placed along d
        return t.reshape([-1 if i == d else 1 for i in range(y.ndim)])

    if isinstance(step, AnyTensor):  # coordinates: PyTorch's (numpy's) non-uniform formula
        h = step[1:] - step[:-1]
        hl, hr = along(h[:-1]), along(h[1:])
        inner = (hl * hl * part(2, n - 2) - hr * hr * part(0, n - 2)
                 + (hr * hr - hl * hl) * part(1, n - 2)) / (hl * hr * (hl + hr))
        h0, hn = h[0], h[-1]
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / h0
            last = (part(n - 1, 1) - part(n - 2, 1)) / hn
        else:
            h1, hm = h[1], h[-2]
            first = (-(2 * h0 + h1) / (h0 * (h0 + h1)) * part(0, 1)
                     + (h0 + h1) / (h0 * h1) * part(1, 1)
                     - h0 / (h1 * (h0 + h1)) * part(2, 1))
            last = (hn / (hm * (hm + hn)) * part(n - 3, 1)
                    - (hm + hn) / (hm * hn) * part(n - 2, 1)
                    + (2 * hn + hm) / (hn * (hm + hn)) * part(n - 1, 1))
    else:
        inner = (part(2, n - 2) - part(0, n - 2)) / (2 * step)
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / step
            last = (part(n - 1, 1) - part(n - 2, 1)) / step
        else:
            first = (-1.5 * part(0, 1) + 2 * part(1, 1) - 0.5 * part(2, 1)) / step
            last = (0.5 * part(n - 3, 1) - 2 * part(n - 2, 1) + 1.5 * part(n - 1, 1)) / step
    return cat([first, inner, last], d)


def gradient(input: Tensor, *, spacing: Any = None, dim: int | Sequence[int] | None = None,  # noqa: A002
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative estimate of input along each of dims (all by default): central
    differences inside, first- or second-order one-sided ones at the edges; spacing is a
    step (one, or one per dim) or each dim's coordinates (1-d tensors)."""
    y = input
    if edge_order not in (1, 2):
        raise ArgumentError(f"gradient: edge_order must be 1 or 2, got {edge_order}")
    dims = tuple(range(y.ndim)) if dim is None else \
        normalize_dims(dim if isinstance(dim, Sequence) else (dim,), y.ndim, "gradient")
    steps = _spacings("gradient", y, spacing, dims)
    y = _float(y)
    out = []
    for d, step in zip(dims, steps):
        if y.shape[d] < edge_order + 1:
            raise ShapeError(f"gradient: each dim must have at least edge_order + 1 = "
                             f"{edge_order + 1} samples, dim {d} of {fmt(y.shape)} has "
                             f"{y.shape[d]}")
        if isinstance(step, AnyTensor) and step.shape != (y.shape[d],):
            raise ShapeError(f"gradient: the coordinates of dim {d} must be 1-d with "
                             f"{y.shape[d]} entries, got {fmt(step.shape)}")
        out.append(_one_gradient(y, d, step.to_dtype(y.dtype) if isinstance(step, AnyTensor)
                                 else step, edge_order))
    return tuple(out)
