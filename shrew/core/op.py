"""The Op variants: how each tensor was made.  A closed set; autograd/engine.py matches on it.

Each variant is a dataclass holding its input tensors and the parameters its gradient
rule needs, never changed once made (not frozen=True: its __init__ cost a quarter of a
microsecond more on every recorded op; eq=False: ops compare by identity).  A leaf tensor
has ``op is None``.  The set is DESIGN.md's list plus four variants that some gradient
rules need to stay differentiable (ScatterAdd, Im2Col, Col2Im are the adjoints of Gather
and the convolution lowering; ToDevice moves data), Scatter, the write of every index op
(x[key] = v, index_put, scatter_reduce, ...), Checkpoint, which recomputes a function in
backward, Prod, VectorNorm and Scan, whose gradients compositions would get wrong at
zeros, and five fused kernels that earn their place in training time (Softmax, which also
serves log_softmax, and Standardize, the core of layer_norm; LayerNorm, with its weight
and bias, Attention, scaled dot-product attention, and Linear, a layer's product and
bias, recorded only where a backend's optional FastNorm, FastAttention or FastLinear
computed them in one call).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, ClassVar


class Op:
    """Base of every variant.  ``inputs()`` lists the tensors backward may walk into."""

    __slots__ = ()
    TENSORS: ClassVar[tuple] = ("x",)
    __dataclass_fields__: ClassVar[dict[str, Any]]  # every variant is a dataclass

    def inputs(self) -> tuple:
        return tuple(getattr(self, name) for name in self.TENSORS)


@dataclass(slots=True, eq=False)
class Contiguous(Op):
    x: Any


@dataclass(slots=True, eq=False)
class Binary(Op):
    fn: str  # add, sub, mul, div
    lhs: Any
    rhs: Any
    TENSORS: ClassVar[tuple] = ("lhs", "rhs")


@dataclass(slots=True, eq=False)
class Unary(Op):
    fn: str  # one of backends.base.UNARY_FNS
    x: Any


@dataclass(slots=True, eq=False)
class Reduce(Op):
    fn: str  # sum, mean, max, min
    x: Any
    dims: tuple
    keepdim: bool


@dataclass(slots=True, eq=False)
class Prod(Op):
    x: Any
    dim: int
    keepdim: bool


@dataclass(slots=True, eq=False)
class VectorNorm(Op):
    x: Any
    ord: float  # finite (+-inf are compositions); 0 counts nonzeros, with a zero gradient
    dims: tuple
    keepdim: bool


@dataclass(slots=True, eq=False)
class Scan(Op):
    fn: str  # one of backends.base.SCAN_FNS
    x: Any
    dim: int


@dataclass(slots=True, eq=False)
class Matmul(Op):
    lhs: Any
    rhs: Any
    TENSORS: ClassVar[tuple] = ("lhs", "rhs")


@dataclass(slots=True, eq=False)
class Solve(Op):
    """X with a @ X = b (ops/linalg/decompositions.py; linalg.solve, inv)."""

    a: Any
    b: Any
    TENSORS: ClassVar[tuple] = ("a", "b")


@dataclass(slots=True, eq=False)
class Decomposition(Op):
    """One output of a matrix routine (ops/linalg/decompositions.py): det, slogdet, cholesky, qr,
    svd, svdvals, eigh, eigvalsh, or pinv.  Its rule (autograd/rules/linalg.py) is linear in the
    output's gradient, so each output contributes its own part of x's gradient."""

    fn: str
    x: Any
    index: int      # which of the routine's outputs this tensor is
    saved: tuple    # the routine's outputs (and, for svdvals, U and Vh), without grad
    option: Any = None


@dataclass(slots=True, eq=False)
class FFT(Op):
    """The complex DFT over dims of a pair tensor (ops/spectral.py, the backend's fft):
    linear, so its gradient is the unnormalised transform the other way."""

    x: Any
    dims: tuple
    inverse: bool


@dataclass(slots=True, eq=False)
class Reshape(Op):
    x: Any


@dataclass(slots=True, eq=False)
class Transpose(Op):
    x: Any
    dim0: int
    dim1: int


@dataclass(slots=True, eq=False)
class Narrow(Op):
    x: Any
    dim: int
    start: int
    length: int


@dataclass(slots=True, eq=False)
class AsStrided(Op):
    """A strided view of x's memory (ops/shape/strided.py: step slices, diagonal, unfold,
    expand, as_strided): `size` read with element `stride` from `offset` elements after
    x's first element; `x_strides` are x's own, so backward maps memory back to x."""

    x: Any
    size: tuple
    stride: tuple
    offset: int
    x_strides: tuple
    name: str  # PyTorch's node name: SliceBackward0, DiagonalBackward0, ...


@dataclass(slots=True, eq=False)
class Affine(Op):
    x: Any
    mul: float
    add: float


@dataclass(slots=True, eq=False)
class Conv2d(Op):
    """conv2d, or conv3d: stride, padding and dilation then have three entries."""

    x: Any
    weight: Any
    stride: tuple
    padding: tuple
    dilation: tuple = (1, 1)
    groups: int = 1
    TENSORS: ClassVar[tuple] = ("x", "weight")


@dataclass(slots=True, eq=False)
class Conv1d(Op):
    x: Any
    weight: Any
    stride: int
    padding: int
    TENSORS: ClassVar[tuple] = ("x", "weight")


@dataclass(slots=True, eq=False)
class MaxPool2d(Op):
    """max_pool2d, or max_pool3d: kernel, stride and dilation then have three entries."""

    x: Any
    kernel: tuple
    stride: tuple
    dilation: tuple
    indices: Any  # int64 tensor: flat argmax per output into each input plane


@dataclass(slots=True, eq=False)
class AvgPool2d(Op):
    """avg_pool2d, or avg_pool3d: kernel, stride and padding then have three entries."""

    x: Any
    kernel: tuple
    stride: tuple
    padding: tuple
    ceil_mode: bool
    count_include_pad: bool
    divisor_override: int | None


@dataclass(slots=True, eq=False)
class Cat(Op):
    xs: tuple
    dim: int

    def inputs(self) -> tuple:
        return self.xs


@dataclass(slots=True, eq=False)
class Powf(Op):
    x: Any
    exponent: float


@dataclass(slots=True, eq=False)
class Clamp(Op):
    x: Any
    min: float | None
    max: float | None


@dataclass(slots=True, eq=False)
class WhereCond(Op):
    cond: Any
    lhs: Any
    rhs: Any
    TENSORS: ClassVar[tuple] = ("lhs", "rhs")


@dataclass(slots=True, eq=False)
class Gather(Op):
    x: Any
    dim: int
    index: Any


@dataclass(slots=True, eq=False)
class Pad(Op):
    x: Any
    pads: tuple  # (before, after) per dim, all >= 0


@dataclass(slots=True, eq=False)
class ToDtype(Op):
    x: Any


@dataclass(slots=True, eq=False)
class ToDevice(Op):
    x: Any


@dataclass(slots=True, eq=False)
class ScatterAdd(Op):
    src: Any
    dim: int
    index: Any
    TENSORS: ClassVar[tuple] = ("src",)


@dataclass(slots=True, eq=False)
class Scatter(Op):
    """dst with src combined at index along dim (backend scatter): scatter, index_put,
    __setitem__, scatter_reduce; src already narrowed to index's shape."""
    dst: Any
    dim: int
    index: Any
    src: Any
    reduce: str  # base.SCATTER_REDUCE_FNS
    TENSORS: ClassVar[tuple] = ("dst", "src")


