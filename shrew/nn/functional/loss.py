"""Loss functions, composed of Tensor operations (backward comes from autograd).

Every loss takes reduction "mean", "sum" or "none", and PyTorch's deprecated size_average /
reduce pair.  shrew's older signatures put `reduction` third (cross_entropy(x, t, "sum")):
a string in that place is still read as the reduction."""
from __future__ import annotations

import math
from typing import Any

from ...core.autocast import autocast_op
from ...ops.creation import arange
from ...ops.creation import full as _full
from ...ops.elementwise.recorded import where
from ...ops.index.recorded import check_range, gather, range_known_now
from ...core.dtype import check_float, int32, int64
from ...core.errors import ArgumentError, DTypeError, ShapeError, ShrewIndexError
from ...core.shape import broadcast_shapes, fmt
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor
from .activation import _softplus, logsigmoid
from ._reduction import _reduce, _reduction
from .ctc import ctc_loss as ctc_loss  # its own module; still importable from here
from .distance import pairwise_distance


def _check_same_shape(op: str, a: Tensor, b: Tensor,
                      names: tuple[str, str] = ("input", "target")) -> None:
    _tensor(op, names[0], a)
    if _tensor(op, names[1], b).shape != a.shape:
        raise ShapeError(f"{op}: {names[0]} {fmt(a.shape)} and {names[1]} {fmt(b.shape)} must "
                         f"have the same shape")


def _elementwise(op: str, input: Tensor, target: Tensor) -> Tensor:
    """input - target of two same-shaped float tensors."""
    _check_same_shape(op, input, target)
    check_float(input.dtype, op)
    return input - target


# -- classification with class indices ------------------------------------------------------
def _class_dim(op: str, scores: Tensor) -> int:
    if _tensor(op, "input", scores).ndim == 0:
        raise ShapeError(f"{op}: input must be [N, C, ...] or [C], got a 0-d tensor")
    check_float(scores.dtype, op)
    return 1 if scores.ndim > 1 else 0


def _check_index_target(op: str, scores: Tensor, target: Tensor) -> None:
    """int target [N, d...] (or []) for scores [N, C, d...] (or [C])."""
    if _tensor(op, "target", target).dtype not in (int32, int64):
        raise DTypeError(f"{op}: target must hold int64 class indices (or, for cross_entropy, "
                         f"float class probabilities shaped as the input), got {target.dtype} "
                         f"{fmt(target.shape)} for input {fmt(scores.shape)}")
    expected = scores.shape[:1] + scores.shape[2:] if scores.ndim > 1 else ()
    if target.shape != expected:
        raise ShapeError(f"{op}: target {fmt(target.shape)} does not fit input "
                         f"{fmt(scores.shape)} (expected target shape {fmt(expected)})")


def _check_weight(op: str, weight: Tensor | None, classes: int) -> None:
    if weight is not None and _tensor(op, "weight", weight).shape != (classes,):
        raise ShapeError(f"{op}: weight must have shape [{classes}] (one per class), got "
                         f"{fmt(weight.shape)}")


def _per_class(weight: Tensor, ndim: int, dim: int) -> Tensor:
    """weight [C] shaped to broadcast against [N, C, d...] (or [C])."""
    return weight.reshape(-1, *(1,) * (ndim - dim - 1))


def _gathered(logp: Tensor, target: Tensor, dim: int) -> Tensor:
    """logp at each target class, the targets' range checked already."""
    return gather(logp, dim, target.unsqueeze(dim), range_checked=True).squeeze(dim)


def _pick(op: str, logp: Tensor, target: Tensor, dim: int) -> Tensor:
    """logp at each target class."""
    try:  # the range on target itself, whose host range is known when it was uploaded
        check_range("gather", target, logp.shape[dim], dim)
    except ArgumentError:  # check_range's error
        raise ShrewIndexError(f"{op}: target holds a class index outside [0, {logp.shape[dim]}) "
                              f"for input {fmt(logp.shape)}") from None
    return _gathered(logp, target, dim)


