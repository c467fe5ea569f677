"""Capture one call of a compiled function as the backend primitives it runs.

The Backend protocol (backends/base.py) is the closed set of kernels every computation goes
through, its optional fast paths included, so one call recorded there is complete: while a
capture runs, each live backend's primitives and fast paths are shadowed by instance
attributes that run the real kernel and append a `Call`.  Every array a call reads is then
one of: an input tensor's storage (bound afresh at each replay), the output of an earlier
call, or storage that existed before the call began (a parameter, a buffer, an optimizer's
momentum: a live reference, read at replay as it is then).  Storage of any other origin was
made outside the protocol, and the capture is refused, as is a call that reads device data
into Python (`.item()`, `.tolist()`, `bool(t)`, ...): the value could steer Python code that
a replay would not run.  Those refusals are the graph breaks; the call that met one runs
eagerly, which is exactly what it did while being captured.
"""
from __future__ import annotations

import gc
import inspect
import os
import sys
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autograd import engine
from ..backends import base
from ..backends.registry import live_backends
from ..core import autocast
from ..core.errors import UnsupportedError
from ..core.fields import wrap
from .._tensor import Tensor

IN_PLACE = frozenset(("copy_", "add_", "add_narrow_", "add_into_"))
"""Primitives that write into their `dst` and make no new storage."""

HOST_READS = ("item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__index__",
              "__array__", "__repr__", "__format__")
"""Tensor methods that bring device data into Python: a graph break."""

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _signatures() -> dict[str, inspect.Signature]:
    sigs = {name: inspect.signature(getattr(base.Backend, name)) for name in base.PRIMITIVES}
    for protocol in (base.FastConv, base.FastPool, base.FastAccumulate, base.FastGrad,
                     base.FastNorm, base.FastAttention, base.FastLinear, base.FastRecurrent):
        for name in base.FAST_PATHS:
            if hasattr(protocol, name):
                sigs[name] = inspect.signature(getattr(protocol, name))
    return sigs


SIGNATURES = _signatures()


def _positional(sig: inspect.Signature) -> tuple[list[Any], bool] | None:
    """The defaults of a method's positional parameters after self (inspect's `empty` for
    none), and whether it takes *args; None if it has keyword-only parameters."""
    kinds = inspect.Parameter
    params = list(sig.parameters.values())[1:]
    if any(p.kind in (kinds.KEYWORD_ONLY, kinds.VAR_KEYWORD) for p in params):
        return None
    return ([p.default for p in params if p.kind != kinds.VAR_POSITIONAL],
            any(p.kind == kinds.VAR_POSITIONAL for p in params))