@dataclass(slots=True, eq=False)
class Im2Col(Op):
    x: Any
    kernel: tuple
    stride: tuple
    padding: tuple


@dataclass(slots=True, eq=False)
class Col2Im(Op):
    x: Any  # the columns [N, C*kh*kw, L]
    shape: tuple  # the image shape [N, C, H, W]
    kernel: tuple
    stride: tuple
    padding: tuple


@dataclass(slots=True, eq=False)
class Softmax(Op):
    x: Any
    dim: int
    log: bool  # log_softmax


@dataclass(slots=True, eq=False)
class Attention(Op):
    """softmax(q k^T scale + bias) v as one kernel (ops/attention.py).  Packed (heads > 0):
    q, k and v are one [N, T, 3E] tensor, the three side by side along its last dim, each
    split into `heads` heads; its rule gives that tensor's whole gradient at once."""

    q: Any
    k: Any
    v: Any
    bias: Any  # None, or the additive mask (no grad: masks with a gradient are composed)
    scale: float
    weights: Any  # the softmax, saved by forward (no grad)
    heads: int = 0  # packed: the head count; 0: q, k and v are separate tensors
    TENSORS: ClassVar[tuple] = ("q", "k", "v")


@dataclass(slots=True, eq=False)
class Standardize(Op):
    x: Any
    dims: tuple  # the trailing dims normalised over
    eps: float
    rstd: Any  # 1 / sqrt(var + eps) with the dims kept, saved by forward (no grad)