def _nll(op: str, logp: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
         reduction: str, dim: int, smoothing: float = 0.0) -> Tensor:
    """-weight[y] * logp[y] (blended with the uniform-target loss when smoothing > 0),
    leaving out targets equal to ignore_index; "mean" divides by the total weight of the
    targets kept, as PyTorch."""
    classes = logp.shape[dim]
    _check_weight(op, weight, classes)
    # The plain case costs no more than a gather: an ignore_index outside [0, C) that no
    # target holds lets every index through the gather's own range check, where that
    # check reads the targets now (on the host, or an upload's range).  Targets computed
    # on a device are checked with the next read back, too late to choose: they take the
    # masked path, which is right whether or not they hold ignore_index.
    keep = None
    if not 0 <= ignore_index < classes and range_known_now(target):
        try:
            check_range("gather", target, classes, dim)
        except ArgumentError:  # check_range's error: some lie outside [0, C)
            keep = target != ignore_index
            safe = where(keep, target, 0)
            # Any of them that is not ignore_index is the caller's error, found now as it
            # would have been (on the host: no read into Python, no graph break).
            try:
                check_range(op, safe, classes, dim, now=True)
            except ArgumentError:
                raise ShrewIndexError(
                    f"{op}: target holds a class index outside [0, {classes}) that is not "
                    f"ignore_index={ignore_index}, for input {fmt(logp.shape)}") from None
            picked = -_gathered(logp, safe, dim)
        else:
            safe, picked = target, -_gathered(logp, target, dim)
    else:  # (a target outside [0, C) but ignore_index: _pick's error)
        keep = target != ignore_index
        safe = where(keep, target, 0)
        picked = -_pick(op, logp, safe, dim)
    w = None
    if weight is not None:
        w = weight.gather(0, safe.reshape(-1)).reshape(*safe.shape)
        picked = picked * w
    if smoothing:
        full = logp * _per_class(weight, logp.ndim, dim) if weight is not None else logp
        picked = picked * (1.0 - smoothing) - full.sum(dim) * (smoothing / classes)
    if keep is not None:
        picked = where(keep, picked, 0.0)
        if w is not None:
            w = where(keep, w, 0.0)
    if reduction != "mean":
        return _reduce(picked, reduction)
    if w is not None:
        return picked.sum() / w.sum()
    if keep is not None:
        return picked.sum() / keep.to_dtype(picked.dtype).sum()
    return picked.mean()


@autocast_op("nll_loss")
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of log-probabilities [N, C, d...] (or [C]) at int64 classes
    [N, d...] (or []), weighted per class; targets equal to ignore_index count for nothing."""
    if isinstance(weight, str):
        weight, size_average = None, weight
    red = _reduction("nll_loss", size_average, reduce, reduction)
    dim = _class_dim("nll_loss", input)
    _check_index_target("nll_loss", input, target)
    return _nll("nll_loss", input, target, weight, ignore_index, red, dim)


@autocast_op("cross_entropy")
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dim, then nll_loss.  target is int64 class indices
    [N, d...], or float class probabilities shaped as the input [N, C, d...];
    label_smoothing mixes the target with the uniform distribution."""
    op = "cross_entropy"
    if isinstance(weight, str):
        weight, size_average = None, weight
    red = _reduction(op, size_average, reduce, reduction)
    dim = _class_dim(op, input)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ArgumentError(f"{op}: label_smoothing must lie in [0, 1], got {label_smoothing!r}")
    logp = input.log_softmax(dim)
    if isinstance(target, Tensor) and target.dtype.is_floating_point \
            and target.shape == input.shape:
        return _soft_cross_entropy(logp, target, weight, red, dim, label_smoothing)
    _check_index_target(op, input, target)
    return _nll(op, logp, target, weight, ignore_index, red, dim, label_smoothing)


def _soft_cross_entropy(logp: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                        dim: int, smoothing: float) -> Tensor:
    """-sum_c weight_c target_c logp_c for class-probability targets; "mean" averages over
    the samples (and positions), not over the weights."""
    op = "cross_entropy"
    _check_same_shape(op, logp, target)
    classes = logp.shape[dim]
    _check_weight(op, weight, classes)
    if smoothing:
        target = target * (1.0 - smoothing) + smoothing / classes
    terms = logp * target
    if weight is not None:
        terms = terms * _per_class(weight, logp.ndim, dim)
    return _reduce(-terms.sum(dim), reduction)


# -- binary classification ------------------------------------------------------------------
def _clamped_log(p: Tensor) -> Tensor:
    """log(p) clamped below at -100, as PyTorch's binary_cross_entropy.  p == 0 goes
    through log(1) so that neither the value nor the gradient is inf or NaN."""
    positive = p > 0
    return where(positive, where(positive, p, 1.0).log().clamp(min=-100.0), -100.0)


def _weighted(op: str, loss: Tensor, weight: Tensor | None, name: str = "weight") -> Tensor:
    """loss * weight, where weight must broadcast to the loss's shape."""
    if weight is None:
        return loss
    if broadcast_shapes(op, loss.shape, _tensor(op, name, weight).shape) != loss.shape:
        raise ShapeError(f"{op}: {name} {fmt(weight.shape)} does not broadcast to the input's "
                         f"shape {fmt(loss.shape)}")
    return loss * weight


