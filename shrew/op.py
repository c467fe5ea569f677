"""The Op variants: how each tensor was made.  A closed set; backprop.py matches on it.

Each variant is a frozen dataclass holding its input tensors and the parameters its
gradient rule needs.  A leaf tensor has ``op is None``.  The set is DESIGN.md's list plus
four variants that some gradient rules need to stay differentiable (ScatterAdd, Im2Col,
Col2Im are the adjoints of Gather and the convolution lowering; ToDevice moves data),
Scatter, the write of every index op (x[key] = v, index_put, scatter_reduce, ...),
Checkpoint, which recomputes a function in backward, Prod, VectorNorm and Scan, whose
gradients compositions would get wrong at zeros, and two fused kernels that earn their
place in training time (Softmax, which also serves log_softmax, and Standardize, the
core of layer_norm).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar


class Op:
    """Base of every variant.  ``inputs()`` lists the tensors backward may walk into."""

    __slots__ = ()
    TENSORS: ClassVar[tuple] = ("x",)
    __dataclass_fields__: ClassVar[dict[str, Any]]  # every variant is a dataclass

    def inputs(self) -> tuple:
        return tuple(getattr(self, name) for name in self.TENSORS)


@dataclass(frozen=True, slots=True)
class Contiguous(Op):
    x: Any


@dataclass(frozen=True, slots=True)
class Binary(Op):
    fn: str  # add, sub, mul, div
    lhs: Any
    rhs: Any
    TENSORS: ClassVar[tuple] = ("lhs", "rhs")


@dataclass(frozen=True, slots=True)
class Unary(Op):
    fn: str  # one of backends.base.UNARY_FNS
    x: Any


@dataclass(frozen=True, slots=True)
class Reduce(Op):
    fn: str  # sum, mean, max, min
    x: Any
    dims: tuple
    keepdim: bool


@dataclass(frozen=True, slots=True)
class Prod(Op):
    x: Any
    dim: int
    keepdim: bool


@dataclass(frozen=True, slots=True)
class VectorNorm(Op):
    x: Any
    ord: float  # finite (+-inf are compositions); 0 counts nonzeros, with a zero gradient
    dims: tuple
    keepdim: bool


@dataclass(frozen=True, slots=True)
class Scan(Op):
    fn: str  # one of backends.base.SCAN_FNS
    x: Any
    dim: int


@dataclass(frozen=True, slots=True)
class Matmul(Op):
    lhs: Any
    rhs: Any
    TENSORS: ClassVar[tuple] = ("lhs", "rhs")


@dataclass(frozen=True, slots=True)
class Reshape(Op):
    x: Any


@dataclass(frozen=True, slots=True)
class Transpose(Op):
    x: Any
    dim0: int
    dim1: int


@dataclass(frozen=True, slots=True)
class Narrow(Op):
    x: Any
    dim: int
    start: int
    length: int


@dataclass(frozen=True, slots=True)
class Affine(Op):
    x: Any
    mul: float
    add: float


@dataclass(frozen=True, slots=True)
class Conv2d(Op):
    x: Any
    weight: Any
    stride: tuple
    padding: tuple
    dilation: tuple = (1, 1)
    groups: int = 1
    TENSORS: ClassVar[tuple] = ("x", "weight")


@dataclass(frozen=True, slots=True)
class Conv1d(Op):
    x: Any
    weight: Any
    stride: int
    padding: int
    TENSORS: ClassVar[tuple] = ("x", "weight")


@dataclass(frozen=True, slots=True)
class MaxPool2d(Op):
    x: Any
    kernel: tuple
    stride: tuple
    padding: tuple
    indices: Any  # int64 tensor: flat argmax per output into each input plane


@dataclass(frozen=True, slots=True)
class AvgPool2d(Op):
    x: Any
    kernel: tuple
    stride: tuple
    padding: tuple


@dataclass(frozen=True, slots=True)
class Cat(Op):
    xs: tuple
    dim: int

    def inputs(self) -> tuple:
        return self.xs


@dataclass(frozen=True, slots=True)
class Powf(Op):
    x: Any
    exponent: float


@dataclass(frozen=True, slots=True)
class Clamp(Op):
    x: Any
    min: float | None
    max: float | None


@dataclass(frozen=True, slots=True)
class WhereCond(Op):
    cond: Any
    lhs: Any
    rhs: Any
    TENSORS: ClassVar[tuple] = ("lhs", "rhs")


@dataclass(frozen=True, slots=True)
class Gather(Op):
    x: Any
    dim: int
    index: Any


@dataclass(frozen=True, slots=True)
class Pad(Op):
    x: Any
    pads: tuple  # (before, after) per dim, all >= 0


@dataclass(frozen=True, slots=True)
class ToDtype(Op):
    x: Any


@dataclass(frozen=True, slots=True)
class ToDevice(Op):
    x: Any


@dataclass(frozen=True, slots=True)
class ScatterAdd(Op):
    src: Any
    dim: int
    index: Any
    TENSORS: ClassVar[tuple] = ("src",)


@dataclass(frozen=True, slots=True)
class Scatter(Op):
    """dst with src combined at index along dim (backend scatter): scatter, index_put,
    __setitem__, scatter_reduce; src already narrowed to index's shape."""
    dst: Any
    dim: int
    index: Any
    src: Any
    reduce: str  # base.SCATTER_REDUCE_FNS
    TENSORS: ClassVar[tuple] = ("dst", "src")


