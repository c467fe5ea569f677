"""Stateless building blocks: layers as functions, activations, normalisation and losses.

Everything is written with Tensor operations, so it runs on any device and backward comes
from the core's gradient rules.  Inputs are checked here, before any kernel runs, and
errors name the function and the shapes or dtypes at fault."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..checkpoint import in_recomputation
from ..dtype import check_float, int32, int64
from ..errors import DTypeError, ShapeError, ShrewError
from ..grad_mode import no_grad
from ..ops.conv import conv1d as _conv1d
from ..ops.conv import conv2d as _conv2d
from ..ops.creation import arange
from ..ops.elementwise import where
from ..ops.index import check_range, gather
from ..ops.norm import standardize
from ..ops.pool import avg_pool2d as _avg_pool2d
from ..ops.pool import max_pool2d as _max_pool2d
from ..ops.random import rand
from ..shape import fmt
from ..tensor import Tensor

if TYPE_CHECKING:
    from ..typing import IntOrPair

_REDUCTIONS = ("mean", "sum", "none")


def _tensor(op: str, name: str, x: object) -> Tensor:
    if not isinstance(x, Tensor):
        raise ShrewError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    return x


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
    y = _conv1d(x, w, stride, padding)
    return y if b is None else y + b.reshape(1, -1, 1)


def conv2d(x: Tensor, w: Tensor, b: Tensor | None = None, stride: IntOrPair = 1,
           padding: IntOrPair = 0) -> Tensor:
    """2-d convolution of [N, C_in, H, W] with w [C_out, C_in, kh, kw], plus an optional
    bias."""
    _check_bias("conv2d", b, _tensor("conv2d", "weight", w).shape[0])
    y = _conv2d(x, w, stride, padding)
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def max_pool2d(x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None = None,
               padding: IntOrPair = 0) -> Tensor:
    """The maximum over each window (stride defaults to the kernel size)."""
    return _max_pool2d(x, kernel_size, stride, padding)


def avg_pool2d(x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None = None,
               padding: IntOrPair = 0) -> Tensor:
    """Average over each window, padded zeros counted (PyTorch's default)."""
    return _avg_pool2d(x, kernel_size, stride, padding)


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
    try:  # the range on idx itself, whose host range is known when it was uploaded
        check_range("gather", idx, weight.shape[0], 0)
        out = gather(weight, 0, rows, range_checked=True)
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
    keep = rand(*x.shape, dtype=x.dtype, device=x.device) >= p
    return where(keep, x * (1.0 / (1.0 - p)), 0.0)


# -- activations ---------------------------------------------------------------------------
def relu(x: Tensor) -> Tensor:
    """max(x, 0)."""
    return x.relu()


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """The exact erf form, or the tanh approximation with approximate="tanh"."""
    return x.gelu(approximate)


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + exp(-x))."""
    return x.sigmoid()


def tanh(x: Tensor) -> Tensor:
    """The hyperbolic tangent."""
    return x.tanh()


def softmax(x: Tensor, dim: int) -> Tensor:
    """exp(x) normalised to sum to 1 along dim (computed stably, for any magnitude)."""
    return _tensor("softmax", "input", x).softmax(dim)


def log_softmax(x: Tensor, dim: int) -> Tensor:
    """log(softmax(x, dim)), computed stably."""
    return _tensor("log_softmax", "input", x).log_softmax(dim)


# -- attention -------------------------------------------------------------------------------
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, *,
                                 dropout_p: float = 0.0, is_causal: bool = False) -> Tensor:
    """softmax(q k^T / sqrt(E)) v over [..., T, E] inputs.  is_causal lets query i see keys
    j <= i only; dropout_p drops attention weights."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if _tensor("scaled_dot_product_attention", name, t).ndim < 2:
            raise ShapeError(f"scaled_dot_product_attention: {name} must be [..., T, E], "
                             f"got {fmt(t.shape)}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ShapeError(f"scaled_dot_product_attention: query {fmt(query.shape)}, key "
                         f"{fmt(key.shape)} and value {fmt(value.shape)} do not fit")
    # Scaling q (T*E values) is cheaper than scaling the scores (T*T values).
    scores = (query * (1.0 / math.sqrt(query.shape[-1]))) @ key.transpose(-1, -2)
    if is_causal:
        # An additive mask (0, or -inf above the diagonal) rather than a where on the
        # scores: its backward passes the gradient straight through.
        tq, tk = scores.shape[-2:]
        rows = arange(tq, device=query.device).reshape(tq, 1)
        visible = rows >= arange(tk, device=query.device).reshape(1, tk)
        scores = scores + where(visible, 0.0, float("-inf")).to_dtype(scores.dtype)
    weights = softmax(scores, -1)
    return dropout(weights, dropout_p) @ value


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
    y = standardize(x, len(shape), eps)
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