@autocast_op("binary_cross_entropy")
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """-(y log p + (1 - y) log(1 - p)) for probabilities p and targets y in [0, 1], times
    weight (broadcast against the input)."""
    if isinstance(weight, str):
        weight, size_average = None, weight
    red = _reduction("binary_cross_entropy", size_average, reduce, reduction)
    _elementwise("binary_cross_entropy", input, target)
    loss = -(target * _clamped_log(input) + (1.0 - target) * _clamped_log(1.0 - input))
    return _reduce(_weighted("binary_cross_entropy", loss, weight), red)


@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: Any = None, reduce: Any = None,
                                     reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """binary_cross_entropy(sigmoid(x), y) computed from the logits x without overflow:
    (1 - y) x + (1 + (pos_weight - 1) y) softplus(-x).  pos_weight (broadcast along the
    last, class, dim) weights the positive targets."""
    op = "binary_cross_entropy_with_logits"
    red = _reduction(op, size_average, reduce, reduction)
    _elementwise(op, input, target)
    positive = _softplus(-input)
    if pos_weight is not None:
        positive = _weighted(op, positive * target, pos_weight - 1.0, "pos_weight") + positive
    loss = (1.0 - target) * input + positive
    return _reduce(_weighted(op, loss, weight), red)


# -- regression -----------------------------------------------------------------------------
@autocast_op("mse_loss")
def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """(input - target) ** 2 of two same-shaped tensors."""
    red = _reduction("mse_loss", size_average, reduce, reduction)
    return _reduce(_elementwise("mse_loss", input, target).square(), red)


@autocast_op("l1_loss")
def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean") -> Tensor:
    """|input - target|."""
    red = _reduction("l1_loss", size_average, reduce, reduction)
    return _reduce(_elementwise("l1_loss", input, target).abs(), red)


def _huber(diff: Tensor, delta: float) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - delta / 2)."""
    size = diff.abs()
    return where(size < delta, diff.square() * 0.5, (size - 0.5 * delta) * delta)


@autocast_op("smooth_l1_loss")
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """huber_loss(delta=beta) / beta: quadratic below beta, |d| - beta / 2 above
    (l1_loss when beta is 0)."""
    red = _reduction("smooth_l1_loss", size_average, reduce, reduction)
    if beta < 0:
        raise ArgumentError(f"smooth_l1_loss: beta must be >= 0, got {beta!r}")
    diff = _elementwise("smooth_l1_loss", input, target)
    loss = diff.abs() if beta == 0 else _huber(diff, beta) * (1.0 / beta)
    return _reduce(loss, red)


@autocast_op("huber_loss")
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",
               delta: float = 1.0) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - delta / 2), d = input - target."""
    red = _reduction("huber_loss", None, None, reduction)
    if delta <= 0:
        raise ArgumentError(f"huber_loss: delta must be > 0, got {delta!r}")
    return _reduce(_huber(_elementwise("huber_loss", input, target), delta), red)


def _xlogy(x: Tensor, y: Tensor) -> Tensor:
    """x log y, and 0 where x is 0 (a zero target contributes nothing to a KL divergence)."""
    nonzero = x != 0
    return where(nonzero, x * where(nonzero, y, 1.0).log(), 0.0)


@autocast_op("kl_div")
def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """target (log target - input) for log-probabilities `input` (target as
    log-probabilities too with log_target).  reduction="batchmean" divides the sum by the
    batch size, which is the mathematical KL divergence; "mean" divides by every element."""
    op = "kl_div"
    red = _reduction(op, size_average, reduce, reduction, ("batchmean",))
    _elementwise(op, input, target)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogy(target, target) - target * input
    if red == "batchmean":
        return loss.sum() * (1.0 / input.shape[0]) if input.ndim else loss.sum()
    return _reduce(loss, red)


