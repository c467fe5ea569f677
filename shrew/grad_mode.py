"""Whether operations are recorded for backward: a per-thread switch."""
from __future__ import annotations

import functools
import threading

_state = threading.local()


def is_grad_enabled() -> bool:
    return getattr(_state, "enabled", True)


def set_grad_enabled(enabled: bool) -> None:
    _state.enabled = enabled


class _GradMode:
    """Context manager (and decorator) that sets grad recording for this thread only."""

    enabled = True

    def __enter__(self):
        self._prev = is_grad_enabled()
        _state.enabled = self.enabled
        return self

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Nothing inside records a graph: results never require grad."""

    enabled = False


class enable_grad(_GradMode):
    """Recording on, inside an outer no_grad (used by create_graph and checkpoint)."""

    enabled = True
