"""torch's statistics over tensors, composed of sort, gather, reductions and products:
quantile and nanquantile (from the sorted values, so gradients reach the elements picked),
cov and corrcoef, histogram and histogramdd (counts, not differentiable), and isin."""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import return_types
from ..core.dtype import int64
from ..core.errors import ArgumentError, DTypeError, ShapeError, ShrewTypeError
from ..core.fields import AnyTensor
from ..core.grad_mode import no_grad
from ..core.shape import fmt, normalize_dim
from .common import scalar_like
from .creation import linspace, tensor, zeros
from .elementwise.recorded import where
from .index.recorded import scatter_add_unchecked
from .sort import searchsorted

if TYPE_CHECKING:
    from .._tensor import Tensor

builtin_range = range  # histogram's parameter is named range, as torch's
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op: str, input: Tensor, q: Any, dim: int | None, keepdim: bool,  # noqa: A002
              interpolation: str, ignore_nan: bool) -> Tensor:
    x = input
    if not isinstance(x, AnyTensor) or not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: input must be a float32 or float64 tensor, got "
                         f"{x.dtype if isinstance(x, AnyTensor) else type(x).__name__}")
    if interpolation not in _INTERPOLATIONS:
        raise ArgumentError(f"{op}: interpolation must be one of {', '.join(_INTERPOLATIONS)}, "
                            f"got {interpolation!r}")
    if isinstance(q, AnyTensor):
        if q.ndim > 1:
            raise ShapeError(f"{op}: q must be a scalar or 1-d tensor, got {fmt(q.shape)}")
        if q.dtype is not x.dtype:
            raise DTypeError(f"{op}: q tensor must be the same dtype as input ({x.dtype}), got "
                             f"{q.dtype}")
        qs, scalar_q = q.detach().reshape(-1), q.ndim == 0
    elif isinstance(q, numbers.Real):
        qs, scalar_q = tensor([float(q)], dtype=x.dtype, device=x.device), True
    else:
        raise ShrewTypeError(f"{op}: q must be a number or a tensor, got {type(q).__name__}")
    if qs.numel() and bool(((qs < 0) | (qs > 1)).any()):
        raise ArgumentError(f"{op}: q values must be in the range [0, 1]")
    if dim is None:
        line, d = x.reshape(-1), 0
    else:
        d = normalize_dim(dim, max(x.ndim, 1), op)
        line = x.reshape(1) if x.ndim == 0 else x
    line = line.movedim(d, -1)
    n = line.shape[-1]
    if n == 0:
        raise ArgumentError(f"{op}: input tensor must be non-empty along the reduced dim")
    ordered = line.sort(-1).values  # NaN sorts last
    nans = line.isnan()
    with no_grad():
        if ignore_nan:
            valid = (~nans).sum(-1, keepdim=True).to_dtype(x.dtype)
            last = where(valid > 0, valid - 1, 0)
        else:
            last = scalar_like(n - 1, ordered).expand(*ordered.shape[:-1], 1)
        rank = last * qs  # [..., Q]
        if interpolation == "lower":
            rank = rank.floor()
        elif interpolation == "higher":
            rank = rank.ceil()
        elif interpolation == "nearest":
            rank = rank.round()
        low, high = rank.floor(), rank.ceil()
        weight = rank - low if interpolation != "midpoint" else where(high > low, 0.5, 0.0)
    lo_v = ordered.gather(-1, low.to_dtype(int64))
    hi_v = ordered.gather(-1, high.to_dtype(int64))
    out = lo_v + (hi_v - lo_v) * weight
    undefined = (valid == 0) if ignore_nan else nans.any(-1, keepdim=True)
    out = where(undefined, float("nan"), out)
    out = out.movedim(-1, 0)  # [Q, ...]
    if keepdim:
        shape = [1] * x.ndim if dim is None else list(x.shape)
        if dim is not None and x.ndim:
            shape[d] = 1
        out = out.reshape(out.shape[0], *shape)
    return out[0] if scalar_q else out