@autocast_op("poisson_nll_loss")
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """exp(input) - target input (log_input), or input - target log(input + eps); full adds
    Stirling's approximation of log(target!) where target > 1."""
    op = "poisson_nll_loss"
    red = _reduction(op, size_average, reduce, reduction)
    _elementwise(op, input, target)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        big = target > 1
        safe = where(big, target, 1.0)
        stirling = safe * safe.log() - safe + (safe * (2 * math.pi)).log() * 0.5
        loss = loss + where(big, stirling, 0.0)
    return _reduce(loss, red)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi with full).  var is shaped
    as the input, or as the input without (or with size 1 in) its last dim; values below
    eps are raised to eps without changing the gradient, as PyTorch."""
    op = "gaussian_nll_loss"
    red = _reduction(op, None, None, reduction)
    diff = _elementwise(op, input, target)
    if not isinstance(var, Tensor):
        var = _full((), float(var), dtype=input.dtype, device=input.device)
    if var.shape != input.shape:
        if input.ndim and var.shape == input.shape[:-1]:
            var = var.unsqueeze(-1)
        elif not (input.ndim and var.shape == input.shape[:-1] + (1,)) and var.ndim:
            raise ShapeError(f"{op}: var {fmt(var.shape)} must have the input's shape "
                             f"{fmt(input.shape)}, or that shape without its last dim")
    if (var.detach() < 0).max().item() if var.numel() else False:
        raise ArgumentError(f"{op}: var has negative entries")
    var = var + (var.clamp(min=eps) - var).detach()
    loss = (var.log() + diff.square() / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, red)


# -- margins and embeddings ------------------------------------------------------------------
@autocast_op("soft_margin_loss")
def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-y x)) for targets y in {-1, 1}."""
    red = _reduction("soft_margin_loss", size_average, reduce, reduction)
    _elementwise("soft_margin_loss", input, target)
    return _reduce(_softplus(-(input * target)), red)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """Per sample, the mean over classes of -(y log sigmoid(x) + (1 - y) log sigmoid(-x))
    for input [N, C] and 0/1 targets [N, C]."""
    op = "multilabel_soft_margin_loss"
    red = _reduction(op, size_average, reduce, reduction)
    _elementwise(op, input, target)
    loss = -(target * logsigmoid(input) + (1.0 - target) * logsigmoid(-input))
    loss = _weighted(op, loss, weight)
    return _reduce(loss.mean(-1) if input.ndim else loss, red)


