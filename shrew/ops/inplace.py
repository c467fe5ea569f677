"""In-place operations: how an op writes into a tensor's memory, as PyTorch does.

The one entry point is ``write_(t, op, compute)``: ``compute(t)`` gives t's new value,
computed out of place with ordinary (recorded) ops; ``write_`` checks it, writes it into
t's memory and keeps autograd right:

* Storage.  Views (reshape/view when it needs no copy, transpose, permute, narrow, basic
  indexing, squeeze/unsqueeze/flatten, ``t``, ``T``) and ``detach()`` share their base's
  memory on every backend (numpy views on cpu, CuPy views on cuda, CLStorage views of one
  buffer on opencl).  Each such tensor remembers its view link (``_view``: the Op that made
  it from its base, or ``factory.Alias`` for detach), so a write through a view is seen
  through the base and every other view of it.  A reshape that had to copy is not a view
  (as PyTorch's reshape); ``expand`` without grad is one through an Alias link (writing
  into it is an error, as in PyTorch).
* Versions.  The root of a view chain holds a ``Version``: how many writes went into that
  memory, and when (stamps from the id counter, taken when a write begins, so they compare
  with the ids of the nodes that saved a tensor).  ``t._version`` reads it.  A bump is an
  int increment and a list append; backward checks the tensors a node saved (ops/saved.py,
  PyTorch's choice) only for nodes made before the latest write.
* Graph (PyTorch's rebase of history).  When the write needs grad (t, its base or the new
  value requires grad, and grad mode is on), t takes the new value's Op and a fresh id, and
  its former state is kept as a snapshot (``t._before``) holding a copy of its old values
  and a Version of its own with this one write.  Nodes recorded before the write still name
  the tensor object; backward (``resolve``) follows ``_before`` back to the state each node
  saw: a tensor's inputs always have smaller ids than it, so an input id at least the
  node's id means the input was rebased later.  A write through a view rebuilds the base
  as ``where(written, new values, old base)`` (a scatter of the view's flat positions in
  the base), and the view is taken again from the rebuilt base; so is every live recorded
  view of a rebased tensor (``factory.live_views``), as PyTorch regenerates views.

* Overlap.  A source tensor whose memory partially overlaps t's is refused before
  anything is computed (check_overlap: PyTorch's rule and message); the direct writes
  (copy_, add_) read any other shared source through a copy.

A node made before the write that saved t is refused at backward (the snapshot's Version
says t was written after the node), exactly as PyTorch refuses it; the nodes that computed
the written value (``a.mul_(w)`` reads the old ``a`` for ``w``'s gradient) were made after
the write began and read the snapshot's copy, as PyTorch reads its saved original.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import op as O
from ..core.dtype import FLOAT, bool_
from ..core.errors import (DTypeError, DeviceError, MemoryOverlapError, ShapeError, ShrewTypeError,
                           ShrewValueError, StateError, type_name)
from ..core.fields import (Alias, AnyTensor, become, live_views, next_id, own_array,
                       replace_storage, resize_storage, snapshot)
from ..core.fields import detach_ as factory_detach_
from ..core.grad_mode import is_grad_enabled, no_grad
from ..core.shape import broadcast_shapes, fmt, numel
from ..autograd.node_names import torch_name
from .common import constant
from .creation import arange, full, tensor
from .elementwise.recorded import where
from .index.recorded import forget_host_range, scatter_add_unchecked
from .saved import saved_tensors
from .shape.strided import replay as replay_strided

if TYPE_CHECKING:
    from .._tensor import Tensor

_HISTORY = 8  # write stamps kept per memory: enough to name the version a node saw


class Version:
    """The writes into one memory: their count, the latest stamps and the last op."""

    __slots__ = ("n", "stamps", "op")

    def __init__(self) -> None:
        self.n = 0
        self.stamps: list[int] = []
        self.op = ""


last_write = 0
"""The stamp of the latest in-place write anywhere: backward checks versions only for
nodes made before it (none, in a loop that steps the optimizer before the next forward)."""
rebased = False
"""Whether any tensor was ever rebased: until then backward resolves nothing."""


# -- views and versions ---------------------------------------------------------------------
def shares_memory(a: Tensor, b: Tensor) -> bool:
    """Whether a and b (on one backend) may share memory."""
    allocation = getattr(a._backend, "allocation", None)
    host = isinstance(a._data, np.ndarray)  # (a backend simulated on the host has numpy's)
    if allocation is not None and not host:
        return bool(allocation(a._data) is allocation(b._data))
    xp = np if host else getattr(a._backend, "xp", np)
    return bool(xp.may_share_memory(a._data, b._data))


def _link(t: Tensor) -> Any:
    """t's view link, or None when t owns its memory (a reshape that copied is no view)."""
    link = getattr(t, "_view", None)
    # (an empty reshape shares nothing to tell by, and never needs a copy)
    if type(link) is O.Reshape and numel(t.shape) and not shares_memory(t, link.x):
        t._view = link = None
    return link


