"""Whether operations are recorded for backward: a per-thread switch."""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, Literal, TypeVar, cast

_F = TypeVar("_F", bound=Callable[..., Any])
_Mode = TypeVar("_Mode", bound="_GradMode")

_state = threading.local()


def is_grad_enabled() -> bool:
    """Whether operations in this thread record a graph (no_grad turns it off)."""
    return getattr(_state, "enabled", True)


def set_grad_enabled(enabled: bool) -> None:
    """Switch graph recording on or off for this thread."""
    _state.enabled = enabled


class _GradMode:
    """Context manager (and decorator) that sets grad recording for this thread only."""

    enabled = True
    _prev: bool

    def __enter__(self: _Mode) -> _Mode:
        self._prev = is_grad_enabled()
        _state.enabled = self.enabled
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        _state.enabled = self._prev
        return False

    def __call__(self, fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with type(self)():
                return fn(*args, **kwargs)
        return cast(_F, wrapper)


class no_grad(_GradMode):
    """Nothing inside records a graph: results never require grad."""

    enabled = False


class enable_grad(_GradMode):
    """Recording on, inside an outer no_grad (used by create_graph and checkpoint)."""

    enabled = True