def quantile(input: Tensor, q: float | Tensor, dim: int | None = None,  # noqa: A002
             keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
    """The q-th quantiles of input (all of it, or along dim), interpolated between the
    sorted values as `interpolation` says; NaN where a line holds a NaN.  A 1-d q adds a
    first dim, one per q."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


def nanquantile(input: Tensor, q: float | Tensor, dim: int | None = None,  # noqa: A002
                keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
    """quantile ignoring NaNs (NaN only where a line is all NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,  # noqa: A002
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in input's rows (observations in columns),
    with frequency and/or importance weights per observation."""
    x = input
    if x.ndim > 2:
        raise ShapeError(f"cov: expected input to have two or fewer dims, got {fmt(x.shape)}")
    x = x.reshape(1, -1) if x.ndim < 2 else x
    if not x.dtype.is_floating_point:
        x = x.to_dtype(scalar_like(0.0, x).dtype)
    n = x.shape[1]
    w: Tensor | None = None
    if fweights is not None:
        if fweights.ndim > 1 or fweights.dtype.is_floating_point or fweights.numel() != n:
            raise ShapeError(f"cov: fweights must be a 1-d integer tensor of {n} elements, got "
                             f"{fweights.dtype} {fmt(fweights.shape)}")
        w = fweights.to_dtype(x.dtype)
    if aweights is not None:
        if aweights.ndim > 1 or not aweights.dtype.is_floating_point or aweights.numel() != n:
            raise ShapeError(f"cov: aweights must be a 1-d float tensor of {n} elements, got "
                             f"{aweights.dtype} {fmt(aweights.shape)}")
        a = aweights.to_dtype(x.dtype)
        w = a if w is None else w * a
    if w is None:
        avg = x.mean(1, keepdim=True)
        total: Any = n
        fact: Any = n - correction
    else:
        total = w.sum()
        avg = (x * w).sum(1, keepdim=True) / total
        if aweights is None:
            fact = total - correction
        else:
            fact = total - correction * (w * aweights.to_dtype(x.dtype)).sum() / total
    fact = fact.clamp_min(0) if isinstance(fact, AnyTensor) else \
        max(fact, 0)
    centred = x - avg
    weighted = centred if w is None else centred * w
    c = weighted @ centred.transpose(0, 1) / fact
    return c.reshape(()) if c.shape == (1, 1) else c


def corrcoef(input: Tensor) -> Tensor:  # noqa: A002
    """Pearson's correlation coefficients of the rows' variables, clipped to [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    s = d.sqrt()
    return (c / s.reshape(-1, 1) / s.reshape(1, -1)).clamp(-1, 1)


def _edges(op: str, x: Tensor, bins: Any, bounds: Sequence[float] | None) -> Tensor:
    """The bin edges of one dimension: given, or bins + 1 equal steps over the range
    (the data's, when none is given; widened by 0.5 each way where it is one point)."""
    if isinstance(bins, AnyTensor):
        if bins.ndim != 1 or bins.numel() < 2:
            raise ShapeError(f"{op}: bins as a tensor must be 1-d with at least 2 edges, got "
                             f"{fmt(bins.shape)}")
        return bins.to_dtype(x.dtype)
    if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
        raise ArgumentError(f"{op}: bins must be a positive int or a tensor of edges, got "
                            f"{bins!r}")
    if bounds is not None:
        lo, hi = float(bounds[0]), float(bounds[1])
        if lo > hi:
            raise ArgumentError(f"{op}: the range's min ({lo}) must not exceed its max ({hi})")
    elif x.numel():
        lo, hi = float(x.amin().item()), float(x.amax().item())
    else:
        lo, hi = 0.0, 0.0
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return linspace(lo, hi, bins + 1, dtype=x.dtype, device=x.device)


def _bin_of(x: Tensor, edges: Tensor) -> tuple[Tensor, Tensor]:
    """(each value's bin, whether it falls in one): the last bin includes its right edge."""
    nbins = edges.shape[0] - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    index = (searchsorted(edges.contiguous(), x.contiguous(), right=True) - 1).clamp(0, nbins - 1)
    return where(inside, index, 0), inside


def histogramdd(input: Tensor, bins: Any = 10, *, range: Sequence[float] | None = None,  # noqa: A002
                weight: Tensor | None = None, density: bool = False,
                ) -> return_types.histogramdd:
    """The D-dimensional histogram of input's rows ([..., D] points): counts (or summed
    weights) per cell and each dimension's bin edges."""
    x = input.detach()
    if x.ndim < 1:
        raise ShapeError(f"histogramdd: input must have at least 1 dim, got {fmt(x.shape)}")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"histogramdd: needs a floating-point input, got {x.dtype}")
    dims = x.shape[-1]
    points = x.reshape(-1, dims)
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * dims
    if len(per_dim) != dims:
        raise ArgumentError(f"histogramdd: {len(per_dim)} bins given for {dims} dims")
    if range is not None and len(range) != 2 * dims:
        raise ArgumentError(f"histogramdd: range needs {2 * dims} numbers, got {len(range)}")
    edges, flat, inside = [], None, None
    for d in builtin_range(dims):
        e = _edges("histogramdd", points[:, d], per_dim[d],
                   None if range is None else range[2 * d:2 * d + 2])
        index, ok = _bin_of(points[:, d], e)
        nbins = e.shape[0] - 1
        flat = index if flat is None else flat * nbins + index
        inside = ok if inside is None else inside & ok
        edges.append(e)
    sizes = tuple(e.shape[0] - 1 for e in edges)
    count = 1
    for s in sizes:
        count *= s
    if weight is not None:
        if weight.shape != x.shape[:-1]:
            raise ShapeError(f"histogramdd: weight {fmt(weight.shape)} must have input's shape "
                             f"without its last dim, {fmt(x.shape[:-1])}")
        src = weight.detach().reshape(-1).to_dtype(x.dtype)
    else:
        src = scalar_like(1.0, x).expand(points.shape[0])
    assert flat is not None and inside is not None
    src = where(inside, src, 0.0)
    hist = scatter_add_unchecked((count,), 0, flat, src) if points.shape[0] else \
        zeros(count, dtype=x.dtype, device=x.device)
    hist = hist.reshape(sizes)
    if density:
        volume: Any = 1.0
        for d, e in enumerate(edges):
            width = (e[1:] - e[:-1]).reshape([-1 if i == d else 1 for i in builtin_range(dims)])
            volume = volume * width
        hist = hist / hist.sum() / volume
    return return_types.histogramdd(hist, edges)


def histogram(input: Tensor, bins: Any = 100, *, range: Sequence[float] | None = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False) -> return_types.histogram:
    """The histogram of input's values: counts (or summed weights) per bin, and the edges."""
    if not isinstance(input, AnyTensor):
        raise ShrewTypeError("histogram: input must be a tensor")
    if weight is not None and weight.shape != input.shape:
        raise ShapeError(f"histogram: weight {fmt(weight.shape)} must have input's shape "
                         f"{fmt(input.shape)}")
    hist, edges = histogramdd(input.reshape(-1, 1), [bins],
                              range=None if range is None else list(range),
                              weight=None if weight is None else weight.reshape(-1),
                              density=density)
    return return_types.histogram(hist, edges[0])


def isin(elements: Tensor | float, test_elements: Tensor | float, *,
         assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each of `elements` occurs in `test_elements` (a bool tensor of elements'
    shape), by binary search in the sorted test elements."""
    if not isinstance(elements, AnyTensor) and not isinstance(test_elements, AnyTensor):
        raise ShrewTypeError("isin: needs at least one tensor")
    if not isinstance(elements, AnyTensor):
        elements = scalar_like(elements, test_elements)  # type: ignore[arg-type]
    if not isinstance(test_elements, AnyTensor):
        test_elements = scalar_like(test_elements, elements)
    values = test_elements.reshape(-1)
    if values.numel() == 0:
        found = zeros(elements.shape, dtype="bool", device=elements.device)
    else:
        ordered = values.sort().values.contiguous()
        position = searchsorted(ordered, elements.contiguous()).clamp(0, values.numel() - 1)
        found = ordered[position.reshape(-1)].reshape(elements.shape) == elements
    return ~found if invert else found
