"""Layers as functions: linear, convolution, dropout, normalisation (pooling: pooling.py)."""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...ops.conv import conv1d as _conv1d
from ...ops.conv import conv2d as _conv2d
from ...ops.conv import conv_transpose1d as _conv_transpose1d
from ...ops.conv import conv_transpose2d as _conv_transpose2d
from ...ops.conv import same_padding
from ...ops.creation import ones
from ...ops.elementwise.recorded import add_bias, where
from ...ops.linalg.matmul import linear as _linear
from ...ops.norm import layer_norm_affine, standardize
from ...ops.random import rand
from ...autograd.checkpoint import in_recomputation
from ...core.dtype import check_float
from ...core.errors import ShapeError, ShrewError
from ...core.grad_mode import no_grad
from ...core.shape import fmt
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor

if TYPE_CHECKING:
    from ...typing import IntOrPair

    IntOrOne = int | tuple[int, ...]  # a 1-d size: an int or a 1-tuple



# -- layers ------------------------------------------------------------------------------
def _check_bias(op: str, b: Tensor | None, n: int) -> None:
    if b is not None and _tensor(op, "bias", b).shape != (n,):
        raise ShapeError(f"{op}: bias must have shape [{n}], got {fmt(b.shape)}")


def linear(x: Tensor, w: Tensor, b: Tensor | None = None) -> Tensor:
    """x @ w.T + b, with w of shape [out, in] and x of shape [..., in]."""
    _tensor("linear", "input", x)
    if _tensor("linear", "weight", w).ndim != 2:
        raise ShapeError(f"linear: weight must be [out, in], got {fmt(w.shape)}")
    if x.ndim == 0 or x.shape[-1] != w.shape[1]:
        raise ShapeError(f"linear: input {fmt(x.shape)} must end in {w.shape[1]} features "
                         f"to match weight {fmt(w.shape)}")
    _check_bias("linear", b, w.shape[0])
    # Leading dims are folded into one: a single 2-d GEMM, whose weight gradient is then
    # one product rather than a batch of them summed.
    flat = x.reshape(-1, x.shape[-1]) if x.ndim > 2 else x
    y = _linear(flat, w, b)
    return y.reshape(*x.shape[:-1], w.shape[0]) if x.ndim > 2 else y


def conv1d(x: Tensor, w: Tensor, b: Tensor | None = None, stride: IntOrOne = 1,
           padding: IntOrOne | str = 0, dilation: IntOrOne = 1, groups: int = 1) -> Tensor:
    """1-d convolution of [N, C_in, L] with w [C_out, C_in/groups, k], plus an optional
    bias; padding is a size, 'valid' (none) or 'same' (the output keeps the length)."""
    _check_bias("conv1d", b, _tensor("conv1d", "weight", w).shape[0])
    if _tensor("conv1d", "input", x).ndim == 2:  # unbatched [C, L]
        return conv1d(x.unsqueeze(0), w, b, stride, padding, dilation, groups).squeeze(0)
    x, pads = _resolve_padding("conv1d", x, w, stride, padding, dilation, 1)
    y = _conv1d(x, w, stride, pads[0], dilation, groups)
    return y if b is None else add_bias(y, b.reshape(-1, 1))


def conv2d(x: Tensor, w: Tensor, b: Tensor | None = None, stride: IntOrPair = 1,
           padding: IntOrPair | str = 0, dilation: IntOrPair = 1, groups: int = 1) -> Tensor:
    """2-d convolution of [N, C_in, H, W] with w [C_out, C_in/groups, kh, kw], plus an
    optional bias; padding is an int, a pair, 'valid' or 'same'."""
    _check_bias("conv2d", b, _tensor("conv2d", "weight", w).shape[0])
    if _tensor("conv2d", "input", x).ndim == 3:  # unbatched [C, H, W]
        return conv2d(x.unsqueeze(0), w, b, stride, padding, dilation, groups).squeeze(0)
    x, pads = _resolve_padding("conv2d", x, w, stride, padding, dilation, 2)
    y = _conv2d(x, w, stride, pads, dilation, groups)
    return y if b is None else add_bias(y, b.reshape(-1, 1, 1))


