"""Lookups by integer index: embedding, embedding_bag and one_hot."""
from __future__ import annotations

import numpy as np

from ...ops.creation import arange, tensor, zeros
from ...ops.elementwise.recorded import where
from ...ops.index.recorded import check_range, gather, scatter_add_shape
from ...ops.reduce import vector_norm
from ...ops.shape.recorded import stack
from ...core.dtype import int32, int64
from ...core.errors import ArgumentError, DTypeError, ShapeError, ShrewIndexError
from ...core.grad_mode import no_grad
from ...core.shape import fmt
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor

_MODES = ("sum", "mean", "max")


def _check_indices(op: str, input: Tensor, weight: Tensor) -> None:
    if _tensor(op, "weight", weight).ndim != 2:
        raise ShapeError(f"{op}: weight must be [num_embeddings, dim], got {fmt(weight.shape)}")
    if _tensor(op, "indices", input).dtype not in (int32, int64):
        raise DTypeError(f"{op}: indices must be an integer tensor, got {input.dtype}")


def _padding_index(op: str, padding_idx: int | None, rows: int) -> int | None:
    if padding_idx is None:
        return None
    if not -rows <= padding_idx < rows:
        raise ArgumentError(f"{op}: padding_idx {padding_idx} is outside [{-rows}, {rows})")
    return padding_idx % rows


