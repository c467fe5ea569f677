"""Tensor.grad_fn: a read-only view of the graph node that made a tensor, named as
PyTorch names its nodes (``MulBackward0``, from node_names.py), with ``next_functions`` to
walk the graph.  As in PyTorch, asking twice gives the same object while the graph lives:
one Node per recorded op, one AccumulateGrad per leaf."""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from ..core import op as O
from ..ops.inplace import as_recorded
from .node_names import torch_inputs, torch_name

if TYPE_CHECKING:
    from .._tensor import Tensor


class Node:
    """The op that made a tensor (``tensor.grad_fn``)."""

    __slots__ = ("_tensor", "_op", "__weakref__")

    def __init__(self, tensor: Tensor, op: O.Op) -> None:
        self._tensor, self._op = tensor, op

    def name(self) -> str:
        """PyTorch's name: "MulBackward0", "MmBackward0", "SumBackward1", ..."""
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """(node, 0) per input: the input's grad_fn, an AccumulateGrad for a leaf that
        requires grad, None for an input outside the graph."""
        out: list[tuple[Any, int]] = []
        op = self._op
        if self._tensor._op is op:  # an input written in place since: as op recorded it
            op = as_recorded(op, self._tensor.id)
        for x in torch_inputs(op):
            if x is None:
                out.append((None, 0))
            elif x._op is not None:
                out.append((grad_fn(x), 0))
            elif x.requires_grad:
                out.append((_accumulator(x), 0))
            else:
                out.append((None, 0))
        return tuple(out)

    @property
    def variant(self) -> O.Op:
        """The Op variant itself (shrew/core/op.py)."""
        return self._op

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and other._op is self._op

    def __hash__(self) -> int:
        return id(self._op)

    def __repr__(self) -> str:
        return f"<{self.name()} object>"


class AccumulateGrad:
    """The node that accumulates a leaf's gradient into ``variable.grad``."""

    __slots__ = ("variable", "__weakref__")
    next_functions: tuple = ()

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad object>"


_node_classes: dict[str, type[Node]] = {}
_nodes: weakref.WeakValueDictionary[int, Node] = weakref.WeakValueDictionary()
_accumulators: weakref.WeakValueDictionary[int, AccumulateGrad] = \
    weakref.WeakValueDictionary()
"""The live nodes by id() of their op, and accumulators by id() of their leaf (each holds
its op or leaf, so a key is never reused while its entry lives)."""


def _node_class(name: str) -> type[Node]:
    """A Node subclass called `name`, so ``type(t.grad_fn).__name__`` is PyTorch's."""
    cls = _node_classes.get(name)
    if cls is None:
        cls = _node_classes[name] = type(name, (Node,), {"__slots__": ()})
    return cls


def _accumulator(leaf: Tensor) -> AccumulateGrad:
    acc = _accumulators.get(id(leaf))
    if acc is None or acc.variable is not leaf:
        acc = _accumulators[id(leaf)] = AccumulateGrad(leaf)
    return acc


def grad_fn(t: Tensor) -> Node | None:
    op = t._op
    if op is None:
        return None
    node = _nodes.get(id(op))
    if node is None or node._op is not op:
        node = _nodes[id(op)] = _node_class(torch_name(op))(t, op)
    return node