def _resolve_padding(op: str, x: Tensor, w: Tensor, stride: object, padding: object,
                     dilation: object, dims: int) -> tuple[Tensor, tuple]:
    """Numeric padding per spatial dim for padding given as a size, 'valid' or 'same';
    for 'same' with an odd total the input gets the extra column on its right here."""
    if not isinstance(padding, str):
        return x, (padding,) if dims == 1 else padding  # type: ignore[return-value]
    if padding == "valid":
        return x, (0,) * dims
    if padding != "same":
        raise ShrewError(f"{op}: padding must be a size, 'valid' or 'same', got {padding!r}")
    symmetric, extra = same_padding(op, w.shape[2:], _per_dim(dilation, dims),
                                     _per_dim(stride, dims))
    if any(extra):
        x = x.pad([p for e in reversed(extra) for p in (0, e)])
    return x, tuple(symmetric)


def _per_dim(value: object, dims: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims


def conv_transpose1d(x: Tensor, w: Tensor, b: Tensor | None = None, stride: IntOrOne = 1,
                     padding: IntOrOne = 0, output_padding: IntOrOne = 0, groups: int = 1,
                     dilation: IntOrOne = 1) -> Tensor:
    """The transposed 1-d convolution of [N, C_in, L] with w [C_in, C_out/groups, k],
    plus an optional bias."""
    _tensor("conv_transpose1d", "weight", w)
    if _tensor("conv_transpose1d", "input", x).ndim == 2:  # unbatched [C, L]
        return conv_transpose1d(x.unsqueeze(0), w, b, stride, padding, output_padding, groups,
                                dilation).squeeze(0)
    y = _conv_transpose1d(x, w, stride, padding, output_padding, groups, dilation)
    _check_bias("conv_transpose1d", b, y.shape[1])
    return y if b is None else y + b.reshape(1, -1, 1)


def conv_transpose2d(x: Tensor, w: Tensor, b: Tensor | None = None, stride: IntOrPair = 1,
                     padding: IntOrPair = 0, output_padding: IntOrPair = 0, groups: int = 1,
                     dilation: IntOrPair = 1) -> Tensor:
    """The transposed 2-d convolution of [N, C_in, H, W] with w [C_in, C_out/groups, kh, kw],
    plus an optional bias."""
    _tensor("conv_transpose2d", "weight", w)
    if _tensor("conv_transpose2d", "input", x).ndim == 3:  # unbatched [C, H, W]
        return conv_transpose2d(x.unsqueeze(0), w, b, stride, padding, output_padding, groups,
                                dilation).squeeze(0)
    y = _conv_transpose2d(x, w, stride, padding, output_padding, groups, dilation)
    _check_bias("conv_transpose2d", b, y.shape[1])
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def dropout(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p).  The mask comes
    from the device's generator, which checkpoint replays.  inplace is accepted; the
    result is a new tensor."""
    if not 0.0 <= p <= 1.0:
        raise ShrewError(f"dropout: p must lie in [0, 1], got {p!r}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = rand(*x.shape, dtype=x.dtype, device=x.device) >= p
    return where(keep, x * (1.0 / (1.0 - p)), 0.0)


def _channel_mask_shape(op: str, x: Tensor, spatial: int) -> tuple[int, ...]:
    """[N, C, 1, ...] (or [C, 1, ...] unbatched): one draw per channel of x, which must have
    `spatial` dims after the channels (or any number when spatial is 0)."""
    if _tensor(op, "input", x).ndim < 2 or (spatial and x.ndim not in (spatial + 1,
                                                                           spatial + 2)):
        raise ShapeError(f"{op}: input must be [N, C, ...] with {spatial or 'some'} spatial "
                         f"dims (or unbatched), got {fmt(x.shape)}")
    lead = x.ndim - spatial if spatial else 2
    return x.shape[:lead] + (1,) * (x.ndim - lead)


def _feature_dropout(op: str, x: Tensor, p: float, training: bool, spatial: int) -> Tensor:
    """dropout of whole channels: one keep-or-zero draw per (sample, channel)."""
    shape = _channel_mask_shape(op, x, spatial)
    if not training or p == 0.0:
        return x
    return x * dropout(ones(*shape, dtype=x.dtype, device=x.device), p)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of [N, C, L] (or [C, L]) with probability p, scale by 1/(1-p)."""
    return _feature_dropout("dropout1d", input, p, training, 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of [N, C, H, W] (or [C, H, W]) with probability p.  A 2-d
    input, which PyTorch still accepts with a deprecation warning, gets its behaviour:
    every element dropped on its own, as dropout does (pytorch/examples' mnist_rnn
    relies on it)."""
    if _tensor("dropout2d", "input", input).ndim == 2:
        warnings.warn("dropout2d: a 2-D input is deprecated (PyTorch will refuse it); it is "
                      "dropped element by element, as dropout does: use dropout instead",
                      UserWarning, stacklevel=2)
        return dropout(input, p, training)
    return _feature_dropout("dropout2d", input, p, training, 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of [N, C, D, H, W] (or [C, D, H, W]) with probability p."""
    return _feature_dropout("dropout3d", input, p, training, 3)


# SELU's negative saturation value -scale * alpha, which alpha dropout sets dropped units to.
_ALPHA_PRIME = 1.7580993408473766


def _alpha_dropout(op: str, x: Tensor, p: float, training: bool, mask_shape: tuple[int, ...]
                   ) -> Tensor:
    """Set dropped units to SELU's saturation value, then restore the mean and variance of
    a unit-normal input with an affine map (Klambauer et al., 2017)."""
    if not 0.0 <= p <= 1.0:
        raise ShrewError(f"{op}: p must lie in [0, 1], got {p!r}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = rand(*mask_shape, dtype=x.dtype, device=x.device) >= p
    a = 1.0 / math.sqrt((_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
    b = _ALPHA_PRIME * a * p
    return where(keep, x * a, -_ALPHA_PRIME * a) + b


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout for self-normalising (SELU) networks: keeps mean 0 and variance 1."""
    return _alpha_dropout("alpha_dropout", _tensor("alpha_dropout", "input", input), p,
                          training, input.shape)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels."""
    shape = _channel_mask_shape("feature_alpha_dropout", input, 0)
    return _alpha_dropout("feature_alpha_dropout", input, p, training, shape)


# -- normalisation ---------------------------------------------------------------------------
def layer_norm(x: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing dims `normalized_shape` (biased variance)."""
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


def batch_norm(x: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) of [N, C, ...].

    Training uses the batch statistics and blends them into running_mean / running_var in
    place (unbiased variance, as PyTorch), except while checkpoint recomputes the forward
    pass, so that each step updates them once.  Evaluation uses the running statistics."""
    if _tensor("batch_norm", "input", x).ndim < 2:
        raise ShapeError(f"batch_norm: input must be [N, C, ...], got {fmt(x.shape)}")
    check_float(x.dtype, "batch_norm")
    c = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and _tensor("batch_norm", name, t).shape != (c,):
            raise ShapeError(f"batch_norm: {name} must have shape [{c}] for input "
                             f"{fmt(x.shape)}, got {fmt(t.shape)}")
    if (running_mean is None) != (running_var is None):
        raise ShrewError("batch_norm: give both running_mean and running_var, or neither")
    stat_shape = (1, c) + (1,) * (x.ndim - 2)
    if training:
        dims = (0,) + tuple(range(2, x.ndim))
        count = x.numel() // c
        if count < 2:
            raise ShapeError(f"batch_norm: training needs more than one value per channel, "
                             f"got input {fmt(x.shape)}")
        mean = x.mean(dims, keepdim=True)
        centred = x - mean
        var = centred.square().mean(dims, keepdim=True)
        if running_mean is not None and running_var is not None and not in_recomputation():
            with no_grad():
                m = momentum
                running_mean.copy_(running_mean * (1 - m) + mean.reshape(c) * m)
                unbiased = var.reshape(c) * (count / (count - 1))
                running_var.copy_(running_var * (1 - m) + unbiased * m)
    else:
        if running_mean is None or running_var is None:
            raise ShrewError("batch_norm: evaluation (training=False) needs running_mean "
                             "and running_var")
        centred = x - running_mean.reshape(*stat_shape)
        var = running_var.reshape(*stat_shape)
    y = centred / (var + eps).sqrt()
    if weight is not None:
        y = y * weight.reshape(*stat_shape)
    return y if bias is None else y + bias.reshape(*stat_shape)