@dataclass(frozen=True, slots=True)
class Im2Col(Op):
    x: Any
    kernel: tuple
    stride: tuple
    padding: tuple


@dataclass(frozen=True, slots=True)
class Col2Im(Op):
    x: Any  # the columns [N, C*kh*kw, L]
    shape: tuple  # the image shape [N, C, H, W]
    kernel: tuple
    stride: tuple
    padding: tuple


@dataclass(frozen=True, slots=True)
class Softmax(Op):
    x: Any
    dim: int
    log: bool  # log_softmax


@dataclass(frozen=True, slots=True)
class Standardize(Op):
    x: Any
    dims: tuple  # the trailing dims normalised over
    eps: float
    rstd: Any  # 1 / sqrt(var + eps) with the dims kept, saved by forward (no grad)


@dataclass(frozen=True, slots=True)
class Checkpoint(Op):
    fn: Callable
    args: tuple  # the call's arguments, tensors and others, as given
    captured: tuple  # tensors needing grad that the run read: inputs and parameters
    rng_states: tuple  # (backend, state) pairs captured before the forward run
    output_index: int  # which tensor of fn's flattened outputs this tensor is

    def inputs(self) -> tuple:
        return self.captured


@dataclass(frozen=True, slots=True)
class CustomFunction(Op):
    """An output of a user's autograd.Function (shrew/autograd/function.py)."""

    function: Any  # the Function subclass: its backward is the rule
    ctx: Any  # the FunctionCtx forward filled
    args: tuple  # apply's arguments, tensors and others, as given
    tensors: tuple  # the tensors among them
    output_index: int  # which tensor output this is
    n_outputs: int

    def inputs(self) -> tuple:
        return self.tensors


@dataclass(frozen=True, slots=True)
class Released(Op):
    """Stands in for an Op whose saved tensors an earlier backward() freed."""

    variant: str
    TENSORS: ClassVar[tuple] = ()


VARIANTS = (
    Contiguous, Binary, Unary, Reduce, Prod, VectorNorm, Scan, Matmul, Reshape, Transpose,
    Narrow, Affine, Conv2d, Conv1d, MaxPool2d, AvgPool2d, Cat, Powf, Clamp, WhereCond,
    Gather, Pad, ToDtype, ToDevice, ScatterAdd, Scatter, Im2Col, Col2Im, Softmax, Standardize,
    Checkpoint, CustomFunction,
)
