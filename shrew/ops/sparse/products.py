"""torch.sparse's operations on a SparseTensor, composed of dense index ops: the product
with a dense matrix (index_select the dense rows each stored element needs, scale them by
its value, index_add them into the output rows), addmm, sum and the softmaxes over the
stored elements.  Being compositions, they run on every backend, and their gradients flow
to the dense operand and to the values (the sparse operand's gradient keeps its
pattern, as PyTorch's sparse.mm gives)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...core.dtype import int64
from ...core.errors import ShrewTypeError, sparse_unsupported
from ...core.fields import AnyTensor
from ...core.shape import normalize_dim
from ..creation import tensor, zeros
from .coo import SparseTensor, add_rows, check_pair, coalesce

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...typing import DTypeLike, Scalar


def _sparse(op: str, s: object) -> SparseTensor:
    if not isinstance(s, SparseTensor):
        raise ShrewTypeError(f"{op}: expects a sparse COO tensor, got "
                             f"{'a dense tensor' if isinstance(s, AnyTensor) else type(s).__name__}"
                             f"; make one with .to_sparse()")
    return s


def mm(sparse: SparseTensor, dense: Tensor) -> Tensor:
    """sparse [n, m] @ dense [m, p] -> dense [n, p] (torch.sparse.mm, torch.mm, torch.spmm
    with a sparse first operand)."""
    s = _sparse("sparse.mm", sparse)
    check_pair("sparse.mm", s, dense)
    rows, cols = s._i[0], s._i[1]
    scaled = dense.index_select(0, cols) * s._v.unsqueeze(1)
    out = zeros((s.shape[0], dense.shape[1]), dtype=dense.dtype, device=dense.device)
    return add_rows(out, rows, scaled)


def mv(sparse: SparseTensor, vec: Tensor) -> Tensor:
    """sparse [n, m] @ vec [m] -> dense [n]."""
    s = _sparse("mv", sparse)
    check_pair("mv", s, vec, ndim=1)
    return mm(s, vec.unsqueeze(1)).squeeze(1)


def addmm(input: Tensor, mat1: SparseTensor, mat2: Tensor, *,  # noqa: A002
          beta: Scalar = 1, alpha: Scalar = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), mat1 sparse (torch.sparse.addmm)."""
    product = mm(mat1, mat2)
    if isinstance(input, SparseTensor):
        input = input.to_dense()
    scaled = product if alpha == 1 else product * alpha
    return scaled + (input if beta == 1 else input * beta)


def _dims(op: str, s: SparseTensor, dim: int | Sequence[int] | None) -> list[int]:
    dims = range(s.ndim) if dim is None else [dim] if isinstance(dim, int) else dim
    return sorted({normalize_dim(d, s.ndim, op) for d in dims})


def sparse_sum(input: SparseTensor, dim: int | Sequence[int] | None = None,  # noqa: A002
               dtype: DTypeLike | None = None) -> Any:
    """torch.sparse.sum: the sum over `dim` (all dims when None).  A dense tensor when
    every sparse dim is summed, else a coalesced sparse tensor of the remaining dims."""
    op = "sparse.sum"
    s = _sparse(op, input)
    values = s._v if dtype is None else s._v.to(dtype=dtype)
    dims = _dims(op, s, dim)
    k = s.sparse_dim()
    dense_dims = [d - k + 1 for d in dims if d >= k]
    if dense_dims:
        values = values.sum(dim=tuple(dense_dims))
    kept = [d for d in range(k) if d not in dims]
    if not kept:
        return values.sum(dim=0)
    indices = s._i.index_select(0, tensor(kept, dtype=int64, device=s._i.device))
    size = [s.shape[d] for d in kept] + [n for d, n in enumerate(s.shape)
                                           if d >= k and d not in dims]
    return coalesce(SparseTensor._make(indices, values, size, False), "sum")


def _groups(s: SparseTensor, dim: int) -> tuple[Tensor, int]:
    """For softmax along sparse dim `dim`: each stored element's group (its coordinates in
    the other sparse dims), numbered from 0, and how many groups there are."""
    k = s.sparse_dim()
    others = [d for d in range(k) if d != dim]
    if not others:
        return zeros((s._nnz(),), dtype=int64, device=s._i.device), 1
    host = s._i.numpy()[others]
    positions = np.ravel_multi_index(tuple(host), tuple(s.shape[d] for d in others))
    unique, inverse = np.unique(positions, return_inverse=True)
    return tensor(inverse.reshape(-1).astype(np.int64), device=s._i.device), len(unique)


def _softmax(op: str, input: SparseTensor, dim: int, dtype: DTypeLike | None,  # noqa: A002
             log: bool) -> SparseTensor:
    s = coalesce(_sparse(op, input), "sum")
    values = s._v if dtype is None else s._v.to(dtype=dtype)
    if not values.dtype.is_floating_point:
        raise sparse_unsupported(f"{op} of {values.dtype} values")
    d = normalize_dim(dim, s.ndim, op)
    k = s.sparse_dim()
    if d >= k:  # a dense dim: the ordinary softmax of each stored slice
        out = values.log_softmax(d - k + 1) if log else values.softmax(d - k + 1)
        return SparseTensor._make(s._i, out, s.shape, True)
    group, count = _groups(s, d)
    if s._nnz() == 0:
        return SparseTensor._make(s._i, values, s.shape, True)
    width = values.shape[1:]
    index = group.reshape(-1, *([1] * len(width))).expand(*values.shape)
    # the largest value of each group, a constant shift (softmax does not depend on it)
    top = zeros((count, *width), dtype=values.dtype, device=values.device).scatter_reduce(
        0, index, values.detach(), "amax", include_self=False)
    shifted = values - top.index_select(0, group)
    e = shifted.exp()
    total = zeros((count, *width), dtype=values.dtype, device=values.device).index_add(
        0, group, e).index_select(0, group)
    out = shifted - total.log() if log else e / total
    return SparseTensor._make(s._i, out, s.shape, True)


def softmax(input: SparseTensor, dim: int, dtype: DTypeLike | None = None) -> SparseTensor:
    """torch.sparse.softmax: a softmax over the stored elements along dim (the
    unspecified ones count as -inf, so they stay unspecified)."""
    return _softmax("sparse.softmax", input, dim, dtype, log=False)


def log_softmax(input: SparseTensor, dim: int,  # noqa: A002
                dtype: DTypeLike | None = None) -> SparseTensor:
    """torch.sparse.log_softmax: softmax's logarithm over the stored elements."""
    return _softmax("sparse.log_softmax", input, dim, dtype, log=True)

