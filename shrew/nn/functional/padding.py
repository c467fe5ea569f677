"""pad as a function (constant, reflect, replicate, circular), composed of gathers: a
gather's backward is a scatter-add, so every mode is differentiable on every backend.
nn.modules.padding's layers (ReflectionPad2d, ...) call it."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...core import autocast as _autocast
from ...core.errors import ArgumentError, ShapeError, UnsupportedError
from ...core.shape import fmt
from ...ops.creation import tensor
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
    if mode == "circular":  # as torch: crop the negative sides first, then wrap
        start, stop = max(-lo, 0), size - max(-hi, 0)
        return start + (i - start) % (stop - start)
    period = 2 * (size - 1)  # reflect: mirror at the edges, not repeating them
    i = np.abs(i) % period if period else np.zeros_like(i)
    return np.where(i >= size, period - i, i)


def _check_modal(mode: str, x: Tensor, pads: tuple[int, ...]) -> None:
    """PyTorch's limits for the non-constant modes: 1 padded dim of a 2-d/3-d input, 2 of
    a 3-d/4-d one or 3 of a 4-d/5-d one (the leading dims are channels and batch)."""
    if len(pads) % 2 or len(pads) > 2 * x.ndim:
        raise ArgumentError(f"pad: padding length must be even and at most twice the input's "
                            f"dims, got {len(pads)} for {fmt(x.shape)}")
    dims = len(pads) // 2
    if x.ndim not in (dims + 1, dims + 2) or not 1 <= dims <= 3:
        raise UnsupportedError(f"pad: mode {mode!r} pads 1 dim of a 2-d or 3-d input, 2 of a "
                               f"3-d or 4-d one or 3 of a 4-d or 5-d one; got {len(pads)} pads "
                               f"for input {fmt(x.shape)} (use mode='constant', or reshape)")
    if any(s == 0 for s in x.shape[1:]):
        raise ShapeError(f"pad: mode {mode!r} needs non-empty dims besides the batch dim, "
                         f"got input {fmt(x.shape)}")


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """Pad the last len(pad) // 2 dims (pad as (left, right, top, bottom, ...), last dim
    first); negative pads crop.  mode: "constant" (value, default 0), "reflect" (mirror
    without repeating the edge, pads < size), "replicate" (repeat the edge), "circular"
    (wrap around, pads <= size)."""
    x = _tensor("pad", "input", input)
    if mode not in _PAD_MODES:
        raise ArgumentError(f"pad: mode must be one of {', '.join(_PAD_MODES)}, got {mode!r}")
    pads = tuple(pad)
    if mode == "constant":
        out = x.pad(pads, 0.0 if value is None else value)
    else:
        if value not in (None, 0, 0.0):
            raise ArgumentError(f"pad: a value is only for mode='constant', got {value!r} "
                                f"with mode={mode!r}")
        _check_modal(mode, x, pads)
        if _autocast.armed:  # reflect and replicate are in PyTorch's cpu float32 list
            out = _autocast.dispatch(_AUTOCAST_NAMES.get(mode, mode), _modal_pad, x, pads,
                                     mode)
        else:
            out = _modal_pad(x, pads, mode)
    # a new tensor, as PyTorch's, also where nothing grows (zero pads give x, negative
    # ones a view of it): writing into the result must not change x
    return out if any(p > 0 for p in pads) else out.clone()


_AUTOCAST_NAMES = {"reflect": "reflection_pad", "replicate": "replication_pad"}


def _modal_pad(x: Tensor, pads: tuple, mode: str) -> Tensor:
    """x padded by reflecting, replicating or wrapping (pads checked)."""
    for i in range(len(pads) // 2):
        dim, lo, hi = x.ndim - 1 - i, pads[2 * i], pads[2 * i + 1]
        size = x.shape[dim]
        kept = size - max(-lo, 0) - max(-hi, 0)  # what circular wraps around
        limit = size - 1 if mode == "reflect" else kept
        if mode != "replicate" and max(lo, hi) > limit:
            raise ShapeError(f"pad: {mode} padding ({lo}, {hi}) of dim {dim} must be at most "
                             f"{limit} for input {fmt(x.shape)}")
        if kept <= 0:
            raise ShapeError(f"pad: padding ({lo}, {hi}) of dim {dim} leaves nothing "
                             f"for input {fmt(x.shape)}")
        if lo or hi:
            x = take(x, dim, _source_index(mode, size, lo, hi))
    return x


_pad = pad  # constant_pad_nd's parameter, named pad as torch's, hides the function


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:  # noqa: A002
    """torch.constant_pad_nd: pad(input, pad, "constant", value)."""
    return _pad(input, pad, "constant", value)
