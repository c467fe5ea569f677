"""Hypothesis strategies that draw further samples for the table's entries.

Shapes mix small odd sizes with size-1 dims (broadcasting), zero-size dims, and sizes
larger than a work-group (257, 300) so that kernels see partial and multiple groups.
"""
from __future__ import annotations

import math

from hypothesis import assume
from hypothesis import strategies as st

from .spec import F, I, M, Sample

SMALL = (1, 2, 3, 5, 7)
SPECIAL = (0, 257, 300)


@st.composite
def shapes(draw, min_dims=0, max_dims=4, special=SPECIAL):
    """A shape of small sizes, sometimes with one zero-size or large dim."""
    shape = draw(st.lists(st.sampled_from(SMALL), min_size=min_dims, max_size=max_dims))
    if shape and draw(st.booleans()):
        shape[draw(st.integers(0, len(shape) - 1))] = draw(st.sampled_from(special))
    return tuple(shape)


@st.composite
def _broadcast_from(draw, shape):
    """A shape that broadcasts to `shape`: leading dims dropped, some dims set to 1."""
    lead = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else s for s in shape[lead:])


@st.composite
def elementwise(draw, count=1, domain="normal", mask=False, **kwargs):
    """`count` data inputs (a bool mask first when `mask`) that broadcast together."""
    full = draw(shapes())
    args = [M(*draw(_broadcast_from(full)))] if mask else []
    args += [F(*draw(_broadcast_from(full)) if count > 1 else full, domain=domain)
             for _ in range(count)]
    return Sample(tuple(args), kwargs)


@st.composite
def reductions(draw, domain="normal"):
    shape = draw(shapes())
    nd = len(shape)
    dims = st.integers(-nd, nd - 1)
    dim = draw(st.one_of(st.none(), dims, st.lists(dims, min_size=1, max_size=nd,
                                                   unique_by=lambda d: d % nd).map(tuple))
               if nd else st.none())
    return Sample((F(*shape, domain=domain),), {"dim": dim, "keepdim": draw(st.booleans())})


@st.composite
def softmaxes(draw):
    shape = draw(shapes())
    n = max(len(shape), 1)  # a 0-d tensor takes dim 0 or -1
    dim = draw(st.integers(-n, n - 1))
    return Sample((F(*shape),), {"dim": dim})


@st.composite
def standardizes(draw):
    shape = draw(shapes(min_dims=1))
    return Sample((F(*shape),), {"ndims": draw(st.integers(1, len(shape)))})


@st.composite
def arg_reductions(draw):
    shape = draw(shapes(min_dims=1))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return Sample((F(*shape, domain="ties"),), {"dim": dim, "keepdim": draw(st.booleans())})


@st.composite
def matmuls(draw):
    sizes = st.sampled_from((0, 1, 2, 5, 7, 33, 257))
    m, k, n = draw(sizes), draw(sizes), draw(sizes)
    batch = draw(shapes(max_dims=2, special=(1,)))
    assume(math.prod(batch) * m * k * n <= 300_000)
    a = (m, k) if draw(st.booleans()) else (k,)
    b = (k, n) if draw(st.booleans()) else (k,)
    a = draw(_broadcast_from(batch)) + a if len(a) == 2 else a
    b = draw(_broadcast_from(batch)) + b if len(b) == 2 else b
    return Sample((F(*a), F(*b)))


@st.composite
def gathers(draw):
    shape = draw(shapes(min_dims=1, max_dims=3, special=(1, 257)))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    index = tuple(draw(st.integers(0, s)) for s in shape)
    index = index[:dim % len(shape)] + (draw(st.sampled_from((0, 1, 4, 300))),) + \
        index[dim % len(shape) + 1:]
    return Sample((F(*shape), I(*index, high=shape[dim])), {"dim": dim})


@st.composite
def scatters(draw):
    shape = draw(shapes(min_dims=1, max_dims=3, special=(1, 257)))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    index = [draw(st.integers(0, s)) for s in shape]
    index[dim] = draw(st.sampled_from((0, 1, 4, 300)))  # many repeats along dim
    return Sample((F(*index), I(*index, high=shape[dim])), {"shape": shape, "dim": dim})


@st.composite
def cats(draw):
    shape = draw(shapes(min_dims=1, max_dims=3))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    sizes = draw(st.lists(st.sampled_from((0, 1, 3, 257)), min_size=1, max_size=3))
    args = [F(*shape[:dim % len(shape)], s, *shape[dim % len(shape) + 1:]) for s in sizes]
    return Sample(tuple(args), {"dim": dim})


@st.composite
def pads(draw):
    shape = draw(shapes(min_dims=1, max_dims=3))
    widths = draw(st.lists(st.integers(-1, 3), min_size=2, max_size=2 * len(shape)))
    widths = widths[:len(widths) // 2 * 2]
    for i in range(len(widths) // 2):
        assume(shape[-1 - i] + widths[2 * i] + widths[2 * i + 1] >= 0)
    return Sample((F(*shape),), {"pads": tuple(widths), "value": 0.5})


@st.composite
def transposes(draw):
    shape = draw(shapes(min_dims=1))
    dims = st.integers(-len(shape), len(shape) - 1)
    return Sample((F(*shape),), {"d0": draw(dims), "d1": draw(dims)})


@st.composite
def narrows(draw):
    shape = draw(shapes(min_dims=1))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    start = draw(st.integers(0, shape[dim]))
    length = draw(st.integers(0, shape[dim] - start))
    return Sample((F(*shape),), {"dim": dim, "start": start, "length": length})


@st.composite
def reshapes(draw):
    shape = draw(shapes())
    cut = draw(st.integers(0, len(shape)))
    return Sample((F(*shape),), {"shape": (math.prod(shape[:cut]), math.prod(shape[cut:]))})


@st.composite
def _images(draw, kernel_max=3):
    """(x shape, kernel, stride, padding) with padding at most half the kernel."""
    kernel = (draw(st.integers(1, kernel_max)), draw(st.integers(1, kernel_max)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    hw = tuple(draw(st.integers(max(k - 2 * p, 1), 11)) for k, p in zip(kernel, padding))
    x = (draw(st.sampled_from((1, 2))), draw(st.sampled_from((1, 3))), *hw)
    return x, kernel, stride, padding


@st.composite
def convs(draw):
    x, kernel, stride, padding = draw(_images())
    w = (draw(st.sampled_from((1, 4))), x[1], *kernel)
    return Sample((F(*x), F(*w)), {"stride": stride, "padding": padding})


@st.composite
def max_pools(draw):
    """max_pool2d's windows, with dilation (the input grown to hold the dilated window)
    and ceil_mode."""
    x, kernel, stride, padding = draw(_images())
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    hw = tuple(max(size, d * (k - 1) + 1 - 2 * p) for size, k, d, p
               in zip(x[2:], kernel, dilation, padding))
    return Sample((F(*x[:2], *hw),), {"k": kernel, "s": stride, "p": padding, "d": dilation,
                                      "ceil": draw(st.booleans())})


@st.composite
def avg_pools(draw):
    """avg_pool2d's windows with ceil_mode and each divisor choice."""
    x, kernel, stride, padding = draw(_images())
    return Sample((F(*x),), {"k": kernel, "s": stride, "p": padding,
                             "ceil": draw(st.booleans()), "include": draw(st.booleans()),
                             "divisor": draw(st.sampled_from((None, 2)))})
