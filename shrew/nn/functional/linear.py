"""linear as a function: x @ w.T + b (one backend call where it has one)."""
from __future__ import annotations

from ...core.autocast import autocast_op
from ...core.errors import ShapeError
from ...core.shape import fmt
from ...ops.linalg.matmul import linear as _linear
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor


def _check_bias(op: str, b: Tensor | None, n: int) -> None:
    if b is not None and _tensor(op, "bias", b).shape != (n,):
        raise ShapeError(f"{op}: bias must have shape [{n}], got {fmt(b.shape)}")


@autocast_op("linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ w.T + b, with w of shape [out, in] and x of shape [..., in]."""
    x, w, b = input, weight, bias  # torch's parameter names, short names below
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
