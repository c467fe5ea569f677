"""Normalisations beyond layer_norm and batch_norm: group, instance, RMS and local
response normalisation, and normalize (unit p-norm vectors)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ops.norm import standardize
from ...ops.reduce import vector_norm
from ...autograd.checkpoint import in_recomputation
from ...core.dtype import check_float
from ...core.errors import ShapeError, ShrewError
from ...core.grad_mode import no_grad
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


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample of [N, C, ...] over its positions.  With
    use_input_stats the running statistics (if given) take the batch's mean of the
    per-instance statistics (unbiased variance); without, they normalise instead."""
    op = "instance_norm"
    c = _check_channels(op, input, running_mean=running_mean, running_var=running_var,
                        weight=weight, bias=bias)
    if input.ndim < 3:
        raise ShapeError(f"{op}: input must be [N, C, ...] with positions, got "
                         f"{fmt(input.shape)}")
    n = input.shape[0]
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ShrewError(f"{op}: use_input_stats=False needs running_mean and running_var")
        shape = (1, c) + (1,) * (input.ndim - 2)
        y = (input - running_mean.reshape(*shape)) / (running_var.reshape(*shape) + eps).sqrt()
        return _affine(y, weight, bias)
    flat = input.reshape(n, c, -1)
    y = standardize(flat, 1, eps).reshape(*input.shape)
    if running_mean is not None and running_var is not None and not in_recomputation():
        count = flat.shape[2]
        with no_grad():
            mean = flat.mean(2)
            var = (flat - mean.unsqueeze(2)).square().sum(2) * (1.0 / max(count - 1, 1))
            running_mean.copy_(running_mean * (1 - momentum) + mean.mean(0) * momentum)
            running_var.copy_(running_var * (1 - momentum) + var.mean(0) * momentum)
    return _affine(y, weight, bias)


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
        raise ShrewError(f"local_response_norm: size must be >= 1, got {size!r}")
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


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / (max(||x1||, eps) max(||x2||, eps)) along dim, x1 and x2 broadcast."""
    _tensor("cosine_similarity", "x1", x1)
    _tensor("cosine_similarity", "x2", x2)
    d = normalize_dim(dim, max(x1.ndim, x2.ndim), "cosine_similarity")
    d = d - max(x1.ndim, x2.ndim)  # count from the end: x1 and x2 may differ in rank
    n1 = vector_norm(x1, 2, d, op="cosine_similarity").clamp(min=eps)
    n2 = vector_norm(x2, 2, d, op="cosine_similarity").clamp(min=eps)
    return (x1 * x2).sum(d) / (n1 * n2)