def memory_root(t: Tensor) -> Tensor:
    """The tensor at the root of t's views: it holds the memory's Version."""
    while (link := _link(t)) is not None:
        t = link.x
    return t


def version(t: Tensor) -> int:
    vc = getattr(memory_root(t), "_vc", None)
    return 0 if vc is None else vc.n


def _version_record(t: Tensor) -> Version:
    """The Version of t's memory (made at its first write)."""
    root = memory_root(t)
    vc = getattr(root, "_vc", None)
    if vc is None:
        vc = root._vc = Version()
    return vc


def bump(t: Tensor, op: str, stamp: int | None = None) -> None:
    """Count a write into t's memory (and so into every view of it).  Its stamp is the id
    at which the write began (write_), so the nodes that computed the written value come
    after it: they saw the old values, which the write keeps for them (t._before)."""
    global last_write
    vc = _version_record(t)
    vc.n += 1
    vc.op = op
    stamp = next_id() if stamp is None else stamp
    last_write = max(last_write, stamp)
    vc.stamps.append(stamp)
    if len(vc.stamps) > _HISTORY:
        del vc.stamps[0]
    forget_host_range(t)


def _view_chain(t: Tensor) -> tuple[Tensor, list[tuple[Any, tuple[int, ...]]]]:
    """(graph base, steps): the view ops from the base down to t (a detach link ends the
    chain: no gradient flows through it)."""
    steps = []
    while (link := _link(t)) is not None and type(link) is not Alias:
        steps.append((link, t.shape))
        t = link.x
    return t, steps[::-1]


def _replay(x: Tensor, steps: list[tuple[Any, tuple[int, ...]]]) -> Tensor:
    for link, shape in steps:
        match link:
            case O.Reshape():
                x = x.reshape(*shape)
            case O.Transpose(_, d0, d1):
                x = x.transpose(d0, d1)
            case O.Narrow(_, dim, start, length):
                x = x.narrow(dim, start, length)
            case O.AsStrided():
                x = replay_strided(x, link)
    return x


# -- the write ------------------------------------------------------------------------------
def check_writable(t: Tensor, op: str) -> None:
    """PyTorch's refusals, before anything is computed or written."""
    if not isinstance(t, AnyTensor):
        raise ShrewTypeError(f"{op}: expects a shrew.Tensor, got {type_name(t)}")
    if is_grad_enabled():
        base, steps = _view_chain(t)
        if base.requires_grad and base._op is None:
            what = "a view of a leaf tensor" if steps else "a leaf tensor"
            raise StateError(f"{op}: {what} that requires grad is being used in an in-place "
                             f"operation; wrap it in `with shrew.no_grad():` (as optimizers "
                             f"and init functions do) or operate on a clone")
    own_array(t)
    data = t._data
    # (an empty array may have zero strides without sharing anything)
    if data.size and any(st == 0 and n > 1 for st, n in zip(data.strides, data.shape)) or \
            (isinstance(data, np.ndarray) and not data.flags.writeable):
        _refuse_expanded(t, op)


def _refuse_expanded(t: Tensor, op: str) -> None:
    raise StateError(f"{op}: unsupported operation: more than one element of the "
                     f"written-to tensor (shape {fmt(t.shape)}) refers to a single memory "
                     f"location (an expand()ed tensor); call .clone() before writing")


def check_overlap(t: Tensor, op: str, *sources: object, exact_ok: bool = True) -> None:
    """PyTorch's refusal of a source tensor whose memory overlaps t's partially (its
    get_overlap_status: two dense tensors of one allocation whose byte ranges meet, not
    the same range with the same strides).  Exact aliasing (x.add_(x)) is allowed unless
    not `exact_ok` (the index writes, scatter_ and index_copy_ among them, refuse any
    overlap, as PyTorch's assert_no_overlap), and so is any overlap of a tensor that is
    not dense (a step slice, an expand): PyTorch calls those too hard to tell; shrew
    writes them as if the source were read first."""
    for src in sources:
        if isinstance(src, AnyTensor) and src._backend is t._backend and \
                (src is not t or not exact_ok) and _overlaps(t, src, exact_ok):
            raise MemoryOverlapError(
                f"{op}: unsupported operation: some elements of the input tensor (shape "
                f"{fmt(src.shape)}) and the written-to tensor (shape {fmt(t.shape)}) refer to "
                f"a single memory location. Please clone() the tensor before performing the "
                f"operation.")