def _renorm_(op: str, weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale, in place, the rows that input refers to whose norm exceeds max_norm down to
    max_norm (PyTorch's embedding_renorm_, with its 1e-7 guard)."""
    referenced = np.zeros(weight.shape[0], bool)
    referenced[np.unique(input.numpy())] = True
    with no_grad():
        norms = vector_norm(weight.detach(), norm_type, 1, keepdim=True, op=op)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        scale = where(tensor(referenced[:, None], device=weight.device), scale, 1.0)
        weight.copy_(weight.detach() * scale)


def _lookup(op: str, input: Tensor, weight: Tensor) -> Tensor:
    n, dim = input.numel(), weight.shape[1]
    rows = input.reshape(n, 1).expand(n, dim)
    try:  # the range on input itself, whose host range is known when it was uploaded
        check_range("gather", input, weight.shape[0], 0)
        out = gather(weight, 0, rows, range_checked=True)
    except ArgumentError:  # check_range's error
        raise ShrewIndexError(f"{op}: an index is outside [0, {weight.shape[0]}) for "
                              f"weight {fmt(weight.shape)}") from None
    return out.reshape(*input.shape, dim)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of weight [num, dim] picked by integer input of any shape -> [*input.shape, dim]
    (a gather; the weight's gradient is a scatter-add).  padding_idx's row gets no
    gradient; max_norm first renormalises the rows looked up, in place;
    scale_grad_by_freq divides each row's gradient by its count in input.  sparse=True is
    accepted and gives the same (dense) gradient."""
    op = "embedding"
    _check_indices(op, input, weight)
    pad = _padding_index(op, padding_idx, weight.shape[0])
    if max_norm is not None:
        _renorm_(op, weight, input, max_norm, norm_type)
    out = _lookup(op, input, weight)
    if scale_grad_by_freq and input.numel():
        ids = input.numpy().reshape(-1)
        values, counts = np.unique(ids, return_counts=True)
        per_position = counts[np.searchsorted(values, ids)].reshape(*input.shape, 1)
        factor = tensor(1.0 / per_position, dtype=out.dtype, device=out.device)
        out = out.detach() + (out - out.detach()) * factor  # same value, scaled gradient
    if pad is not None:
        out = where((input != pad).unsqueeze(-1), out, out.detach())
    return out


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2.0,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of the embeddings in each bag -> [bags, dim].  Bags are the
    rows of a 2-d input, or for a 1-d input the runs starting at each offset (the last
    offset closing the last bag with include_last_offset).  per_sample_weights scale each
    embedding (mode "sum" only); entries equal to padding_idx are left out; an empty bag
    gives zeros."""
    op = "embedding_bag"
    _check_indices(op, input, weight)
    if mode not in _MODES:
        raise ArgumentError(f"{op}: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise ArgumentError(f"{op}: per_sample_weights needs mode='sum', got {mode!r}")
        if _tensor(op, "per_sample_weights", per_sample_weights).shape != input.shape:
            raise ShapeError(f"{op}: per_sample_weights {fmt(per_sample_weights.shape)} must be "
                             f"shaped as input {fmt(input.shape)}")
    bag_of = _bag_ids(op, input, offsets, include_last_offset)
    bags = int(bag_of.max(initial=-1)) + 1 if offsets is None else (
        offsets.numel() - (1 if include_last_offset else 0))
    flat = input.reshape(-1)
    keep = np.ones(flat.numel(), bool)
    pad = _padding_index(op, padding_idx, weight.shape[0])
    if pad is not None:
        keep = flat.numpy() != pad
    if max_norm is not None:
        _renorm_(op, weight, input, max_norm, norm_type)
    rows = embedding(flat, weight, scale_grad_by_freq=scale_grad_by_freq)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    dim = weight.shape[1]
    if mode == "max":
        out = []
        for b in range(bags):
            members = np.flatnonzero((bag_of == b) & keep)
            out.append(rows.gather(0, tensor(members, device=rows.device).reshape(-1, 1)
                                   .expand(len(members), dim)).amax(0) if len(members) else
                       zeros(dim, dtype=rows.dtype, device=rows.device))
        return stack(out, 0) if out else zeros(0, dim, dtype=rows.dtype)
    kept = np.flatnonzero(keep)
    index = tensor(bag_of[kept], device=rows.device).reshape(-1, 1).expand(len(kept), dim)
    chosen = rows if len(kept) == rows.shape[0] else rows.gather(
        0, tensor(kept, device=rows.device).reshape(-1, 1).expand(len(kept), dim))
    total = scatter_add_shape((bags, dim), 0, index, chosen)
    if mode == "sum":
        return total
    counts = np.bincount(bag_of[kept], minlength=bags).astype(np.float64)
    divisor = tensor(np.maximum(counts, 1.0).reshape(-1, 1), dtype=total.dtype,
                         device=total.device)
    return total / divisor


def _bag_ids(op: str, input: Tensor, offsets: Tensor | None,
             include_last_offset: bool) -> np.ndarray:
    """The bag of each entry of input, flattened."""
    if input.ndim == 2:
        if offsets is not None:
            raise ArgumentError(f"{op}: offsets must be None for a 2-d input {fmt(input.shape)}")
        return np.repeat(np.arange(input.shape[0]), input.shape[1])
    if input.ndim != 1 or offsets is None or offsets.ndim != 1:
        raise ShapeError(f"{op}: input must be [bags, length], or 1-d with 1-d offsets, got "
                         f"{fmt(input.shape)} and offsets "
                         f"{None if offsets is None else fmt(offsets.shape)}")
    starts = np.asarray(offsets.tolist(), dtype=np.int64)
    n = input.shape[0]
    if include_last_offset:
        if len(starts) < 1:
            raise ShapeError(f"{op}: include_last_offset needs at least one offset")
        starts = starts[:-1]
    if len(starts) and (starts[0] != 0 or (np.diff(starts) < 0).any() or starts[-1] > n):
        raise ArgumentError(f"{op}: offsets {starts.tolist()} must start at 0 and increase "
                            f"within [0, {n}]")
    ids = np.zeros(n, np.int64)
    if len(starts):
        ids = np.searchsorted(starts, np.arange(n), side="right") - 1
    return ids


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 [*, num_classes] with a 1 at each entry's class (num_classes=-1: max + 1)."""
    op = "one_hot"
    if _tensor(op, "tensor", tensor).dtype not in (int32, int64):
        raise DTypeError(f"{op}: input must be an integer tensor of class indices, got "
                         f"{tensor.dtype}")
    values = tensor._host()
    low = int(values.min()) if values.size else 0
    high = int(values.max()) if values.size else -1
    if num_classes == -1:
        num_classes = high + 1
    if low < 0 or high >= num_classes:
        raise ShapeError(f"{op}: class values must lie in [0, {num_classes}), got "
                         f"[{low}, {high}]")
    classes = arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to_dtype(int64)