@dataclass(slots=True, eq=False)
class LayerNorm(Op):
    """standardize(x) * weight + bias in one backend call (base.FastNorm), recorded only
    where the backend's fast path ran; otherwise layer_norm records its composition."""

    x: Any
    weight: Any  # the shape of the normalised dims, as bias
    bias: Any
    dims: tuple  # the trailing dims normalised over
    eps: float
    mean: Any  # x's mean over dims, kept as 1 (no grad)
    rstd: Any  # 1 / sqrt(var + eps), as mean (no grad)
    TENSORS: ClassVar[tuple] = ("x", "weight", "bias")


@dataclass(slots=True, eq=False)
class Linear(Op):
    """x @ weight.T + bias for a 2-d x in one backend call (base.FastLinear), recorded only
    where the backend's fast path ran; otherwise linear records its composition."""

    x: Any  # [M, K]
    weight: Any  # [N, K]
    bias: Any  # [N]
    TENSORS: ClassVar[tuple] = ("x", "weight", "bias")


@dataclass(slots=True, eq=False)
class Recurrent(Op):
    """One direction of one recurrent layer over its whole sequence (ops/rnn.py), its
    steps' products and fused cells (base.Backend's rnn_cell) run at the storage level:
    one node instead of a dozen per time step.  The result packs the outputs (gx's rows),
    then h_n, then (an LSTM's) c_n, all [*, H]."""

    mode: str  # one of backends.base.RNN_CELL_MODES
    gx: Any  # [R, gates * H]: x W_ih^T + b_ih (+ b_hh, except a GRU's) of every step
    h0: Any  # [N, H]
    c0: Any  # [N, H] for an LSTM, else None
    w_hh: Any  # [gates * H, H]
    b_hh: Any  # a GRU's [gates * H] (the others' rides in gx), or None
    batch_sizes: tuple  # rows of gx per step (packed sequences: non-increasing)
    reverse: bool
    saved: Any  # per step (h, state, ws) storages, saved by forward (no grad)
    TENSORS: ClassVar[tuple] = ("gx", "h0", "c0", "w_hh", "b_hh")  # c0, b_hh may be None

    def inputs(self) -> tuple:
        return tuple(t for t in (self.gx, self.h0, self.c0, self.w_hh, self.b_hh)
                     if t is not None)


@dataclass(slots=True, eq=False)
class RecurrentLayer(Op):
    """One direction of one RNN, LSTM or GRU layer over an unpacked sequence in one backend call
    (base.FastRecurrent), recorded only where the backend's fast path ran; otherwise the
    layer records its input product and a Recurrent.  The result packs y [T*N, H], h_n
    and (an LSTM's) c_n, as Recurrent's."""

    mode: str  # one of backends.base.RNN_CELL_MODES
    x: Any  # [T, N, I]
    h0: Any  # [N, H]
    c0: Any  # [N, H] for an LSTM, else None
    w_ih: Any
    w_hh: Any
    b_ih: Any  # None without biases
    b_hh: Any
    reverse: bool
    ws: Any  # the backend's saved state for rnn_layer_backward (no grad)
    TENSORS: ClassVar[tuple] = ("x", "h0", "c0", "w_ih", "w_hh", "b_ih", "b_hh")

    def inputs(self) -> tuple:
        return tuple(t for t in (self.x, self.h0, self.c0, self.w_ih, self.w_hh, self.b_ih,
                                 self.b_hh) if t is not None)


