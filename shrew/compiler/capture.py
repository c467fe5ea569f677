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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backends import base
from ..backends.registry import live_backends
from ..core.errors import UnsupportedError
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
                     base.FastNorm, base.FastAttention, base.FastLinear):
        for name in base.FAST_PATHS:
            if hasattr(protocol, name):
                sigs[name] = inspect.signature(getattr(protocol, name))
    return sigs


SIGNATURES = _signatures()


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


@dataclass
class Recording:
    """The values one call touched and the primitive calls it made, in order.  A value's
    origin is ("input", k): the k-th input tensor's storage; ("live", owners): storage that
    existed before the call (owners: the tensors holding it then); ("call", i); or ("rng",
    i): a generator state that call i read."""

    values: list[Any] = field(default_factory=list)
    origin: list[tuple[str, Any]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    by_id: dict[int, int] = field(default_factory=dict)
    existing: dict[int, tuple[Any, list[Tensor]]] = field(default_factory=dict)
    breaks: list[str] = field(default_factory=list)
    signature: list[Any] = field(default_factory=list)  # results and write-backs

    def add(self, value: Any, origin: tuple[str, Any]) -> int:
        self.values.append(value)  # kept alive, so that id() stays unique
        self.origin.append(origin)
        self.by_id[id(value)] = len(self.values) - 1
        return len(self.values) - 1

    def ref(self, array: Any, call: str) -> Ref:
        slot = self.by_id.get(id(array))
        if slot is None:
            known = self.existing.get(id(array))
            if known is None:
                raise GraphBreak(f"{call} read storage made outside the backend protocol "
                                 f"(shape {tuple(array.shape)}, {array.dtype})")
            slot = self.add(array, ("live", known[1]))
        return Ref(slot)


def is_storage(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(
        value, (np.generic, Tensor))


def existing_storage() -> dict[int, tuple[Any, list[Tensor]]]:
    """Every tensor's storage alive now, by id, with the tensors that hold it."""
    found: dict[int, tuple[Any, list[Tensor]]] = {}
    for obj in gc.get_objects():
        # (type(): isinstance may ask a proxy's __class__); a complex tensor's storage is its
        # real pair's, a Tensor found here itself (ops/complex/)
        if issubclass(type(obj), Tensor) and not obj.dtype.is_complex:
            data = getattr(obj, "_data", None)
            if data is not None:
                found.setdefault(id(data), (data, []))[1].append(obj)
    return found


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
        sig = SIGNATURES[name]

        def recorded(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:
                return method(*args, **kwargs)
            depth[0] += 1
            try:
                out = method(*args, **kwargs)
            finally:
                depth[0] -= 1
            if out is NotImplemented or name == "to_numpy":
                return out  # a fast path that declined; a host read for a check
            bound = sig.bind(None, *args, **kwargs)  # (None: self)
            try:
                values = tuple(_argument(rec, name, v) for v in bound.args[1:])
                keywords = {k: _argument(rec, name, v) for k, v in bound.kwargs.items()}
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
            rec.calls.append(Call(name, call_method, values, outputs, isinstance(out, tuple),
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
    try:
        yield
    finally:
        for backend, name in originals:
            delattr(backend, name)
        for name, real in tripwires.items():
            setattr(Tensor, name, real)
        for name in inherited:
            delattr(Tensor, name)


def _with_keywords(method: Callable[..., Any], keywords: dict[str, Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        return method(*args, **keywords)
    return call


def _argument(rec: Recording, call: str, value: Any) -> Any:
    if call == "from_numpy":
        return np.array(value, copy=True)  # host data: a constant of the program
    if id(value) in rec.by_id or id(value) in rec.existing:
        # (a value the recording made or a tensor's storage: numpy gives 0-d results as
        # numpy scalars, so storage is not always an array)
        return rec.ref(value, call)
    if is_storage(value):
        return rec.ref(value, call)  # unknown storage: a graph break
    if isinstance(value, (tuple, list)) and value and all(is_storage(v) for v in value):
        return tuple(rec.ref(v, call) for v in value)
    if call == "set_rng_state":
        raise GraphBreak("set_rng_state with a state from outside the call")
    return value
