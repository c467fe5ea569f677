"""Connectionist temporal classification loss (ctc_loss), composed of Tensor operations:
the forward (alpha) recursion in log space, one step per time step."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.creation import tensor
from ...ops.elementwise.recorded import where
from ...core.dtype import check_float, int32, int64
from ...core.errors import ArgumentError, DTypeError, ShapeError
from ...core.shape import fmt
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor
from ._reduction import _reduction


def _as_lengths(op: str, name: str, value: Any, batch: int) -> np.ndarray:
    values = np.atleast_1d(np.asarray(value.tolist() if isinstance(value, Tensor) else value,
                                      dtype=np.int64))
    if values.shape != (batch,):
        raise ShapeError(f"{op}: {name} must hold {batch} lengths (one per sequence), got "
                         f"{values.tolist()}")
    return values


def _logsumexp(*terms: Tensor) -> Tensor:
    """log(sum(exp(t))) elementwise, -inf where every term is -inf, with a gradient that
    stays finite there (no 0/0)."""
    top = terms[0]
    for t in terms[1:]:
        top = where(t > top, t, top)
    # The result does not depend on the shift, so it carries no gradient.
    shift = where(top == float("-inf"), 0.0, top).detach()
    total = (terms[0] - shift).exp()
    for t in terms[1:]:
        total = total + (t - shift).exp()
    reachable = total > 0
    return where(reachable, where(reachable, total, 1.0).log() + shift, float("-inf"))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss: -log of the total probability of all
    alignments of each target with its input (the forward, alpha, recursion in log space).

    log_probs [T, N, C] (or [T, C]) are log-probabilities; targets are [N, S] padded or
    the targets of all sequences concatenated; input_lengths and target_lengths hold one
    length per sequence.  "mean" divides each loss by its target length, then averages;
    zero_infinity replaces impossible alignments' infinite losses (and their gradients)
    by zero.  The gradient is autograd's through the recursion."""
    op = "ctc_loss"
    red = _reduction(op, None, None, reduction)
    if _tensor(op, "log_probs", log_probs).ndim not in (2, 3):
        raise ShapeError(f"{op}: log_probs must be [T, N, C] or [T, C], got "
                         f"{fmt(log_probs.shape)}")
    check_float(log_probs.dtype, op)
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    steps, batch, classes = lp.shape
    if not 0 <= blank < classes:
        raise ArgumentError(f"{op}: blank {blank} is outside [0, {classes})")
    in_len = _as_lengths(op, "input_lengths", input_lengths, batch)
    tg_len = _as_lengths(op, "target_lengths", target_lengths, batch)
    if (in_len < 0).any() or (in_len > steps).any() or (tg_len < 0).any():
        raise ArgumentError(f"{op}: input_lengths {in_len.tolist()} must lie in [0, {steps}] and "
                            f"target_lengths {tg_len.tolist()} be >= 0")
    labels = _ctc_labels(op, targets, tg_len, batch, batched)
    used = np.arange(labels.shape[1]) < tg_len.reshape(-1, 1)
    if ((labels < 0) | (labels >= classes) | (labels == blank))[used].any():
        raise ArgumentError(f"{op}: targets must be classes in [0, {classes}) other than the "
                            f"blank {blank}")
    longest = int(tg_len.max(initial=0))
    width = 2 * longest + 1
    # The extended labels: blank, l1, blank, l2, ..., blank (padded with blanks).
    ext = np.full((batch, width), blank, np.int64)
    for n in range(batch):
        ext[n, 1:2 * tg_len[n]:2] = labels[n, :tg_len[n]]
    # A label may be reached from two back when it differs from the label there.
    skip = np.zeros((batch, width), bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    index = tensor(ext, device=lp.device)
    emit = lp.gather(2, index.unsqueeze(0).expand(steps, batch, width))  # [T, N, width]
    neg_inf = float("-inf")
    start = np.full((batch, width), neg_inf)
    start[:, 0] = 0.0
    if width > 1:
        start[tg_len > 0, 1] = 0.0
    alpha = emit[0] + tensor(start, dtype=lp.dtype, device=lp.device) \
        if steps else tensor(start, dtype=lp.dtype, device=lp.device)
    can_skip = tensor(skip, device=lp.device)
    for t in range(1, int(in_len.max(initial=0))):
        one_back = alpha.pad((1, 0), neg_inf).narrow(1, 0, width)
        two_back = where(can_skip, alpha.pad((2, 0), neg_inf).narrow(1, 0, width), neg_inf)
        advanced = _logsumexp(alpha, one_back, two_back) + emit[t]
        running = tensor((t < in_len).reshape(-1, 1), device=lp.device)
        alpha = where(running, advanced, alpha)
    # The alignment ends on the last label or the blank after it.
    last = tensor(2 * tg_len, device=lp.device).reshape(-1, 1)
    before = tensor(np.maximum(2 * tg_len - 1, 0), device=lp.device).reshape(-1, 1)
    end_on_label = where(tensor((tg_len > 0).reshape(-1, 1), device=lp.device),
                             alpha.gather(1, before), neg_inf)
    loss = -_logsumexp(alpha.gather(1, last), end_on_label).reshape(batch)
    if (in_len == 0).any():  # no input steps: only an empty target is possible
        empty = tensor(np.where(tg_len == 0, 0.0, np.inf), dtype=lp.dtype, device=lp.device)
        loss = where(tensor(in_len == 0, device=lp.device), empty, loss)
    if zero_infinity:
        loss = where(loss == float("inf"), 0.0, loss)
    if red == "mean":
        divisor = tensor(np.maximum(tg_len, 1), dtype=lp.dtype, device=lp.device)
        return (loss / divisor).mean()
    if red == "sum":
        return loss.sum()
    return loss if batched else loss.reshape(())


def _ctc_labels(op: str, targets: Tensor, lengths: np.ndarray, batch: int,
                batched: bool) -> np.ndarray:
    """The targets as a host array [N, max length] (from padded or concatenated form)."""
    if _tensor(op, "targets", targets).dtype not in (int32, int64):
        raise DTypeError(f"{op}: targets must be integer class indices, got {targets.dtype}")
    values = targets.numpy() if batched else targets.numpy().reshape(1, -1)
    longest = int(lengths.max(initial=0))
    if values.ndim == 2:
        if values.shape[0] != batch or values.shape[1] < longest:
            raise ShapeError(f"{op}: padded targets {fmt(targets.shape)} do not fit {batch} "
                             f"sequences of target_lengths {lengths.tolist()}")
        return values[:, :longest]
    if values.ndim != 1 or values.shape[0] != lengths.sum():
        raise ShapeError(f"{op}: targets must be [N, S] or the {int(lengths.sum())} targets "
                         f"concatenated, got {fmt(targets.shape)}")
    out = np.zeros((batch, longest), np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    for n in range(batch):
        out[n, :lengths[n]] = values[offsets[n]:offsets[n + 1]]
    return out