@dataclass(slots=True, eq=False)
class Checkpoint(Op):
    fn: Callable
    args: tuple  # the call's arguments, tensors and others, as given
    captured: tuple  # tensors needing grad that the run read: inputs and parameters
    rng_states: tuple  # (backend, state) pairs captured before the forward run
    output_index: int  # which tensor of fn's flattened outputs this tensor is
    autocast: tuple = ()  # core.autocast.snapshot() of the forward run, replayed with it

    def inputs(self) -> tuple:
        return self.captured


@dataclass(slots=True, eq=False)
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


@dataclass(slots=True, eq=False)
class Released(Op):
    """Stands in for an Op whose saved tensors an earlier backward() freed."""

    variant: str
    TENSORS: ClassVar[tuple] = ()


VARIANTS = (
    Contiguous, Binary, Unary, Reduce, Prod, VectorNorm, Scan, Matmul, Reshape, Transpose,
    Narrow, AsStrided, Affine, Conv2d, Conv1d, MaxPool2d, AvgPool2d, Cat, Powf, Clamp, WhereCond,
    Gather, Pad, ToDtype, ToDevice, ScatterAdd, Scatter, Im2Col, Col2Im, Softmax, Standardize,
    LayerNorm, Attention, Linear, Recurrent, RecurrentLayer, Checkpoint, CustomFunction,
    Solve, Decomposition,  # linear algebra
)


def _fast_inputs(names: tuple) -> Callable[[Op], tuple]:
    """Op.inputs for a variant whose tensors are the fields `names`, without the generic
    loop: backward walks every node's inputs, so this is on the hot path of each step."""
    if not names:
        return lambda op: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda op: (one(op),)
    many = attrgetter(*names)
    return lambda op: many(op)


for _variant in (*VARIANTS, Released):
    if _variant.inputs is Op.inputs:  # Cat, Checkpoint, CustomFunction keep their own
        _variant.inputs = _fast_inputs(  # type: ignore[method-assign, assignment]
            _variant.TENSORS)


# -- Which nodes read their own output in backward ------------------------------------------
# A consumer that reads none of an input's values holds it graph_only (core/fields.py), so
# the input's memory can go; that is safe only where the input's own node does not read its
# output (the tensor) in its gradient rule (autograd/rules).  The variants below never do;
# a Binary or Unary depends on its function.  tests/test_graph_memory.py checks the lists
# against the rules.
_RULE_IGNORES_OUTPUT = frozenset((
    Affine, Linear, Matmul, Conv2d, Conv1d, Attention, LayerNorm, Reshape, Transpose, Narrow,
    AsStrided, Contiguous, ToDtype, ToDevice, Pad, Cat, Gather, Powf, Clamp, WhereCond,
    AvgPool2d, MaxPool2d, Im2Col, Col2Im, ScatterAdd, FFT))
BINARY_IGNORES_OUTPUT = frozenset(("add", "sub", "mul"))
UNARY_READS_OUTPUT = frozenset((
    "exp", "sqrt", "sigmoid", "tanh", "erfinv", "rsqrt", "reciprocal", "expm1", "exp2", "tan",
    "erfcx", "ndtri", "log_ndtr", "i0e", "i1", "i1e"))


def reads_output(op: Op) -> bool:
    """Whether op's gradient rule reads the tensor op made (not only its inputs and its
    saved fields)."""
    kind = type(op)
    if kind in _RULE_IGNORES_OUTPUT:
        return False
    if kind is Binary:
        return op.fn not in BINARY_IGNORES_OUTPUT  # type: ignore[attr-defined]
    if kind is Unary:
        return op.fn in UNARY_READS_OUTPUT  # type: ignore[attr-defined]
    return True