# -- losses ------------------------------------------------------------------------------------
def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ShrewError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _check_same_shape(op: str, a: Tensor, b: Tensor,
                      names: tuple[str, str] = ("input", "target")) -> None:
    _tensor(op, names[0], a)
    if _tensor(op, names[1], b).shape != a.shape:
        raise ShapeError(f"{op}: {names[0]} {fmt(a.shape)} and {names[1]} {fmt(b.shape)} must "
                         f"have the same shape")


def _check_class_target(op: str, scores: Tensor, target: Tensor) -> int:
    """Validate [N, C, d...] scores (or [C]) against int target [N, d...] (or []); returns
    the class dim."""
    if _tensor(op, "input", scores).ndim == 0:
        raise ShapeError(f"{op}: input must be [N, C, ...] or [C], got a 0-d tensor")
    check_float(scores.dtype, op)
    if _tensor(op, "target", target).dtype not in (int32, int64):
        raise DTypeError(f"{op}: target must hold int64 class indices, got {target.dtype}")
    expected = scores.shape[:1] + scores.shape[2:] if scores.ndim > 1 else ()
    if target.shape != expected:
        raise ShapeError(f"{op}: target {fmt(target.shape)} does not fit input "
                         f"{fmt(scores.shape)} (expected target shape {fmt(expected)})")
    return 1 if scores.ndim > 1 else 0


def _pick_negated(op: str, logp: Tensor, target: Tensor, dim: int) -> Tensor:
    """-logp at each target class."""
    try:  # the range on target itself, whose host range is known when it was uploaded
        check_range("gather", target, logp.shape[dim], dim)
        picked = gather(logp, dim, target.unsqueeze(dim), range_checked=True)
    except ShapeError as exc:
        raise ShapeError(f"{op}: target holds a class index outside [0, {logp.shape[dim]}) "
                         f"({exc})") from None
    return -picked.squeeze(dim)


def nll_loss(logp: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of log-probabilities [N, C, ...] at int64 classes [N, ...]."""
    _check_reduction("nll_loss", reduction)
    dim = _check_class_target("nll_loss", logp, target)
    return _reduce(_pick_negated("nll_loss", logp, target, dim), reduction)


def cross_entropy(logits: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """log_softmax over the class dim then nll_loss; stable for any logits."""
    _check_reduction("cross_entropy", reduction)
    dim = _check_class_target("cross_entropy", logits, target)
    loss = _pick_negated("cross_entropy", log_softmax(logits, dim), target, dim)
    return _reduce(loss, reduction)


def mse_loss(a: Tensor, b: Tensor, reduction: str = "mean") -> Tensor:
    """(a - b) ** 2 of two same-shaped tensors, reduced by "mean", "sum" or "none"."""
    _check_reduction("mse_loss", reduction)
    _check_same_shape("mse_loss", a, b)
    return _reduce((a - b).square(), reduction)


def _clamped_log(p: Tensor) -> Tensor:
    """log(p) clamped below at -100, as PyTorch's binary_cross_entropy.  p == 0 goes
    through log(1) so that neither the value nor the gradient is inf or NaN."""
    positive = p > 0
    return where(positive, where(positive, p, 1.0).log().clamp(min=-100.0), -100.0)


def binary_cross_entropy(p: Tensor, y: Tensor, reduction: str = "mean") -> Tensor:
    """-(y log p + (1 - y) log(1 - p)) for probabilities p and targets y in [0, 1]."""
    _check_reduction("binary_cross_entropy", reduction)
    _check_same_shape("binary_cross_entropy", p, y)
    check_float(p.dtype, "binary_cross_entropy")
    loss = -(y * _clamped_log(p) + (1.0 - y) * _clamped_log(1.0 - p))
    return _reduce(loss, reduction)
