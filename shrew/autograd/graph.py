"""Tensor.grad_fn: a read-only view of the graph node that made a tensor, named as
PyTorch names its nodes (``MulBackward0``), with ``next_functions`` to walk the graph."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import op as O
from ..diagnostics import op_name

if TYPE_CHECKING:
    from ..tensor import Tensor


class Node:
    """The op that made a tensor (``tensor.grad_fn``)."""

    __slots__ = ("_tensor", "_op")

    def __init__(self, tensor: Tensor, op: O.Op) -> None:
        self._tensor, self._op = tensor, op

    def name(self) -> str:
        """e.g. "MulBackward0" for a Binary mul, "ExpBackward0", "MatmulBackward0"."""
        op = self._op
        if isinstance(op, O.CustomFunction):
            return f"{op.function.__name__}Backward"
        # op_name: "Binary.mul", "Matmul", ...; a released op keeps it
        name = op.variant if isinstance(op, O.Released) else op_name(op)
        base = name.split(".")[-1]
        return "".join(part[:1].upper() + part[1:] for part in base.split("_")) + "Backward0"

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """(node, 0) per input: the input's grad_fn, an AccumulateGrad for a leaf that
        requires grad, None for an input outside the graph."""
        out: list[tuple[Any, int]] = []
        for x in self._op.inputs():
            if x._op is not None:
                out.append((Node(x, x._op), 0))
            elif x.requires_grad:
                out.append((AccumulateGrad(x), 0))
            else:
                out.append((None, 0))
        return tuple(out)

    @property
    def variant(self) -> O.Op:
        """The Op variant itself (shrew/op.py)."""
        return self._op

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and other._op is self._op

    def __hash__(self) -> int:
        return id(self._op)

    def __repr__(self) -> str:
        return f"<{self.name()} object>"


class AccumulateGrad:
    """The node that accumulates a leaf's gradient into ``variable.grad``."""

    __slots__ = ("variable",)
    next_functions: tuple = ()

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad object>"


def grad_fn(t: Tensor) -> Node | None:
    return None if t._op is None else Node(t, t._op)