@autocast_op("multi_margin_loss")
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: Any = None,
                      reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Per sample, sum over classes i != y of max(0, margin - x[y] + x[i]) ** p, divided by
    the number of classes (and scaled by weight[y]); input [N, C] or [C]."""
    op = "multi_margin_loss"
    red = _reduction(op, size_average, reduce, reduction)
    if p not in (1, 2):
        raise ArgumentError(f"{op}: p must be 1 or 2, got {p!r}")
    if _tensor(op, "input", input).ndim == 0:  # one class (PyTorch takes it): its loss is 0
        return multi_margin_loss(input.reshape(1), target.reshape(()), p, margin, weight,
                                 reduction=red)
    if input.ndim not in (1, 2):
        raise ShapeError(f"{op}: input must be [N, C] or [C], got {fmt(input.shape)}")
    dim = _class_dim(op, input)
    _check_index_target(op, input, target)
    classes = input.shape[dim]
    _check_weight(op, weight, classes)
    at_target = _pick(op, input, target, dim).unsqueeze(dim)
    hinge = (input - at_target + margin).clamp(min=0.0)
    if p == 2:
        hinge = hinge.square()
    if weight is not None:
        hinge = hinge * weight.gather(0, target.reshape(-1)).reshape(*target.shape).unsqueeze(dim)
    # The target class itself is left out of the sum.
    others = arange(classes, device=input.device) != target.unsqueeze(-1)
    return _reduce(where(others, hinge, 0.0).sum(dim) * (1.0 / classes), red)


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -y (x1 - x2) + margin) for targets y in {-1, 1}."""
    op = "margin_ranking_loss"
    red = _reduction(op, size_average, reduce, reduction)
    _check_same_shape(op, input1, input2, ("input1", "input2"))
    _check_same_shape(op, input1, target, ("input1", "target"))
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0.0), red)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """x where y is 1, max(0, margin - x) where y is -1."""
    op = "hinge_embedding_loss"
    red = _reduction(op, size_average, reduce, reduction)
    _check_same_shape(op, input, target)
    # As PyTorch: each term is left out only where the target is the other label.
    below = where(target != 1, (margin - input).clamp(min=0.0), 0.0)
    return _reduce(where(target != -1, input, 0.0) + below, red)


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where y is 1, max(0, cos(x1, x2) - margin) where y is -1; inputs
    [N, D] (or [D]) and targets [N] (or [])."""
    op = "cosine_embedding_loss"
    red = _reduction(op, size_average, reduce, reduction)
    _check_same_shape(op, input1, input2, ("input1", "input2"))
    if input1.ndim not in (1, 2) or _tensor(op, "target", target).shape != input1.shape[:-1]:
        raise ShapeError(f"{op}: inputs must be [N, D] or [D] with target [N] or [], got "
                         f"{fmt(input1.shape)} and target {fmt(target.shape)}")
    # PyTorch's small constant under the norms keeps zero vectors finite.
    eps = 1e-12
    dot = (input1 * input2).sum(-1)
    norms = ((input1.square().sum(-1) + eps) * (input2.square().sum(-1) + eps)).sqrt()
    cos = dot / norms
    loss = where(target == 1, 1.0 - cos, 0.0) + \
        where(target == -1, (cos - margin).clamp(min=0.0), 0.0)
    return _reduce(loss, red)


@autocast_op("triplet_margin_loss")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with d the pairwise p-norm distance; swap uses
    min(d(a, n), d(p, n)) as the negative distance."""
    op = "triplet_margin_loss"
    red = _reduction(op, size_average, reduce, reduction)
    _check_same_shape(op, anchor, positive, ("anchor", "positive"))
    _check_same_shape(op, anchor, negative, ("anchor", "negative"))
    to_positive = pairwise_distance(anchor, positive, p, eps)
    to_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        between = pairwise_distance(positive, negative, p, eps)
        to_negative = where(between < to_negative, between, to_negative)
    return _reduce((to_positive - to_negative + margin).clamp(min=0.0), red)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Per sample, the sum over its target classes j (target's entries up to the first -1)
    and the other classes i of max(0, 1 - (x[j] - x[i])), divided by the number of classes;
    input [N, C] or [C], target int64 of the same shape."""
    op = "multilabel_margin_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x = _tensor(op, "input", input)
    if x.ndim > 2 or _tensor(op, "target", target).shape != x.shape:
        raise ShapeError(f"{op}: input must be [N, C] or [C] (or 0-d) and target of its shape, "
                         f"got input {fmt(x.shape)} and target {fmt(target.shape)}")
    if target.dtype is not int64:
        raise DTypeError(f"{op}: target must be int64, got {target.dtype}")
    rows = x.reshape(-1, x.shape[-1] if x.ndim else 1)
    t = target.reshape(rows.shape)
    c = rows.shape[1]
    if t.numel() and bool(((t < -1) | (t >= c)).any()):
        raise ShrewIndexError(f"{op}: target values must lie in [-1, {c}) for {c} classes")
    listed = (t >= 0).to_dtype(int64).cumprod(1) > 0      # entries before the first -1
    classes = arange(c, device=x.device)
    is_target = ((t.unsqueeze(2) == classes) & listed.unsqueeze(2)).any(1)   # [N, C]
    picked = gather(rows, 1, where(listed, t, 0))                           # [N, J]
    margins = (1 - picked.unsqueeze(2) + rows.unsqueeze(1)).clamp_min(0)     # [N, J, C]
    keep = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = where(keep, margins, 0.0).sum((1, 2)) / c
    loss = loss.reshape(x.shape[:-1]) if x.ndim == 2 else loss.reshape(())
    return _reduce(loss, red)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with d the given distance function (pairwise
    distance by default); swap uses min(d(a, n), d(p, n)) as the negative distance."""
    op = "triplet_margin_with_distance_loss"
    red = _reduction(op, None, None, reduction)
    if margin <= 0:
        raise ArgumentError(f"{op}: margin must be greater than 0, got {margin}")
    for name, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        _tensor(op, name, t)
    distance = pairwise_distance if distance_function is None else distance_function
    to_positive = distance(anchor, positive)
    to_negative = distance(anchor, negative)
    if swap:
        to_negative = to_negative.minimum(distance(positive, negative))
    return _reduce((margin + to_positive - to_negative).clamp_min(0), red)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,  # noqa: A002
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """cross_entropy of the logits input @ linear_weight^T (+ linear_bias) against target.
    linear_weight is [C, in], or [C, d_1, ..., d_K, in] for a K-dimensional loss (logits
    [N, C, d_1, ..., d_K]).  PyTorch's options (how to chunk the batch to save memory)
    change no value and are accepted."""
    from .linear import linear  # linear's module imports nothing of the losses
    out_shape = tuple(linear_weight.shape[:-1])
    logits = linear(input, linear_weight.reshape(-1, linear_weight.shape[-1]))
    logits = logits.reshape(*input.shape[:-1], *out_shape)
    if linear_bias is not None:
        if tuple(linear_bias.shape) != out_shape:
            raise ShapeError(f"linear_cross_entropy: expected linear_bias shape "
                             f"{fmt(out_shape)}, got {fmt(linear_bias.shape)}")
        logits = logits + linear_bias
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None
                         else ignore_index, reduction=reduction, label_smoothing=label_smoothing)