def bind(name: str, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """(positional arguments, keyword-only arguments) of a call of primitive `name`, the
    defaults filled in: the common case without inspect's (slow) bind."""
    fast = _POSITIONAL.get(name)
    if fast is not None and not kwargs:
        defaults, varargs = fast
        if varargs or len(args) == len(defaults):
            return args, {}
        if len(args) < len(defaults) and all(d is not inspect.Parameter.empty
                                             for d in defaults[len(args):]):
            return (*args, *defaults[len(args):]), {}
    bound = SIGNATURES[name].bind(None, *args, **kwargs)  # (None: self)
    bound.apply_defaults()
    return bound.args[1:], bound.kwargs


_POSITIONAL = {name: _positional(sig) for name, sig in SIGNATURES.items()}


class GraphBreak(Exception):
    """Why a call could not be captured (it ran eagerly)."""


@dataclass(frozen=True)
class Ref:
    """An argument that is a value of the recording: its slot."""

    slot: int


@dataclass
class Call:
    """One primitive run: the backend's method (the real one, not the recorder), the
    arguments in order (values as Ref, tuples of them for `xs`), and the slots it filled."""

    name: str
    method: Any  # the callable (a fused call's is its kernel's name until it is built)
    args: tuple
    outputs: tuple[int, ...]
    returns_tuple: bool
    backend: Any

    def reads(self) -> list[int]:
        """The slots its arguments read, in order (a tuple of Refs for `xs` flattened)."""
        slots = []
        for arg in self.args:
            if isinstance(arg, Ref):
                slots.append(arg.slot)
            elif isinstance(arg, tuple):
                slots.extend(a.slot for a in arg if isinstance(a, Ref))
        return slots


@dataclass(frozen=True)
class Layout:
    """What a program needs to know of a value it no longer holds."""

    shape: tuple
    dtype: Any
    strides: tuple
    size: int


def layout(value: Any) -> Layout:
    return Layout(tuple(getattr(value, "shape", ())), getattr(value, "dtype", None),
                  tuple(getattr(value, "strides", ())), int(getattr(value, "size", 1)))


def grad_replaced(t: Tensor, before: Any) -> bool:
    """Whether t.grad is another than it was before the call (`before`: Recording.grads_set's
    weak reference, or None): a .grad that died since was replaced, by None or a tensor."""
    if before is None:
        return t._grad is not None
    old = before()
    return old is None or t._grad is not old


@dataclass
class Recording:
    """The values one call touched and the primitive calls it made, in order.  A value's
    origin is ("input", k): the k-th input tensor's storage; ("live", owners): storage that
    existed before the call (owners: the tensors holding it then); ("call", i); ("rng", i):
    a generator state that call i read; or ("grad_out", j): a placeholder gradient.

    Values are not kept alive by the recording (a capture's peak memory is then eager's):
    each is watched through a weak reference that forgets its id when it dies, so a new
    array given the same id is not taken for it.  Storage from before the call and values
    without weak references (numpy scalars, OpenCL storage) are held in `held`."""

    layouts: list[Layout] = field(default_factory=list)
    origin: list[tuple[str, Any]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    by_id: dict[int, int] = field(default_factory=dict)
    held: dict[int, Any] = field(default_factory=dict)
    existing: dict[int, tuple[Any, list[Tensor]]] | None = None  # scanned when first needed
    holders: list[Any] = field(default_factory=list)  # the modules and optimizers then
    grads_set: dict[int, tuple[Tensor, Any]] = field(default_factory=dict)  # id: (t, a weak
    # reference to its .grad before the call, or None where it had none)
    start_id: int = 0  # tensors with a smaller .id existed before the call
    stepped: set[int] = field(default_factory=set)  # ids of the optimizers stepped eagerly
    breaks: list[str] = field(default_factory=list)
    signature: list[Any] = field(default_factory=list)  # results and write-backs
    watched: dict[int, tuple[Any, int, int]] = field(default_factory=dict)  # id(weakref):
    # (the weakref, id of its value, slot)

    def add(self, value: Any, origin: tuple[str, Any]) -> int:
        slot = len(self.layouts)
        self.layouts.append(layout(value))
        self.origin.append(origin)
        key = id(value)
        self.by_id[key] = slot
        try:
            if origin[0] == "live":
                raise TypeError  # (held: the program reads it in place)
            ref = weakref.ref(value, self._gone)
            self.watched[id(ref)] = (ref, key, slot)
        except TypeError:
            self.held[slot] = value
        return slot

    def _gone(self, ref: Any) -> None:
        _, key, slot = self.watched.pop(id(ref))
        if self.by_id.get(key) == slot:
            del self.by_id[key]

    def ref(self, array: Any, call: str) -> Ref:
        slot = self.by_id.get(id(array))
        if slot is None:
            if self.existing is None:
                self.existing, self.holders = existing_storage()
            known = self.existing.get(id(array))
            if known is None:
                raise GraphBreak(f"{call} read storage made outside the backend protocol "
                                 f"(shape {tuple(array.shape)}, {array.dtype})")
            slot = self.add(array, ("live", known[1]))
        return Ref(slot)


def is_storage(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(
        value, (np.generic, Tensor))


def existing_storage() -> tuple[dict[int, tuple[Any, list[Tensor]]], list[Any]]:
    """Every tensor's storage alive now, by id, with the tensors that hold it; and every
    module and optimizer (one pass over the heap: done only when a call reads storage it
    did not make)."""
    from ..nn.modules.module import Module
    from ..optim.optimizer import Optimizer
    found: dict[int, tuple[Any, list[Tensor]]] = {}
    holders = []
    for obj in gc.get_objects():
        # (type(): isinstance may ask a proxy's __class__); a complex tensor's storage is its
        # real pair's, a Tensor found here itself (ops/complex/)
        kind = type(obj)
        if issubclass(kind, Tensor) and not obj.dtype.is_complex:
            data = getattr(obj, "_data", None)
            if data is not None:
                found.setdefault(id(data), (data, []))[1].append(obj)
        elif issubclass(kind, (Module, Optimizer)):
            holders.append(obj)
    return found, holders


def user_site() -> str:
    """file:line of the innermost frame outside shrew: where the program asked."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "inside shrew"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


@contextmanager
def recording(rec: Recording, fullgraph: bool) -> Iterator[None]:
    """Record into `rec` every primitive the live backends run inside the block."""
    backends = live_backends()
    depth = [0]  # a primitive that calls another (rand -> from_numpy) records only itself

    def wrap(name: str, method: Callable[..., Any], backend: Any) -> Callable[..., Any]:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:
                return method(*args, **kwargs)
            depth[0] += 1
            try:
                out = method(*args, **kwargs)
            finally:
                depth[0] -= 1
            if out is NotImplemented:
                return out  # a fast path that declined
            positional, named = bind(name, args, kwargs)
            try:
                values = tuple(_argument(rec, name, v) for v in positional)
                keywords = {k: _argument(rec, name, v) for k, v in named.items()}
                if any(isinstance(v, Ref) for v in keywords.values()):
                    raise GraphBreak(f"{name} was given storage by keyword")
            except GraphBreak as exc:
                rec.breaks.append(str(exc))
                return out
            call_method = _with_keywords(method, keywords) if keywords else method
            index = len(rec.calls)
            outputs: tuple[int, ...] = ()
            if name == "get_rng_state":
                outputs = (rec.add(out, ("rng", index)),)
            elif name not in IN_PLACE and out is not None:
                made = out if isinstance(out, tuple) else (out,)
                outputs = tuple(rec.add(m, ("call", index)) for m in made)
            returns_tuple = isinstance(out, tuple) and name != "get_rng_state"  # (one state)
            rec.calls.append(Call(name, call_method, values, outputs, returns_tuple,
                                  backend))
            return out

        return recorded

    names = (*base.PRIMITIVES, *base.FAST_PATHS)
    originals: list[tuple[Any, str]] = []
    for backend in backends:
        for name in names:
            if name in vars(backend):
                continue  # an instance attribute of the backend's own: left as it is
            method = getattr(backend, name, None)
            if method is not None:
                setattr(backend, name, wrap(name, method, backend))
                originals.append((backend, name))
    tripwires = {name: getattr(Tensor, name) for name in HOST_READS if name in vars(Tensor)}
    inherited = [name for name in HOST_READS if name not in vars(Tensor)]

    def host_read(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def read(self: Tensor, *args: Any, **kwargs: Any) -> Any:
            reason = f"Tensor.{name.strip('_')}() at {user_site()} reads device data into Python"
            if fullgraph:
                raise UnsupportedError(f"compile(fullgraph=True): graph break: {reason}")
            rec.breaks.append(reason)
            return real(self, *args, **kwargs)
        return read

    for name in HOST_READS:
        real = getattr(Tensor, name)
        setattr(Tensor, name, host_read(name, real))
    grad_property, data_property = vars(Tensor)["grad"], vars(Tensor)["data"]
    accumulate = engine.accumulate_grad

    def note_grad(t: Tensor) -> None:
        if id(t) not in rec.grads_set:  # the .grad before the call, watched, not kept:
            # eager frees it at zero_grad(), and so must a capture, or its peak grows
            old = t._grad
            rec.grads_set[id(t)] = (t, None if old is None else weakref.ref(old))

    def set_grad(t: Tensor, value: Any) -> None:
        note_grad(t)
        grad_property.fset(t, value)

    def accumulating(t: Tensor, grad: Tensor) -> None:
        note_grad(t)
        accumulate(t, grad)

    def set_data(t: Tensor, value: Any) -> None:
        rec.breaks.append(f"the call replaces a tensor's storage (.data = at {user_site()})")
        data_property.fset(t, value)

    Tensor.grad = property(grad_property.fget, set_grad, doc=grad_property.__doc__)  # type: ignore[method-assign, assignment]
    Tensor.data = property(data_property.fget, set_data, doc=data_property.__doc__)  # type: ignore[method-assign, assignment]
    engine.accumulate_grad = accumulating
    stepping = _eager_segments(rec, depth)
    # Autocast's cast cache would hand a later call a weight cast before an update: a
    # captured program casts afresh each call.
    cast_cache = autocast.is_cache_enabled()
    autocast.set_cache_enabled(False)
    try:
        yield
    finally:
        for cls, real in stepping:
            cls.step = real  # type: ignore[attr-defined]
        autocast.set_cache_enabled(cast_cache)
        Tensor.grad = grad_property  # type: ignore[method-assign]
        Tensor.data = data_property  # type: ignore[method-assign]
        engine.accumulate_grad = accumulate
        for backend, name in originals:
            delattr(backend, name)
        for name, real in tripwires.items():
            setattr(Tensor, name, real)
        for name in inherited:
            delattr(Tensor, name)


def _eager_segments(rec: Recording, depth: list[int]) -> list[tuple[type, Any]]:
    """Shadow every optimizer's and learning-rate schedule's step() so that a call of it
    is recorded as one eager segment, its own primitives unrecorded: its Python state (a
    step count, a schedule's position) then advances at each replay as eagerly.  Before a
    replayed step runs, the .grad of each tensor the call has set so far is set to the
    replay's value.  The real methods, to restore."""
    from ..optim.lr_scheduler.base import LRScheduler
    from ..optim.optimizer import Optimizer
    shadowed = []
    for root in (Optimizer, LRScheduler):
        for cls in (root, *_subclasses(root)):
            if "step" in vars(cls):
                real = vars(cls)["step"]
                shadowed.append((cls, real))
                cls.step = _segment(rec, depth, real,  # type: ignore[attr-defined]
                                    optimizer=root is Optimizer)
    return shadowed


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    subclasses: list[type] = cls.__subclasses__()
    for sub in subclasses:
        found += [sub, *_subclasses(sub)]
    return found


def _segment(rec: Recording, depth: list[int], real: Callable[..., Any],
             optimizer: bool) -> Callable[..., Any]:
    def step(self: Any, *args: Any, **kwargs: Any) -> Any:
        if depth[0]:
            return real(self, *args, **kwargs)
        grads = [(t, t._grad) for t, _ in rec.grads_set.values()]
        depth[0] += 1  # (its primitives run unrecorded)
        try:
            out = real(self, *args, **kwargs)
        finally:
            depth[0] -= 1
        if args or kwargs:
            rec.breaks.append(f"{type(self).__name__}.step() with arguments (a closure, a "
                              f"metric) at {user_site()}")
            return out
        tensors, refs = [], []
        for t, grad in grads:
            slot = None if grad is None else rec.by_id.get(id(grad._data))
            if grad is not None and slot is None and grad.id >= rec.start_id:
                rec.breaks.append(f"{type(self).__name__}.step() reads a .grad made outside "
                                  f"the backend protocol")
                return out
            tensors.append((t, grad if slot is None else None, grad is not None and
                            slot is not None and grad._backend))
            refs.append(Ref(slot) if slot is not None else None)
        if optimizer:
            rec.stepped.add(id(self))
        rec.calls.append(Call(f"{type(self).__name__}.step#{id(self)}",
                              _replayed_step(self, real, tensors),
                              tuple(r for r in refs if r is not None), (), False, None))
        return out
    return step


def _replayed_step(owner: Any, real: Callable[..., Any], tensors: list) -> Callable[..., Any]:
    """The eager segment at replay: set the .grad of each tensor from the replayed arrays
    (in order; None or a tensor from before the call where the capture had those), then
    run the real step."""
    def run(*arrays: Any) -> None:
        given = iter(arrays)
        for t, fixed, backend in tensors:
            t._grad = wrap(next(given), backend) if backend else fixed
        real(owner)
    return run


def _with_keywords(method: Callable[..., Any], keywords: dict[str, Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        return method(*args, **keywords)
    return call


PLAIN = (int, float, complex, bool, str, bytes, type(None))
"""Python values that are constants of a program: never a recorded value (small ints are
shared objects, so their id says nothing)."""


def _argument(rec: Recording, call: str, value: Any) -> Any:
    if call == "from_numpy":  # host data: another device's, read in the call (to_numpy, or
        base = getattr(value, "base", None)  # a view of cpu storage), or a constant
        if id(value) in rec.by_id:
            return rec.ref(value, call)
        if base is not None and id(base) in rec.by_id and getattr(base, "shape", None) == \
                value.shape and base.dtype == value.dtype and base.strides == value.strides:
            return rec.ref(base, call)
        return np.array(value, copy=True)
    if isinstance(value, PLAIN):
        if call == "set_rng_state":  # (a number cannot be told from an equal constant)
            raise GraphBreak("set_rng_state with a state that is a plain number")
        return value
    if id(value) in rec.by_id:  # (numpy gives 0-d results as numpy scalars: storage is not
        return rec.ref(value, call)  # always an array; one from before the call is a value)
    if is_storage(value):
        return rec.ref(value, call)  # unknown storage: a graph break
    if isinstance(value, (tuple, list)) and value and all(is_storage(v) for v in value):
        return tuple(rec.ref(v, call) for v in value)
    if call == "set_rng_state":
        raise GraphBreak("set_rng_state with a state from outside the call")
    return value