def _overlaps(a: Tensor, b: Tensor, exact_ok: bool) -> bool:
    if not numel(a.shape) or not numel(b.shape) or not shares_memory(a, b):
        return False
    (a_begin, a_strides), (b_begin, b_strides) = _layout(a._data), _layout(b._data)
    if not (_dense(a.shape, a_strides, a._data) and _dense(b.shape, b_strides, b._data)):
        return False
    a_end = a_begin + numel(a.shape) * a._data.dtype.itemsize
    b_end = b_begin + numel(b.shape) * b._data.dtype.itemsize
    if exact_ok and (a_begin, a_end) == (b_begin, b_end):
        return _strides_of(a.shape, a_strides) != _strides_of(b.shape, b_strides)
    return a_begin < b_end and b_begin < a_end


def _layout(data: Any) -> tuple[int, tuple[int, ...]]:
    """(address of the first element, strides), in bytes, comparable between two storages
    of one allocation: a numpy or CuPy array's pointer, a CLStorage's offset in its buffer
    (which has no address of its own)."""
    host = getattr(data, "__array_interface__", None) or \
        getattr(data, "__cuda_array_interface__", None)
    if host is not None:
        return int(host["data"][0]), tuple(data.strides)
    itemsize = data.dtype.itemsize
    return data.offset * itemsize, tuple(st * itemsize for st in data.strides)


