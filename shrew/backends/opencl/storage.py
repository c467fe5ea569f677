"""Device storage: a strided view of an OpenCL buffer, and the layout arithmetic on it."""
from __future__ import annotations

import math
from typing import Any

import numpy as np


class CLStorage:
    """An array on an OpenCL device: `buffer` viewed with element `strides` and `offset`.

    Views (transpose, narrow, expand, reshape of a contiguous array) share the buffer.
    """

    # (__weakref__: a capture watches the values it records without keeping them alive)
    __slots__ = ("buffer", "shape", "strides", "offset", "dtype", "__weakref__")

    def __init__(self, buffer: Any, shape: tuple, dtype: np.dtype, strides: tuple | None = None,
                 offset: int = 0) -> None:
        self.buffer = buffer
        self.shape = shape
        self.dtype = dtype
        self.strides = contiguous_strides(shape) if strides is None else strides
        self.offset = offset

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def is_contiguous(self) -> bool:
        return all(st == want for n, st, want in zip(self.shape, self.strides,
                                                     contiguous_strides(self.shape)) if n != 1)

    def view(self, shape: tuple, strides: tuple, offset: int | None = None) -> CLStorage:
        return CLStorage(self.buffer, shape, self.dtype, strides,
                         self.offset if offset is None else offset)

    def __repr__(self) -> str:
        return (f"CLStorage(shape={self.shape}, dtype={self.dtype}, strides={self.strides}, "
                f"offset={self.offset})")


def contiguous_strides(shape: tuple) -> tuple:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def view_strides(shape: tuple, strides: tuple, new_shape: tuple) -> tuple | None:
    """Strides reading the same elements in C order at `new_shape`, or None if only a copy
    can (numpy's no-copy reshape rule).

    Old and new dims (size-1 dims aside) are matched in groups of equal size; a group can
    be re-split freely when its old dims are contiguous among themselves.
    """
    if 0 in shape:
        return contiguous_strides(new_shape)
    old = [(n, st) for n, st in zip(shape, strides) if n != 1]
    new_dims = [d for d, n in enumerate(new_shape) if n != 1]
    out = [0] * len(new_shape)  # a size-1 dim's stride is never used
    i = j = 0
    while j < len(new_dims):
        group_new, new_size = [new_dims[j]], new_shape[new_dims[j]]
        group_old, old_size = [old[i]], old[i][0]
        i, j = i + 1, j + 1
        while new_size != old_size:
            if new_size < old_size:
                group_new.append(new_dims[j])
                new_size *= new_shape[new_dims[j]]
                j += 1
            else:
                group_old.append(old[i])
                old_size *= old[i][0]
                i += 1
        if any(st != n * st_next for (_, st), (n, st_next) in zip(group_old, group_old[1:])):
            return None
        step = group_old[-1][1]
        for d in reversed(group_new):
            out[d] = step
            step *= new_shape[d]
    return tuple(out)


def broadcast_layout(x: CLStorage, shape: tuple) -> tuple:
    """x's (strides, offset) when read at the broadcast `shape`: stride 0 on new/size-1 dims."""
    lead = len(shape) - len(x.shape)
    strides = [0] * lead + [0 if n == 1 else st for n, st in zip(x.shape, x.strides)]
    return tuple(strides), x.offset


def collapse(shape: tuple, layouts: list) -> tuple:
    """Drop size-1 dims and merge adjacent dims that every layout walks as one.

    Returns (shape, layouts) with the fewest dims, so that a kernel's index arithmetic is
    as short as the data allow: any contiguous operand set becomes one dim.
    """
    dims = [d for d, n in enumerate(shape) if n != 1]
    out_shape: list[int] = []
    out_strides: list[list[int]] = [[] for _ in layouts]
    for d in dims:
        mergeable = out_shape and all(
            strides[-1] == lay[0][d] * shape[d] for strides, lay in zip(out_strides, layouts))
        if mergeable:
            out_shape[-1] *= shape[d]
            for strides, lay in zip(out_strides, layouts):
                strides[-1] = lay[0][d]
        else:
            out_shape.append(shape[d])
            for strides, lay in zip(out_strides, layouts):
                strides.append(lay[0][d])
    return tuple(out_shape), [(tuple(s), lay[1]) for s, lay in zip(out_strides, layouts)]
