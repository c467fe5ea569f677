"""Layers as functions: linear, convolution, pooling, embedding, dropout, normalisation."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ... import functions as _fn
from ...checkpoint import in_recomputation
from ...dtype import check_float, int32, int64
from ...errors import DTypeError, ShapeError, ShrewError
from ...grad_mode import no_grad
from ...shape import fmt
from ...tensor import Tensor
from ..parameter import assign_
from ._checks import tensor_arg as _tensor

if TYPE_CHECKING:
    from ...typing import IntOrPair



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
    y = flat @ w.transpose(0, 1)
    if b is not None:
        y = y + b
    return y.reshape(*x.shape[:-1], w.shape[0]) if x.ndim > 2 else y


def conv1d(x: Tensor, w: Tensor, b: Tensor | None = None, stride: int = 1,
           padding: int = 0) -> Tensor:
    """1-d convolution of [N, C_in, L] with w [C_out, C_in, k], plus an optional bias."""
    _check_bias("conv1d", b, _tensor("conv1d", "weight", w).shape[0])
    y = _fn.conv1d(x, w, stride, padding)
    return y if b is None else y + b.reshape(1, -1, 1)


def conv2d(x: Tensor, w: Tensor, b: Tensor | None = None, stride: IntOrPair = 1,
           padding: IntOrPair = 0) -> Tensor:
    """2-d convolution of [N, C_in, H, W] with w [C_out, C_in, kh, kw], plus an optional
    bias."""
    _check_bias("conv2d", b, _tensor("conv2d", "weight", w).shape[0])
    y = _fn.conv2d(x, w, stride, padding)
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def max_pool2d(x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None = None,
               padding: IntOrPair = 0) -> Tensor:
    """The maximum over each window (stride defaults to the kernel size)."""
    return _fn.max_pool2d(x, kernel_size, stride, padding)


def avg_pool2d(x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None = None,
               padding: IntOrPair = 0) -> Tensor:
    """Average over each window, padded zeros counted (PyTorch's default)."""
    return _fn.avg_pool2d(x, kernel_size, stride, padding)


def embedding(idx: Tensor, weight: Tensor) -> Tensor:
    """Rows of weight [num, dim] picked by integer idx of any shape -> [*idx.shape, dim].
    A gather, so the weight's gradient is a scatter-add of the output gradient."""
    _tensor("embedding", "indices", idx)
    if _tensor("embedding", "weight", weight).ndim != 2:
        raise ShapeError(f"embedding: weight must be [num_embeddings, dim], got "
                         f"{fmt(weight.shape)}")
    if idx.dtype not in (int32, int64):
        raise DTypeError(f"embedding: indices must be an integer tensor, got {idx.dtype}")
    n, dim = idx.numel(), weight.shape[1]
    rows = idx.reshape(n, 1).expand(n, dim)
    try:
        out = weight.gather(0, rows)
    except ShapeError as exc:
        raise ShapeError(f"embedding: an index is outside [0, {weight.shape[0]}) for weight "
                         f"{fmt(weight.shape)} ({exc})") from None
    return out.reshape(*idx.shape, dim)


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p).  The mask comes
    from the device's generator, which checkpoint replays."""
    if not 0.0 <= p <= 1.0:
        raise ShrewError(f"dropout: p must lie in [0, 1], got {p!r}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = _fn.rand(*x.shape, dtype=x.dtype, device=x.device) >= p
    return _fn.where(keep, x * (1.0 / (1.0 - p)), 0.0)


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
    y = _fn.standardize(x, len(shape), eps)
    if weight is not None:
        y = y * weight
    return y if bias is None else y + bias


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
                assign_(running_mean, running_mean * (1 - m) + mean.reshape(c) * m)
                unbiased = var.reshape(c) * (count / (count - 1))
                assign_(running_var, running_var * (1 - m) + unbiased * m)
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
