"""The reduction every loss takes ("mean", "sum", "none", or PyTorch's deprecated
size_average / reduce pair), shared by loss.py and ctc.py."""
from __future__ import annotations

from typing import Any

from ...core.errors import ArgumentError
from ..._tensor import Tensor

_REDUCTIONS = ("mean", "sum", "none")


def _reduction(op: str, size_average: Any, reduce: Any, reduction: str,
               extra: tuple[str, ...] = ()) -> str:
    """The reduction to apply: `reduction`, unless the legacy size_average / reduce flags
    are given (reduce=False -> "none", size_average=False -> "sum").  `extra` names the
    loss's own further reductions (kl_div's "batchmean")."""
    if isinstance(size_average, str):  # shrew's older positional reduction
        reduction, size_average = size_average, None
    if size_average is not None or reduce is not None:
        if reduce is False:
            reduction = "none"
        else:
            reduction = "sum" if size_average is False else "mean"
    if reduction not in _REDUCTIONS + extra:
        names = ", ".join(repr(r) for r in _REDUCTIONS + extra)
        raise ArgumentError(f"{op}: reduction must be one of {names}, got {reduction!r}")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss
