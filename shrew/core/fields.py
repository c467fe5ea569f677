"""The only code that builds a Tensor or writes its private fields.

Every op (shrew/ops), gradient rule, module and loader makes tensors through `wrap` and
`record`, and changes a tensor's storage only through the functions below, so a tensor's
fields are laid out and initialised in this one place.  ``TensorFields`` holds the slots;
``shrew.tensor.Tensor`` adds the methods.  This module imports no op, so the ops can use
it without importing _tensor.py, which imports them.
"""
from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .dtype import BY_NUMPY as _BY_NUMPY
from .errors import DeviceError, DTypeError, ShapeError, ShrewTypeError
from .grad_mode import is_grad_enabled
from . import op as _O
from .op import reads_output as _reads_output
from .shape import LARGE_NUMEL, LargeSize, Size

if TYPE_CHECKING:
    from . import op as O
    from ..backends.base import Backend, Storage
    from .dtype import DType
    from .._tensor import Tensor

_ids = itertools.count(1)
_sizes: dict[tuple, Size] = {}
_SIZES_KEPT = 4096  # distinct shapes remembered; past that the table starts again


def _size(shape: tuple | list) -> Size:
    """The one Size for `shape`: tensors of a shape share it (Sizes are immutable), so a
    step does not make a new object for the garbage collector to scan per tensor."""
    shape = tuple(shape)
    size = _sizes.get(shape)
    if size is None:
        if len(_sizes) >= _SIZES_KEPT:
            _sizes.clear()
        kind = LargeSize if math.prod(shape) >= LARGE_NUMEL else Size
        size = _sizes[shape] = kind(shape)
    return size


_tensor_class: Any = None  # shrew.tensor.Tensor, set when it is defined
# diagnostics.record_site while a detect_anomaly() block is open, else None: so that
# recording costs one test, and this module need not import diagnostics.
_site_recorder: Callable[[Tensor], None] | None = None


def set_site_recorder(recorder: Callable[[Tensor], None] | None) -> None:
    global _site_recorder
    _site_recorder = recorder


class TensorFields:
    """The storage of a Tensor: its slots, and nothing else."""

    __slots__ = ("_data", "_backend", "shape", "dtype", "_op", "requires_grad", "id",
                 "_grad", "_retains_grad", "_view", "_vc", "_before", "_views",
                 "_stands_for", "__weakref__")
    _data: Storage
    _backend: Backend
    shape: tuple[int, ...]
    dtype: DType
    _op: O.Op | None
    requires_grad: bool
    id: int
    _grad: Tensor | None  # Tensor.grad; set_grad checks what users assign
    _retains_grad: bool
    # In-place machinery (shrew/ops/inplace.py).  Left unset by wrap, so that making a
    # tensor costs nothing more; read with getattr(t, name, None).
    _view: Any  # the Op variant (or Alias) that made this tensor as a view of op.x
    _vc: Any  # inplace.Version: the writes into this storage (on the root of a view chain)
    _before: Tensor  # the state this tensor had before an in-place op rebased it
    _views: list  # weak references to the recorded views of this (non-leaf) tensor
    _stands_for: Any  # on a graph_only stand-in: a weak reference to the tensor itself

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        global _tensor_class
        if _tensor_class is None:  # Tensor itself; later subclasses (Parameter) are not it
            _tensor_class = cls


if TYPE_CHECKING:
    AnyTensor = Tensor
else:
    AnyTensor = TensorFields
"""For ``isinstance(x, AnyTensor)`` in the ops: true for every Tensor (Tensor is the only
direct subclass of TensorFields), without importing _tensor.py; mypy reads it as Tensor."""

FIELDS = TensorFields.__slots__[:-6]
"""The field names every tensor has set, without the in-place ones, _stands_for and
__weakref__."""


def init_leaf(t: TensorFields, data: Storage, backend: Backend, dtype: DType,
              requires_grad: bool) -> None:
    """Fill the fields of a new leaf `t` (Tensor.__init__, Parameter.__init__)."""
    t._data = data
    t._backend = backend
    t.shape = _size(data.shape)
    t.dtype = dtype
    t._op = None
    t.requires_grad = bool(requires_grad)
    t.id = next(_ids)
    t._grad = None
    t._retains_grad = False


def blank() -> Tensor:
    """A Tensor with no fields yet, for init_leaf (shrew.tensor)."""
    return object.__new__(_tensor_class)


def wrap(data: Storage, backend: Backend, op: O.Op | None = None) -> Tensor:
    """A new tensor around backend storage; records `op` when it is given."""
    t = object.__new__(_tensor_class)
    t._data = data
    t._backend = backend
    try:  # _size(data.shape), inlined: this runs for every op
        t.shape = _sizes[data.shape]
    except (KeyError, TypeError):  # a shape not seen yet, or a backend's list
        t.shape = _size(data.shape)
    try:
        t.dtype = _BY_NUMPY[data.dtype]
    except KeyError:  # a complex array: complex tensors hold real pairs (ops/complex/)
        raise DTypeError(f"wrap: no tensor stores numpy dtype {data.dtype}; an operation "
                         f"that does not support it was given such an input") from None
    t._op = op
    t.requires_grad = op is not None
    t.id = next(_ids)
    t._grad = None
    t._retains_grad = False
    if op is not None and _site_recorder is not None:
        _site_recorder(t)
    if recast_stand_ins and op is not None and type(op) in HOLDS_RECASTS:
        _hold_recast_stand_ins(op)
    return t


def record(data: Storage, backend: Backend, op: O.Op, *inputs: Tensor) -> Tensor:
    """Wrap `data`, keeping `op` only if some input needs grad and recording is on."""
    for x in inputs:
        if x.requires_grad:
            if is_grad_enabled():
                return wrap(data, backend, op)
            break
    return wrap(data, backend)


def view(data: Storage, backend: Backend, op: O.Op, x: Tensor) -> Tensor:
    """`record` for an op whose result may share x's memory (reshape, transpose, narrow):
    the result remembers `op` as its view link, so in-place writes can find its base."""
    t = record(data, backend, op, x)
    t._view = op
    if t._op is not None and x._op is not None:  # a write into x rebases t (ops/inplace)
        _add_view(x, t)
        # The node reads only x's shape: it holds x graph_only, so that x's memory goes
        # with the view's (a linear layer's [M, N] product seen as [B, T, N], then added
        # into a residual).  The view link keeps x itself, for writes through t.
        t._op = node = _copied(op)
        node.x = graph_only(x)  # type: ignore[attr-defined]
    return t


def _copied(op: O.Op) -> O.Op:
    """A shallow copy of an Op variant (a slots dataclass, which copy.copy takes the slow
    way round)."""
    new = object.__new__(type(op))
    name: str
    for name in type(op).__slots__:
        setattr(new, name, getattr(op, name))
    return new


def _add_view(x: Tensor, t: Tensor) -> None:
    views = getattr(x, "_views", None)
    if views is None:
        views = x._views = []
    elif len(views) >= 8:  # drop the views that are gone, so the list stays short
        views[:] = [v for v in views if v() is not None]
    views.append(weakref.ref(t))


def live_views(x: Tensor) -> list[Tensor]:
    """The recorded views of x still alive."""
    return [v for ref in getattr(x, "_views", ()) if (v := ref()) is not None]


def alias(t: Tensor, data: Storage | None = None) -> Tensor:
    """A tensor sharing t's memory and version counter, recording nothing: detach(), or
    `data`, a view of t's memory (an expand without grad)."""
    out = wrap(t._data if data is None else data, t._backend)
    out._view = Alias(t)
    return out


class Alias:
    """The view link of a detached tensor: same memory as `x`, no gradient path."""

    __slots__ = ("x",)

    def __init__(self, x: Tensor) -> None:
        self.x = x


def next_id() -> int:
    """A fresh id: ids also order events (version stamps, see ops/inplace.py)."""
    return next(_ids)


