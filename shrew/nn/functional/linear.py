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


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    from ...ops.linalg.einsum import einsum  # linalg imports nn's checks
    x1, x2 = _tensor("bilinear", "input1", input1), _tensor("bilinear", "input2", input2)
    w = _tensor("bilinear", "weight", weight)
    if w.ndim != 3 or x1.shape[-1:] != w.shape[1:2] or x2.shape[-1:] != w.shape[2:3] or \
            x1.shape[:-1] != x2.shape[:-1]:
        raise ShapeError(f"bilinear: input1 {fmt(x1.shape)} and input2 {fmt(x2.shape)} must "
                         f"share their leading dims and match weight [out, in1, in2] "
                         f"{fmt(w.shape)}")
    _check_bias("bilinear", bias, w.shape[0])
    y = einsum("...i,oij,...j->...o", x1, w, x2)
    return y if bias is None else y + bias
