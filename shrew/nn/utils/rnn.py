"""Variable-length sequences for the recurrent layers, as torch.nn.utils.rnn.

A PackedSequence holds the time steps of a batch one after another: at step t, the
batch_sizes[t] sequences still running (longest first) contribute one row each to `data`.
The recurrent layers run each step on just those rows."""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ...core.errors import ShapeError, ShrewValueError
from ...ops.creation import tensor
from ...ops.shape.recorded import cat, stack
from ...core.shape import fmt
from ..._tensor import Tensor


class PackedSequence(NamedTuple):
    """data [sum of lengths, *], batch_sizes (int64, one per step), and the permutation
    that sorted the batch by length (None when it was sorted already)."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None


def select_rows(x: Tensor, order: Tensor | None, dim: int) -> Tensor:
    """x with its entries along dim taken in `order` (a gather, so it is differentiable)."""
    if order is None:
        return x
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    return x.gather(dim, order.to(device=x.device).reshape(*shape).expand(*x.shape))


def _lengths(op: str, lengths: Sequence[int] | Tensor, batch: int) -> np.ndarray:
    values = np.asarray(lengths.tolist() if isinstance(lengths, Tensor) else list(lengths))
    if values.shape != (batch,) or values.dtype.kind not in "iu":
        raise ShapeError(f"{op}: lengths must be {batch} ints (one per sequence), got "
                         f"{values.tolist()}")
    return values.astype(np.int64)


def pack_padded_sequence(input: Tensor, lengths: Sequence[int] | Tensor,
                         batch_first: bool = False, enforce_sorted: bool = True
                         ) -> PackedSequence:
    """Pack a padded batch [T, N, *] ([N, T, *] with batch_first) whose sequence i has
    lengths[i] steps.  enforce_sorted=True requires the lengths in decreasing order;
    otherwise the batch is sorted here (stably) and the permutation kept."""
    op = "pack_padded_sequence"
    if input.ndim < 2:
        raise ShapeError(f"{op}: input must be [T, N, *] or [N, T, *], got {fmt(input.shape)}")
    x = input.transpose(0, 1) if batch_first else input
    steps, batch = x.shape[:2]
    n = _lengths(op, lengths, batch)
    if (n < 1).any() or (n > steps).any():
        raise ShapeError(f"{op}: lengths {n.tolist()} must lie in [1, {steps}] for input "
                         f"{fmt(input.shape)}")
    sorted_indices = unsorted_indices = None
    if enforce_sorted:
        if (np.diff(n) > 0).any():
            raise ShrewValueError(f"{op}: lengths {n.tolist()} are not sorted in decreasing order "
                                  f"(pass enforce_sorted=False)")
    else:
        order = np.argsort(-n, kind="stable")
        sorted_indices = tensor(order)
        unsorted_indices = tensor(np.argsort(order, kind="stable"))
        n = n[order]
        x = select_rows(x, sorted_indices, 1)
    batch_sizes = [int((n > t).sum()) for t in range(int(n[0]))]
    data = cat([x[t].narrow(0, 0, b) for t, b in enumerate(batch_sizes)], 0)
    return PackedSequence(data, tensor(batch_sizes), sorted_indices, unsorted_indices)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Tensor, Tensor]:
    """(padded batch [T, N, *] or [N, T, *], lengths int64 [N]): the inverse of
    pack_padded_sequence, in the original batch order."""
    data, sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    batch, steps = sizes[0], len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ShrewValueError(f"pad_packed_sequence: total_length {total_length} is shorter "
                                  f"than the longest sequence ({steps})")
        steps = total_length
    rows, offset = [], 0
    pads = [0, 0] * (data.ndim - 1)
    for b in sizes:
        rows.append(data.narrow(0, offset, b).pad(pads + [0, batch - b], padding_value))
        offset += b
    filler = data.narrow(0, 0, 0).pad(pads + [0, batch], padding_value)
    rows += [filler] * (steps - len(sizes))
    padded = select_rows(stack(rows, 0), sequence.unsorted_indices, 1)
    lengths = np.array([sum(1 for b in sizes if b > i) for i in range(batch)])
    if sequence.unsorted_indices is not None:
        lengths = lengths[np.asarray(sequence.unsorted_indices.tolist())]
    return (padded.transpose(0, 1) if batch_first else padded), tensor(lengths)


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences [L_i, *] into [max L, N, *] ([N, max L, *] with batch_first),
    padding the shorter ones with padding_value on `padding_side`."""
    if not sequences:
        raise ShrewValueError("pad_sequence: needs at least one sequence")
    if padding_side not in ("left", "right"):
        raise ShrewValueError(f"pad_sequence: padding_side must be 'left' or 'right', got "
                              f"{padding_side!r}")
    trailing = sequences[0].shape[1:]
    if any(s.ndim == 0 or s.shape[1:] != trailing for s in sequences):
        raise ShapeError(f"pad_sequence: sequences must share their trailing dims, got "
                         f"{', '.join(fmt(s.shape) for s in sequences)}")
    longest = max(s.shape[0] for s in sequences)
    pads = [0, 0] * len(trailing)
    padded = [s.pad(pads + ([0, longest - s.shape[0]] if padding_side == "right"
                            else [longest - s.shape[0], 0]), padding_value) for s in sequences]
    return stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """pack_padded_sequence of pad_sequence(sequences)."""
    return pack_padded_sequence(pad_sequence(sequences), [s.shape[0] for s in sequences],
                                enforce_sorted=enforce_sorted)