def become(t: Tensor, new: Tensor, before: Tensor | None) -> None:
    """Give `t` the graph state of `new` (op, requires_grad) and a fresh id, remembering
    its former state as `before` (inplace.rebase)."""
    t._op = new._op
    t.requires_grad = new.requires_grad
    t.id = next(_ids)
    if before is not None:
        t._before = before


def snapshot(t: Tensor, data: Storage) -> Tensor:
    """A tensor with t's graph state and id around `data` (t's values before a write)."""
    out = object.__new__(_tensor_class)
    for name in FIELDS:
        setattr(out, name, getattr(t, name))
    out._data = data
    out._grad = None
    before = getattr(t, "_before", None)
    if before is not None:
        out._before = before
    return out


def graph_only(t: Tensor) -> Tensor:
    """t as the input of a node whose gradient reads none of t's values (a cast, an add or
    a subtraction: ops/saved.py's nodes that save nothing): where t is an intermediate, a
    stand-in with t's graph state and id but no storage, so that the node does not keep
    t's memory alive once nothing else reads it, as PyTorch's autograd keeps only what a
    node saves.  Autocast's casts and residual adds otherwise held a full-precision copy
    of every activation until backward.  Leaves and tensors without a graph are returned
    as they are, and so is a tensor whose own node reads it in backward (an exp's, a
    softmax's).  Backward walks to t itself while it lives (autograd/engine.py)."""
    op = t._op
    if op is None or _reads_output(op):  # t's own node needs t's values in backward
        return t
    # (the fields set one by one, not snapshot(t, None)'s loop: this runs for every cast,
    # add and view recorded, and the loop cost it 0.9 us more)
    out = object.__new__(_tensor_class)
    out._data = None
    out._backend, out.shape, out.dtype = t._backend, t.shape, t.dtype
    out._op, out.requires_grad, out.id = t._op, t.requires_grad, t.id
    out._grad, out._retains_grad = None, False
    out._stands_for = weakref.ref(t)
    return out


class RecastLink(weakref.ref):
    """A recast stand-in's link (recast_stand_in): to autocast's cast while it lives."""
    __slots__ = ()


HOLDS_RECASTS = frozenset((_O.Linear, _O.Matmul, _O.Conv2d, _O.Conv1d))
"""The nodes that hold autocast's weight casts as recast stand-ins (wrap)."""

recast_stand_ins: dict[int, Tensor] = {}
"""The weight casts in autocast's caches by id -> their recast stand-in."""

recasting = False
"""Whether a recast stand-in was ever made (backward looks for them only then)."""


def recast_stand_in(cast: Tensor) -> None:
    """Register a stand-in for `cast`, autocast's 16-bit cast of a weight (its node a
    ToDtype of the weight): the matrix products and convolutions recorded while the cast is
    cached hold the stand-in in its place, so that the cast's memory goes with the region's
    cache, not at the end of backward, which casts the weight again where the stand-in is
    read (core/autocast.py's recast).  PyTorch keeps the casts: this is how a bfloat16
    step's peak is below its float32 one by more than the activations' half."""
    global recasting
    stand_in = graph_only(cast)
    stand_in._stands_for = RecastLink(cast)
    recast_stand_ins[cast.id] = stand_in
    recasting = True


def _hold_recast_stand_ins(op: O.Op) -> None:
    """Put the recast stand-ins in place of the cached casts op was given (wrap's)."""
    for name in op.TENSORS:
        x = getattr(op, name)
        stand_in = None if x is None else recast_stand_ins.get(x.id)
        if stand_in is not None and stand_in._stands_for() is x:
            setattr(op, name, stand_in)


def is_stand_in(t: Any) -> bool:
    """Whether t (a tensor, None, anything) is a graph_only stand-in: read from its own
    slot, safe on every tensor class (a complex tensor's storage is not readable)."""
    return getattr(t, "_stands_for", None) is not None


