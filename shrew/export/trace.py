"""Record one training step as the sequence of backend primitives it runs.

Op variants record only what is differentiable: a comparison feeding a `where`, max-pool
indices, a dropout mask or batch norm's running statistics are computed outside them.
The Backend protocol, by contrast, is the closed set of kernels that every computation
goes through, so a step recorded there is complete.  While a recording is on, the cpu
backend object's primitives are shadowed by instance attributes that run the real kernel
and append a `Call`; the optional fast paths (FastConv, FastPool) are hidden so that the
step runs on plain primitives only.  Nothing in the core is changed.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backends import base
from ..core.errors import ArgumentError

FAST_PATHS = base.FAST_PATHS
"""Optional backend methods (base.FastConv, base.FastPool, base.FastAccumulate,
base.FastGrad, base.FastNorm, base.FastAttention, base.FastLinear) hidden while
recording."""

IGNORED = ("to_numpy", "get_rng_state")
"""Primitives that neither make nor change storage inside a step (host reads are checks)."""

RNG_RESETS = ("manual_seed", "set_rng_state")
"""Primitives that move the generator (checkpoint replaying dropout): the C step draws
from one stream in order, so a step that both resets the generator and draws from it
cannot be exported."""

STORAGE_ARGS = frozenset(("x", "a", "b", "cond", "cols", "index", "src", "dst", "g", "w"))
"""The primitives' parameter names that hold storage (xs holds a sequence of them)."""


@dataclass(frozen=True)
class Ref:
    """A storage argument: the index of the value it is in the recording."""

    value: int


@dataclass
class Call:
    """One primitive run: its name, arguments by name (storage as Ref), and the values
    it made (for copy_ / add_: the new version of dst)."""

    name: str
    args: dict[str, Any]
    outputs: tuple[int, ...]


@dataclass
class Recording:
    """Every value the step touched and every primitive call, in order.  A value is an
    array; `origin[v]` says where it came from: ("call", i), ("leaf", name) for the
    parameters, buffers and inputs named up front, or ("const", array) for storage made
    outside the recording (a tensor the loss function closed over, say)."""

    arrays: list[Any] = field(default_factory=list)
    origin: list[tuple[str, Any]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    by_id: dict[int, int] = field(default_factory=dict)
    rng_resets: int = 0

    def add(self, array: Any, origin: tuple[str, Any]) -> int:
        self.arrays.append(array)  # kept alive so that id() stays unique
        self.origin.append(origin)
        self.by_id[id(array)] = len(self.arrays) - 1
        return len(self.arrays) - 1

    def ref(self, array: Any) -> Ref:
        known = self.by_id.get(id(array))
        if known is None:
            known = self.add(array, ("const", np.array(array, copy=True)))
        return Ref(known)


_SIGNATURES = {name: inspect.signature(getattr(base.Backend, name)) for name in base.PRIMITIVES}


@contextmanager
def recording(backend: Any, leaves: dict[str, Any]) -> Iterator[Recording]:
    """Record every primitive `backend` runs inside the block; `leaves` names the storage
    of parameters, buffers and inputs."""
    rec = Recording()
    for name, array in leaves.items():
        rec.add(array, ("leaf", name))
    depth = [0]  # a primitive that calls another (rand -> from_numpy) records only itself

    def wrap(name: str, method: Callable) -> Callable:
        sig = _SIGNATURES[name]

        def recorded(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:
                return method(*args, **kwargs)
            bound = sig.bind(None, *args, **kwargs).arguments
            bound.pop("self")
            depth[0] += 1
            try:
                out = method(*args, **kwargs)
            finally:
                depth[0] -= 1
            if name in IGNORED:
                return out
            if name in RNG_RESETS:
                rec.rng_resets += 1
                return out
            named: dict[str, Any] = {}
            for key, value in bound.items():
                if key in STORAGE_ARGS:
                    named[key] = rec.ref(value)
                elif key == "xs":
                    named[key] = tuple(rec.ref(v) for v in value)
                elif isinstance(value, np.ndarray):  # from_numpy's host array: a snapshot
                    named[key] = np.array(value, copy=True)
                else:
                    named[key] = value
            index = len(rec.calls)
            if name in ("copy_", "add_"):
                made: Sequence[Any] = (bound["dst"],)
            else:
                made = out if isinstance(out, tuple) else (out,)
            outputs = tuple(rec.add(m, ("call", index)) for m in made)
            rec.calls.append(Call(name, named, outputs))
            return out

        return recorded

    shadowed = [name for name in (*base.PRIMITIVES, *FAST_PATHS) if name in vars(backend)]
    if shadowed:
        raise ArgumentError(f"export: the cpu backend already has instance attributes "
                            f"{shadowed}; is another trace running?")
    for name in base.PRIMITIVES:
        setattr(backend, name, wrap(name, getattr(backend, name)))
    for name in FAST_PATHS:
        setattr(backend, name, None)  # fast_path() then takes the plain primitives
    try:
        yield rec
        if rec.rng_resets and any(call.name == "rand" for call in rec.calls):
            raise ArgumentError("export: the step draws random numbers and also resets the "
                                "generator (manual_seed, or checkpoint replaying dropout); the "
                                "C step draws from one stream in order")
    finally:
        for name in (*base.PRIMITIVES, *FAST_PATHS):
            if name in vars(backend):
                delattr(backend, name)