def _strides_of(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    """The strides that matter: those of dims longer than 1."""
    return tuple(st for n, st in zip(shape, strides) if n > 1)


def _dense(shape: tuple[int, ...], strides: tuple[int, ...], data: Any) -> bool:
    """Whether the elements fill their byte range once each (PyTorch's
    is_non_overlapping_and_dense): the strides, sorted, are those of a contiguous array."""
    expected = data.dtype.itemsize
    for st, n in sorted((st, n) for n, st in zip(shape, strides) if n > 1):
        if st != expected:
            return False
        expected *= n
    return True


def _source_data(t: Tensor, src: Tensor) -> Any:
    """src's storage for a direct write into t: a copy where they share memory in any way
    but exact aliasing, so that no element is read after it was written."""
    if src._data is t._data or not shares_memory(t, src) or \
            _layout(src._data) == _layout(t._data) and src.shape == t.shape:
        return src._data
    return src._backend.contiguous(src._data)  # (always a copy)


def fit(t: Tensor, value: Tensor, op: str) -> Tensor:
    """value as it will be written into t: t's shape (value may broadcast to it, not
    grow it), dtype (a float into an integer tensor is refused, as PyTorch) and device."""
    if not isinstance(value, AnyTensor):  # an operator gave NotImplemented
        raise ShrewTypeError(f"{op}: unsupported operand for a tensor of {t.dtype}")
    if value.shape != t.shape:
        if broadcast_shapes(op, value.shape, t.shape) != t.shape:
            raise ShapeError(f"{op}: output with shape {fmt(t.shape)} doesn't match the "
                             f"broadcast shape {fmt(broadcast_shapes(op, value.shape, t.shape))}")
        value = value.expand(*t.shape)
    if value.dtype is not t.dtype:
        if value.dtype.category == FLOAT and t.dtype.category != FLOAT or \
                (t.dtype is bool_ and value.dtype is not bool_ and op != "copy_"):
            raise DTypeError(f"{op}: result type {value.dtype} can't be cast to the desired "
                             f"output type {t.dtype}")
        value = value.to_dtype(t.dtype)
    if value._backend is not t._backend:
        raise DeviceError(f"{op}: the value is on {value.device} but the tensor is on "
                          f"{t.device}")
    return value


def _store(t: Tensor, value: Tensor, op: str, stamp: int | None = None) -> None:
    t._backend.copy_(t._data, value._data)
    bump(t, op, stamp)


def _snapshot(t: Tensor, op: str, stamp: int, copy: bool = True) -> Tensor:
    """t's state before the write `op` that begins at `stamp`: its graph state and a copy
    of its values.  Its own Version holds that one write: a node recorded before it that
    saved t is refused at backward, as PyTorch refuses it, while the nodes that compute
    the written value (made after `stamp`) read the copy, PyTorch's saved original.  (A
    tensor rebased because another was written needs no copy: no such node reads it.)"""
    before = snapshot(t, t._backend.contiguous(t._data) if copy else t._data)
    vc = before._vc = Version()
    vc.n, vc.stamps, vc.op = version(t) + 1, [stamp], op
    return before


def write_(t: Tensor, op: str, compute: Callable[[Tensor], Tensor],
           reads_copy: bool = False, sources: tuple[object, ...] = ()) -> Tensor:
    """Write compute(t) into t's memory and return t (see the module docstring).  Every
    in-place op, ``x[...] = v`` included, goes through here.  With `reads_copy` (the
    index writes, which read t through views of it), compute reads the copy of t's old
    values that a recorded write keeps anyway, so that no node made for the new value
    holds memory the write overwrites.  `sources`: the op's tensor arguments, refused
    where they overlap t partially (check_overlap)."""
    check_writable(t, op)
    check_overlap(t, op, *sources)
    stamp = next_id()
    before = _snapshot(t, op, stamp) if reads_copy and is_grad_enabled() else None
    value = fit(t, compute(t if before is None else before), op)
    if not is_grad_enabled():
        _store(t, value, op, stamp)
        return t
    base, steps = _view_chain(t)
    if not (value.requires_grad or t.requires_grad or base.requires_grad):
        _store(t, value, op, stamp)
        return t
    global rebased
    rebased = True
    if before is None:
        before = _snapshot(t, op, stamp)
    if not steps:
        if value._op is None:  # a leaf (copy_), or no grad (fill_, zero_, random_): a new
            # node, with a zero gradient path from t as PyTorch's
            value = where(constant(t.shape, True, bool_, t._backend), value, t)
        _store(t, value, op, stamp)
        become(t, value, before)
        _rebase_views(t, op, stamp, {id(t)})
        return t
    new_base = _rebuilt_base(base, steps, value)
    base_before = _snapshot(base, op, stamp, copy=False)  # no node reads its values
    _store(t, value, op, stamp)
    become(base, new_base, base_before)
    become(t, _replay(base, steps), before)
    done = {id(base), id(t)}
    _rebase_views(base, op, stamp, done)
    _rebase_views(t, op, stamp, done)
    return t


def _rebase_views(x: Tensor, op: str, stamp: int, done: set[int]) -> None:
    """After x was rebased, take each recorded view of x (and their views) again from x,
    as PyTorch regenerates a view's node from its base: a view taken before a write into
    its base gets the write's gradient.  `done`: the ids of the tensors already rebased."""
    for v in live_views(x):
        if id(v) not in done:
            done.add(id(v))
            become(v, _replay(x, [(v._view, v.shape)]), _snapshot(v, op, stamp, copy=False))
        _rebase_views(v, op, stamp, done)


def _rebuilt_base(base: Tensor, steps: list[tuple[Any, tuple[int, ...]]],
                  value: Tensor) -> Tensor:
    """base with the view's region replaced by value, as recorded ops: the view's flat
    positions in the base are found by taking the same view of arange(numel)."""
    size = numel(base.shape)
    with no_grad():
        positions = _replay(arange(size, device=base.device).reshape(*base.shape), steps)
        flat = positions.reshape(numel(positions.shape))
        ones = value.detach().reshape(numel(value.shape)) * 0 + 1
        written = scatter_add_unchecked((size,), 0, flat, ones) > 0
    placed = scatter_add_unchecked((size,), 0, flat, value.reshape(numel(value.shape)))
    return where(written, placed, base.reshape(size)).reshape(*base.shape)


def detach_(t: Tensor) -> Tensor:
    """Make t a leaf outside the graph, in place (a view cannot be: its base's graph
    would disagree)."""
    if _view_chain(t)[1]:
        raise StateError("detach_: can't detach a view in place; use detach() instead")
    factory_detach_(t)
    return t


def set_data(t: Tensor, value: Any) -> None:
    """t.data = value: t now holds value's memory, shape and dtype, keeping its graph
    flags (a tensor's id stays, so optimizer state does)."""
    if not isinstance(value, AnyTensor):
        raise ShrewTypeError(f"data: must be set to a shrew.Tensor, got {type_name(value)}")
    replace_storage(t, value)
    t.shape = value.shape
    t._view = None  # its own memory now


# -- backward: the state each node saw --------------------------------------------------------
def resolve(x: Tensor, node_id: int) -> Tensor:
    """x as it was when the node with id `node_id` recorded it."""
    while x.id >= node_id:
        x = x._before
    return x


def as_recorded(op: O.Op, node_id: int) -> O.Op:
    """op with each input tensor as it was when op was recorded (unchanged if none was
    rebased since)."""
    if not any(x.id >= node_id for x in op.inputs()):
        return op
    if type(op) is O.Cat:
        return dataclasses.replace(op, xs=tuple(resolve(x, node_id) for x in op.xs))
    if type(op) is O.CustomFunction:
        return dataclasses.replace(
            op, tensors=tuple(resolve(x, node_id) for x in op.tensors),
            args=tuple(resolve(a, node_id) if isinstance(a, AnyTensor) else a for a in op.args))
    if type(op) is O.Checkpoint:
        return dataclasses.replace(op, captured=tuple(resolve(x, node_id)
                                                      for x in op.captured))
    return dataclasses.replace(op, **{name: resolve(x, node_id) for name in op.TENSORS
                                      if (x := getattr(op, name)) is not None})


def check_versions(node: Tensor, op: O.Op) -> None:
    """Raise if a tensor this node saved for backward was written after it saved it."""
    for role, x in saved_tensors(op, node):
        vc = getattr(memory_root(x), "_vc", None)
        if vc is None or vc.stamps[-1] < node.id:
            continue
        later = sum(1 for s in vc.stamps if s > node.id)
        raise StateError(
            f"backward: one of the variables needed for gradient computation has been "
            f"modified by an inplace operation: the {role} of {torch_name(op)} (shape "
            f"{fmt(x.shape)}, {x.dtype}) is at version {vc.n}; expected version "
            f"{vc.n - later} instead (last written by {vc.op}).  Write out of place, or "
            f"write into a .clone()")


# -- the in-place ops (Tensor's `_` methods and augmented assignment) -------------------------
def add_(t: Tensor, other: Any, alpha: Any = 1, op: str = "add_") -> Tensor:
    """t += alpha * other.  The optimizer's case (a same-shaped float tensor, nothing to
    record) is one backend pass, as before."""
    if isinstance(other, AnyTensor) and other.shape == t.shape and \
            other._backend is t._backend and other.dtype is t.dtype and \
            t.dtype.category == FLOAT and \
            not (is_grad_enabled() and (t.requires_grad or other.requires_grad)):
        check_writable(t, op)
        check_overlap(t, op, other)
        t._backend.add_(t._data, _source_data(t, other), float(alpha))
        bump(t, op)
        return t
    return write_(t, op, lambda x: x + (other if alpha == 1 else other * alpha), sources=(other,))


def sub_(t: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return write_(t, "sub_", lambda x: x - (other if alpha == 1 else other * alpha),
                  sources=(other,))


def clamp_(t: Tensor, min: Any = None, max: Any = None, op: str = "clamp_") -> Tensor:  # noqa: A002
    return write_(t, op, lambda x: x.clamp(min, max), sources=(min, max))


def fill_(t: Tensor, value: Any, op: str = "fill_") -> Tensor:
    if isinstance(value, AnyTensor):
        if value.ndim:
            raise ShapeError(f"{op}: only supports a 0-dim value tensor, got shape "
                             f"{fmt(value.shape)}")
        return write_(t, op, lambda x: value.to(t.device))
    return write_(t, op, lambda x: full(t.shape, value, dtype=t.dtype, device=t.device))


def copy_(t: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Write src into t: broadcast to t's shape, cast to its dtype, moved to its device."""
    if not isinstance(src, AnyTensor):
        raise ShrewTypeError(f"copy_: the source must be a shrew.Tensor, got {type_name(src)}")
    if src.shape == t.shape and not (is_grad_enabled() and (t.requires_grad or
                                                            src.requires_grad)):
        check_writable(t, "copy_")   # the optimizer's and load_state_dict's case
        check_overlap(t, "copy_", src)
        moved = src.detach().to(device=t.device, dtype=t.dtype)
        t._backend.copy_(t._data, _source_data(t, moved))
        bump(t, "copy_")
        return t
    return write_(t, "copy_", lambda x: src.to(device=t.device).to_dtype(t.dtype),
                  sources=(src,))


def random_(t: Tensor, op: str, draw: Callable[[Tensor], Tensor],
            generator: Any = None) -> Tensor:
    """uniform_, bernoulli_, exponential_, cauchy_, geometric_, log_normal_: draw(u) from a
    tensor of t's shape, uniform in [0, 1) from t's device generator or from `generator`'s
    host stream (a float tensor only)."""
    from .random import rand  # random -> sort -> index.composed imports this module
    if t.dtype.category != FLOAT:
        raise DTypeError(f"{op}: needs a floating-point tensor, got {t.dtype}")
    return write_(t, op, lambda x: draw(rand(*t.shape, generator=generator, dtype=t.dtype,
                                             device=t.device)))


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None,
            op: str = "normal_", then: Callable[[Tensor], Tensor] | None = None) -> Tensor:
    """mean + std * N(0, 1) written into t (log_normal_ passes exp as `then`)."""
    from .random import randn  # random -> sort -> index.composed imports this module
    if t.dtype.category != FLOAT:
        raise DTypeError(f"{op}: needs a floating-point tensor, got {t.dtype}")

    def draw(x: Tensor) -> Tensor:
        value = randn(*t.shape, generator=generator, dtype=t.dtype, device=t.device) \
            * float(std) + float(mean)
        return value if then is None else then(value)
    return write_(t, op, draw)


def random_integers_(t: Tensor, args: tuple, generator: Any = None) -> Tensor:
    """Tensor.random_(), random_(to), random_(from, to): integers uniform in [from, to),
    by default [0, 2**mantissa] for a float dtype and the dtype's whole non-negative range
    for an integer one (as PyTorch).  Drawn exactly on the host from `generator`'s stream,
    or from one seeded by t's device generator, then copied in."""
    from .random import check_generator, randint  # random -> sort -> index.composed
    if len(args) > 2:
        raise ShrewTypeError(f"random_: takes at most (from, to), got {len(args)} arguments")
    low, high = (0, None) if not args else (0, args[0]) if len(args) == 1 else args
    check_generator("random_", generator)
    if high is None:
        if t.dtype is bool_:
            high = 2
        elif t.dtype.category == FLOAT:
            high = 2 ** int(np.finfo(t.dtype.np).nmant + 1) + 1
        else:
            high = int(np.iinfo(t.dtype.np).max) + 1
    if not (isinstance(low, int) and isinstance(high, int)) or low >= high:
        raise ShrewValueError(f"random_: expects from < to, got from={low!r}, to={high!r}")
    if generator is None:
        seed = int(randint(2 ** 62, (1,), device=t.device).item())
        rng = np.random.default_rng(seed)
    else:
        rng = generator.numpy()
    values = rng.integers(low, high, size=t.shape, dtype=np.int64 if high <= 2 ** 63 else
                          np.uint64)
    return write_(t, "random_", lambda x: tensor(values.astype(t.dtype.np), device=t.device))


def resize_(t: Tensor, size: Any, op: str = "resize_") -> Tensor:
    """t with `size`, in place: its elements in memory order kept as far as they reach,
    new ones 0 (PyTorch leaves them uninitialised).  A tensor that requires grad, a view
    and a tensor with views are refused: their memory is shared or recorded."""
    from .creation import zeros  # creation -> inplace at import
    from .shape.recorded import cat
    shape = tuple(int(s) for s in (size if isinstance(size, (tuple, list)) else (size,)))
    if any(s < 0 for s in shape):
        raise ShapeError(f"{op}: sizes must be non-negative, got {list(shape)}")
    if t.requires_grad:
        raise StateError(f"{op}: cannot resize a tensor that requires grad")
    if getattr(t, "_view", None) is not None or live_views(t):
        raise StateError(f"{op}: cannot resize a view or a tensor that has views (they share "
                         f"its memory); resize a clone")
    n, flat = numel(shape), t.detach().reshape(-1)
    if n <= flat.numel():
        values = flat.narrow(0, 0, n).clone()
    else:
        values = cat([flat, zeros(n - flat.numel(), dtype=t.dtype, device=t.device)])
    resize_storage(t, values.reshape(shape).contiguous().clone())
    bump(t, op)
    return t


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:  # noqa: A002
    """torch.resize_as_: input resized in place to the_template's shape."""
    return resize_(input, tuple(the_template.shape), "resize_as_")


def zero_(input: Tensor) -> Tensor:  # noqa: A002
    """torch.zero_: input filled with zeros, in place."""
    return fill_(input, 0, "zero_")