def stood_for(t: Tensor) -> Tensor:
    """The tensor a graph_only stand-in `t` was made for, where it is alive and still the
    same node (an in-place write gives it a new id, detach_() drops its op); else `t`."""
    real = t._stands_for()
    return real if real is not None and real.id == t.id and real._op is t._op else t


def with_inputs_resolved(op: O.Op | None) -> O.Op | None:
    """op, or where it holds inputs graph_only, a copy holding each input's tensor itself
    where it lives (Tensor.op: what users walk the graph by)."""
    if op is None:
        return op
    copy = None
    for name in op.TENSORS:
        x: Any = getattr(op, name, None)
        if is_stand_in(x):
            copy = copy or _copied(op)
            setattr(copy, name, stood_for(x))
    return copy or op


def detach_(t: Tensor) -> None:
    t._op = None
    t.requires_grad = False


def leaf(data: Storage, backend: Backend, requires_grad: bool) -> Tensor:
    """A new leaf around backend storage (the creation functions)."""
    t = wrap(data, backend)
    t.requires_grad = bool(requires_grad)
    return t


def copy_leaf(t: Tensor, memo: dict[int, Any]) -> Tensor:
    """A leaf like `t` (same class and flags) with its own storage and a fresh id:
    Tensor.__deepcopy__."""
    out = object.__new__(type(t))
    for name in FIELDS:
        setattr(out, name, getattr(t, name))
    out._data = t._backend.contiguous(t._data)
    out._op = None
    out.id = next(_ids)
    out._grad = None if t._grad is None else t._grad.__deepcopy__(memo)
    memo[id(t)] = out
    return out


def adopt(t: TensorFields, source: Tensor, requires_grad: bool) -> None:
    """Make `t` a leaf holding `source`'s storage, and its id (Parameter.__init__, whose
    `source` is its private copy)."""
    init_leaf(t, source._data, source._backend, source.dtype, requires_grad)
    t.id = source.id


def replace_storage(t: Tensor, source: Tensor) -> None:
    """Point `t` at `source`'s storage, device and dtype, keeping its id (Module.to)."""
    t._data, t._backend, t.dtype = source._data, source._backend, source.dtype


def resize_storage(t: Tensor, source: Tensor) -> None:
    """Point `t` at `source`'s storage and shape, keeping its id (Tensor.resize_)."""
    t._data, t.shape = source._data, _size(source.shape)


def own_array(t: Tensor) -> None:
    """Make a 0-d cpu tensor's storage a 0-d array: numpy gives a scalar for a reduction
    over every dim or arithmetic on 0-d arrays, and an in-place write needs memory to
    write into (ops/inplace.py)."""
    if isinstance(t._data, np.generic):
        t._data = np.asarray(t._data)


def set_grad(t: Tensor, grad: Tensor | None) -> None:
    """t.grad = grad, checked as PyTorch checks it: a tensor of t's shape, dtype and
    device, or None."""
    if grad is not None:
        if not isinstance(grad, _tensor_class):
            raise ShrewTypeError(f"grad: assigned grad expected to be a Tensor or None but got "
                                    f"{type(grad).__name__}")
        if grad.dtype is not t.dtype:
            raise DTypeError(f"grad: attempting to assign a gradient with dtype {grad.dtype} "
                             f"to a tensor with dtype {t.dtype}")
        if grad.device != t.device:
            raise DeviceError(f"grad: assigned grad expected to be on {t.device} but got grad "
                              f"on {grad.device}")
        if grad.shape != t.shape:
            raise ShapeError(f"grad: attempting to assign a gradient of size {list(grad.shape)} "
                             f"to a tensor of size {list(t.shape)}")
    t._grad = grad


def accumulate_grad(t: Tensor, grad: Tensor) -> None:
    """Add a backward's gradient into t.grad (backprop; the engine made it t's dtype)."""
    t._grad = grad if t._grad is None else t._grad + grad


def retain_grad(t: Tensor) -> None:
    t._retains_grad = True


def release(t: Tensor, op: O.Op) -> None:
    """Replace t's op after backward freed its graph (O.Released)."""
    t._op = op
