"""What the profiler records, and where: backend primitives and record_function ranges.

Every op reaches the device through a method of its backend (shrew/backends/base.py), so
while a profile records, the methods of each live backend are replaced on the instance by
timed wrappers, and put back when it stops.  Nothing in the dispatch path changes, so no
profiler costs nothing; ``record_function`` checks one module flag (`_active`).
"""
from __future__ import annotations

import functools
import threading
import time
import traceback
from collections.abc import Callable
from types import FunctionType, TracebackType
from typing import Any, TypeVar

from ..backends.registry import live_backends
from .events import FunctionEvent

F = TypeVar("F", bound=Callable[..., Any])
_active: Collector | None = None  # the recording collector; one at a time, as PyTorch
_NOT_OPS = frozenset(("manual_seed", "get_rng_state", "set_rng_state"))


def _now_us() -> float:
    return time.perf_counter_ns() / 1000.0


def _nbytes(result: Any) -> int:
    """Bytes of storage `result` holds of its own (a view or a host scalar: none)."""
    if isinstance(result, (tuple, list)):
        return sum(_nbytes(r) for r in result)
    shape, dtype = getattr(result, "shape", None), getattr(result, "dtype", None)
    if shape is None or dtype is None or getattr(result, "base", None) is not None:
        return 0
    count = 1
    for n in shape:
        count *= int(n)
    return count * int(getattr(dtype, "itemsize", 0))


def _shapes(args: tuple) -> list[list[int]]:
    # PyTorch lists [] for an argument that is not a tensor
    return [list(a.shape) if hasattr(a, "shape") and hasattr(a, "dtype") else []
            for a in args]


class Collector:
    """The events of one recording, nested per thread by a stack of open events."""

    def __init__(self, record_shapes: bool, profile_memory: bool, with_stack: bool,
                 device_time: bool) -> None:
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.device_time = with_stack, device_time
        self.events: list[FunctionEvent] = []
        self._local = threading.local()
        self._wrapped: list[tuple[Any, list[str]]] = []

    def _stack(self) -> list[FunctionEvent]:
        stack: list[FunctionEvent] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def open(self, name: str, args: tuple = (), user: bool = False) -> FunctionEvent:
        stack = self._stack()
        event = FunctionEvent(id=len(self.events), name=name, thread=threading.get_ident(),
                              start_us=_now_us(), is_user_annotation=user)
        if self.record_shapes:
            event.input_shapes = _shapes(args)
        if self.with_stack:
            event.stack = [f"{f.filename}({f.lineno}): {f.name}"
                           for f in traceback.extract_stack()[-12:-3]][::-1]
        if stack:
            stack[-1].append_cpu_child(event)
        self.events.append(event)
        stack.append(event)
        return event

    def close(self, event: FunctionEvent) -> None:
        event.end_us = _now_us()
        stack = self._stack()
        if stack and stack[-1] is event:
            stack.pop()

    def call(self, backend: Any, primitive: str, method: Callable[..., Any],
             args: tuple, kwargs: dict[str, Any]) -> Any:
        """Run one backend primitive as an event named for its function (unary's "tanh")."""
        name = args[0] if args and isinstance(args[0], str) else primitive
        event = self.open(f"shrew::{name}", args[1:] if name != primitive else args)
        try:
            result = method(*args, **kwargs)
            if self.device_time and backend.device != "cpu":
                start = _now_us()
                _sync(backend)
                event.self_device_time_total = _now_us() - event.start_us
                event.sync_us = _now_us() - start
            if self.profile_memory:
                nbytes = _nbytes(result) - sum(c.own_bytes for c in event.cpu_children)
                event.own_bytes = max(nbytes, 0)
                event.on_device = backend.device != "cpu"
            return result
        finally:
            self.close(event)

    def attach(self) -> None:
        """Wrap the primitives of every live backend (see the module's docstring)."""
        for backend in live_backends():
            members = {n: v for cls in reversed(type(backend).__mro__)
                       for n, v in vars(cls).items()}
            names = [n for n, v in members.items()
                     if isinstance(v, FunctionType) and not n.startswith("_")
                     and n not in _NOT_OPS and n not in vars(backend)]
            for n in names:
                setattr(backend, n, self._timed(backend, n, getattr(backend, n)))
            self._wrapped.append((backend, names))

    def detach(self) -> None:
        for backend, names in self._wrapped:
            for n in names:
                delattr(backend, n)  # the class's method shows through again
        self._wrapped.clear()

    def _timed(self, backend: Any, primitive: str,
               method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def timed(*args: Any, **kwargs: Any) -> Any:
            return self.call(backend, primitive, method, args, kwargs)
        return timed


def _sync(backend: Any) -> None:
    """Wait for the device: a read-back waits for all queued work (in-order queues).  Reads
    the class's methods, so that the wait itself is not recorded."""
    cls = type(backend)
    cls.to_numpy(backend, cls.full(backend, (1,), 0.0, _float32()))


def _float32() -> Any:
    import numpy as np
    return np.dtype(np.float32)


def start(collector: Collector) -> None:
    global _active
    collector.attach()
    _active = collector


def stop(collector: Collector) -> None:
    global _active
    if _active is collector:
        _active = None
    collector.detach()


class record_function:
    """A named range in the profile, as a context manager or a decorator; costs one test
    when no profile records."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self._event: FunctionEvent | None = None
        self._collector: Collector | None = None

    def __enter__(self) -> record_function:
        if _active is not None:
            self._collector = _active
            self._event = _active.open(self.name, user=True)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._collector is not None and self._event is not None:
            self._collector.close(self._event)
        self._event = self._collector = None

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def ranged(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return ranged  # type: ignore[return-value]
