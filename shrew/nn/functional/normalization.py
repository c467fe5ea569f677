"""Normalisations as functions: layer, group, RMS and local response normalisation, and
normalize (unit p-norm vectors); batch and instance norm are in batchnorm.py and
instancenorm.py."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...core.autocast import autocast_op
from ...ops.norm import layer_norm_affine, standardize
from ...ops.reduce import vector_norm
from ...core.dtype import check_float
from ...core.errors import ArgumentError, ShapeError
from ...core.shape import fmt, normalize_dim
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor


def _per_channel(t: Tensor, ndim: int) -> Tensor:
    """[C] shaped to broadcast over the channels (dim 1) of an ndim-d input."""
    return t.reshape(-1, *(1,) * (ndim - 2))


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    if weight is not None:
        y = y * _per_channel(weight, y.ndim)
    return y if bias is None else y + _per_channel(bias, y.ndim)


def _check_channels(op: str, x: Tensor, **tensors: Tensor | None) -> int:
    if _tensor(op, "input", x).ndim < 2:
        raise ShapeError(f"{op}: input must be [N, C, ...], got {fmt(x.shape)}")
    check_float(x.dtype, op)
    c = x.shape[1]
    for name, t in tensors.items():
        if t is not None and _tensor(op, name, t).shape != (c,):
            raise ShapeError(f"{op}: {name} must have shape [{c}] for input {fmt(x.shape)}, "
                             f"got {fmt(t.shape)}")
    return c


@autocast_op("layer_norm")
def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing dims `normalized_shape` (biased variance)."""
    x = input  # torch's parameter names, short names below
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(_tensor("layer_norm", "input", x).shape)
    if not shape or len(shape) > k or x.shape[k - len(shape):] != shape:
        raise ShapeError(f"layer_norm: input {fmt(x.shape)} does not end in normalized_shape "
                         f"{fmt(shape)}")
    check_float(x.dtype, "layer_norm")
    if weight is not None and bias is not None:   # one backend call where it has one
        return layer_norm_affine(x, len(shape), weight, bias, eps)
    y = standardize(x, len(shape), eps)
    if weight is None:   # y is standardize's output, which its gradient reads
        return y if bias is None else y + bias
    return y * weight


@autocast_op("group_norm")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each group of C / num_groups channels of [N, C, ...] over its channels and
    positions (biased variance), then scale and shift per channel."""
    c = _check_channels("group_norm", input, weight=weight, bias=bias)
    if num_groups < 1 or c % num_groups:
        raise ShapeError(f"group_norm: {c} channels of input {fmt(input.shape)} do not split "
                         f"into {num_groups} groups")
    n = input.shape[0]
    y = standardize(input.reshape(n, num_groups, -1), 1, eps).reshape(*input.shape)
    return _affine(y, weight, bias)


@autocast_op("rms_norm")
def rms_norm(input: Tensor, normalized_shape: int | Sequence[int],
             weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the trailing dims normalized_shape, times weight;
    eps defaults to the machine epsilon of the input's dtype, as PyTorch."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    x = _tensor("rms_norm", "input", input)
    k = len(shape)
    if not shape or k > x.ndim or x.shape[x.ndim - k:] != shape:
        raise ShapeError(f"rms_norm: input {fmt(x.shape)} does not end in normalized_shape "
                         f"{fmt(shape)}")
    check_float(x.dtype, "rms_norm")
    if eps is None:
        eps = float(np.finfo(x.dtype.np).eps)
    dims = tuple(range(x.ndim - k, x.ndim))
    y = x / (x.square().mean(dims, keepdim=True) + eps).sqrt()
    return y if weight is None else y * weight


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta, the window
    zero-padded at the ends (as AlexNet's normalisation, and PyTorch's)."""
    if _tensor("local_response_norm", "input", input).ndim < 3:
        raise ShapeError(f"local_response_norm: input must be [N, C, ...] with positions, got "
                         f"{fmt(input.shape)}")
    if size < 1:
        raise ArgumentError(f"local_response_norm: size must be >= 1, got {size!r}")
    c = input.shape[1]
    pads = [0, 0] * (input.ndim - 2) + [size // 2, (size - 1) // 2]
    squares = input.square().pad(pads)
    window = squares.narrow(1, 0, c)
    for offset in range(1, size):
        window = window + squares.narrow(1, offset, c)
    return input / (window * (alpha / size) + k) ** beta


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """input / max(||input||_p along dim, eps)."""
    x = _tensor("normalize", "input", input)
    d = normalize_dim(dim, x.ndim, "normalize")
    return x / vector_norm(x, p, d, keepdim=True, op="normalize").clamp(min=eps)
