"""More of torch's arrangements, composed of the shape ops: the split aliases (hsplit,
vsplit, dsplit, split_with_sizes, unsafe_split, unsafe_chunk), rot90, block_diag,
diagflat, cartesian_prod, combinations, sum_to_size and unravel_index."""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...core.dtype import int64, result_type
from ...core.errors import ArgumentError, DTypeError, ShapeError, ShrewTypeError
from ...core.fields import AnyTensor
from ...core.shape import fmt, normalize_dims
from ..creation import meshgrid, tensor, zeros
from .composed import _ints, _is_int, chunk, diag, flip, split, tensor_split
from .recorded import cat, stack

if TYPE_CHECKING:
    from ..._tensor import Tensor


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0,  # noqa: A002
                     ) -> tuple[Tensor, ...]:
    """Pieces of the listed sizes along dim (they must add up to its size)."""
    if _is_int(split_sizes):
        raise ShrewTypeError("split_with_sizes: split_sizes must be a sequence of ints")
    return split(input, list(split_sizes), dim)


def unsafe_split(input: Tensor, split_size: int | Sequence[int],  # noqa: A002
                 dim: int = 0) -> tuple[Tensor, ...]:
    """split (torch's unsafe_ form skips view bookkeeping; the values are the same)."""
    return split(input, split_size, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """chunk (torch's unsafe_ form skips view bookkeeping; the values are the same)."""
    return chunk(input, chunks, dim)


def _split_along(op: str, x: Tensor, spec: int | Sequence[int], dim: int,
                 min_dims: int) -> tuple[Tensor, ...]:
    if x.ndim < min_dims:
        raise ShapeError(f"{op}: needs a tensor of at least {min_dims} dims, got "
                         f"{fmt(x.shape)}")
    if isinstance(spec, int) and (spec <= 0 or x.shape[dim] % spec):
        raise ShapeError(f"{op}: dim {dim} of {fmt(x.shape)} is not divisible into {spec} "
                         f"equal sections")
    return tensor_split(x, spec, dim)


def hsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:  # noqa: A002
    """Split along dim 1 (dim 0 of a 1-d tensor)."""
    return _split_along("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


def vsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:  # noqa: A002
    """Split along dim 0 of a tensor of 2 or more dims."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:  # noqa: A002
    """Split along dim 2 of a tensor of 3 or more dims."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:  # noqa: A002
    """Rotate by 90 degrees k times in the plane of dims, from the first toward the second."""
    x = input
    d = tuple(dims)
    if len(d) != 2:
        raise ArgumentError(f"rot90: expected 2 dims, got {len(d)}")
    if x.ndim < 2:
        raise ShapeError(f"rot90: needs a tensor of at least 2 dims, got {fmt(x.shape)}")
    d0, d1 = normalize_dims(d, x.ndim, "rot90")
    if d0 == d1:
        raise ArgumentError(f"rot90: dims must differ, got {d}")
    k = k % 4
    if k == 1:
        return flip(x, d1).transpose(d0, d1)
    if k == 2:
        return flip(x, (d0, d1))
    if k == 3:
        return flip(x, d0).transpose(d0, d1)
    return x.clone()


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d, 1-d as one row, or 2-d) as blocks along the diagonal of one matrix."""
    blocks = []
    for i, t in enumerate(tensors):
        if not isinstance(t, AnyTensor):
            raise ShrewTypeError(f"block_diag: argument {i} is not a tensor")
        if t.ndim > 2:
            raise ShapeError(f"block_diag: input {i} must have 2 or fewer dims, got "
                             f"{fmt(t.shape)}")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not blocks:
        return zeros(1, 0)
    dtype = result_type(*blocks)
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        b = b.to_dtype(dtype)
        right = width - left - b.shape[1]
        rows.append(b.pad((left, right)) if b.shape[0] else
                    zeros(0, width, dtype=dtype, device=b.device))
        left += b.shape[1]
    return cat(rows, 0)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:  # noqa: A002
    """A matrix with input, flattened, on its offset-th diagonal."""
    return diag(input.reshape(-1), offset)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-d tensor, as rows (1-d for one tensor)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, AnyTensor) or t.ndim != 1:
            shown = fmt(t.shape) if isinstance(t, AnyTensor) else type(t).__name__
            raise ShapeError(f"cartesian_prod: expects 1-d tensors, got {shown} at {i}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """The r-length combinations of a 1-d tensor's elements, as rows (itertools' order)."""
    x = input
    if not isinstance(x, AnyTensor) or x.ndim != 1:
        raise ShapeError(f"combinations: expects a 1-d tensor, got "
                         f"{fmt(x.shape) if isinstance(x, AnyTensor) else type(x).__name__}")
    if r < 0:
        raise ArgumentError(f"combinations: r must be non-negative, got {r}")
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = list(pick(range(x.shape[0]), r))
    if r == 0:
        return x[tensor(np.zeros(0, dtype=np.int64), device=x.device)]
    index = tensor(np.array(rows, dtype=np.int64).reshape(len(rows), r), device=x.device)
    return x[index.reshape(-1)].reshape(len(rows), r)


def sum_to_size(input: Tensor, *size: int | Sequence[int]) -> Tensor:  # noqa: A002
    """input summed down to `size`, which must broadcast to input's shape."""
    shape = _ints(size[0]) if len(size) == 1 and not _is_int(size[0]) else \
        tuple(int(s) for s in size)  # type: ignore[arg-type]
    x = input
    lead = x.ndim - len(shape)
    if lead < 0 or any(s not in (1, n) for s, n in zip(shape, x.shape[lead:])):
        raise ShapeError(f"sum_to_size: size {list(shape)} is not expandable to size "
                         f"{list(x.shape)}")
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape)
                                if s == 1 and x.shape[lead + i] != 1]
    out = x.sum(dims, keepdim=True) if dims else x
    return out.reshape(shape)


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates, one tensor per dim of `shape`, of flat indices into it."""
    if not isinstance(indices, AnyTensor):
        raise ShrewTypeError("unravel_index: indices must be a tensor")
    if indices.dtype.is_floating_point or indices.dtype.name == "bool":
        raise DTypeError(f"unravel_index: expected an integer indices tensor, got "
                         f"{indices.dtype}")
    dims = _ints(shape)
    if any(d < 0 for d in dims):
        raise ArgumentError(f"unravel_index: sizes must be non-negative, got {list(dims)}")
    total = int(np.prod(dims)) if dims else 1
    idx = indices.to_dtype(int64)
    if idx.numel() and bool(((idx < -total) | (idx >= total)).any()):
        raise ArgumentError(f"unravel_index: an index is out of bounds for shape {list(dims)}")
    idx = idx % max(total, 1)
    out: list[Any] = []
    for d in reversed(dims):
        out.append(idx % d if d else idx)
        idx = idx // d if d else idx
    return tuple(reversed(out))
