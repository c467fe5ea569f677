"""Which tensors a node saves for backward, as PyTorch's autograd saves them (its
derivatives.yaml): the tensors whose later in-place modification makes backward refuse
(ops/inplace.check_versions).  A node that needs no values of a tensor (add, sum, a view,
where's branches) does not save it, and a product saves one factor only when the other
factor needs its gradient, so ``y = a * c; a.add_(1)`` is fine for a constant ``c``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import op as O

if TYPE_CHECKING:
    from .._tensor import Tensor

_UNARY_SAVES_OUTPUT = frozenset((
    "exp", "sigmoid", "tanh", "sqrt", "rsqrt", "relu", "exp2", "expm1", "reciprocal", "tan"))
_UNARY_SAVES_NOTHING = frozenset(("neg", "floor", "ceil", "round", "sign", "trunc"))

Saved = list[tuple[str, "Tensor"]]


def _product(lhs: Tensor, rhs: Tensor) -> Saved:
    """mul and matmul: each factor is saved for the other's gradient."""
    return [("input 0", lhs)] * rhs.requires_grad + [("input 1", rhs)] * lhs.requires_grad


def _inputs(op: O.Op) -> Saved:
    return [(f"input {i}", x) for i, x in enumerate(op.inputs())]


def saved_tensors(op: O.Op, out: Tensor) -> Saved:
    """(role, tensor) for each tensor the node that made `out` with `op` saved."""
    match op:
        case O.Binary("add" | "sub") | O.Reduce("sum" | "mean") | O.Scan("sum") | \
                O.Affine() | O.Contiguous() | O.Reshape() | O.Transpose() | O.Narrow() | \
                O.AsStrided() | O.FFT() | \
                O.Pad() | O.Cat() | O.ToDtype() | O.ToDevice() | O.Gather() | \
                O.ScatterAdd() | O.Scatter(reduce="none") | O.Im2Col() | O.Col2Im() | \
                O.CustomFunction():  # a Function's ctx checks what it saved itself
            return []
        case O.WhereCond(cond):
            return [("condition", cond)]
        case O.Binary("mul", lhs, rhs) | O.Matmul(lhs, rhs) | O.Linear(lhs, rhs):
            return _product(lhs, rhs)
        case O.Binary("div", lhs, rhs):
            return [("input 0", lhs)] * rhs.requires_grad + [("input 1", rhs)]
        case O.Binary("pow"):
            return _inputs(op) + [("output", out)]
        case O.Unary(fn) if fn in _UNARY_SAVES_NOTHING:
            return []
        case O.Unary(fn) if fn in _UNARY_SAVES_OUTPUT:
            return [("output", out)]
        case O.Softmax():
            return [("output", out)]
        case O.Reduce() | O.Prod() | O.VectorNorm() | O.Scan() | O.MaxPool2d() | O.Scatter():
            return _inputs(op) + [("output", out)]  # max, min, prod, norms, scatter_reduce
    return _inputs(op)  # the rest read their inputs: pow by a number, clamp, conv, ...
