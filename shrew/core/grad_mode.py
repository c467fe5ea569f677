"""Whether operations are recorded for backward: a per-thread switch.

Every mode is a context manager and a decorator, with or without parentheses
(``@no_grad`` and ``@no_grad()``), as in PyTorch."""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, Literal, TypeVar, cast

_F = TypeVar("_F", bound=Callable[..., Any])
_Mode = TypeVar("_Mode", bound="_GradMode")


class _ThreadState(threading.local):
    """Each thread's switches; a new thread starts from these class defaults (read as
    plain attributes: every op asks)."""

    enabled = True
    inference = False


_state = _ThreadState()


def is_grad_enabled() -> bool:
    """Whether operations in this thread record a graph (no_grad turns it off)."""
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside inference_mode()."""
    return _state.inference


class _GradMode:
    """Context manager (and decorator) that sets grad recording for this thread only."""

    enabled = True
    inference = False  # the inference-mode flag the block runs with
    _prev: tuple[bool, bool]

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs and cls._bare:
            return cls()(args[0])  # @no_grad without parentheses
        return super().__new__(cls)

    _bare = True  # whether the mode takes no argument (so a lone callable is decorated)

    def __enter__(self: _Mode) -> _Mode:
        self._prev = (is_grad_enabled(), is_inference_mode_enabled())
        _state.enabled, _state.inference = self.enabled, self.inference
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        _state.enabled, _state.inference = self._prev
        return False

    def clone(self: _Mode) -> _Mode:
        return type(self)()

    def __call__(self, fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)
        return cast(_F, wrapper)


class no_grad(_GradMode):
    """Nothing inside records a graph: results never require grad."""

    enabled = False


class enable_grad(_GradMode):
    """Recording on, inside an outer no_grad (used by create_graph and checkpoint)."""

    enabled = True


class inference_mode(_GradMode):
    """no_grad for inference; ``mode=False`` turns recording on (as PyTorch's).  shrew
    has no separate inference tensors: results are ordinary tensors that do not require
    grad."""

    _mode: bool

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)  # @inference_mode without parentheses
        self = object.__new__(cls)
        self._mode = bool(mode)
        return self

    def __init__(self, mode: Any = True) -> None:
        pass

    def __enter__(self) -> inference_mode:
        self._prev = (is_grad_enabled(), is_inference_mode_enabled())
        _state.enabled, _state.inference = not self._mode, self._mode
        return self

    def clone(self) -> inference_mode:
        return inference_mode(self._mode)


class set_grad_enabled(_GradMode):
    """Switch recording on or off for this thread: at once when called, until the end of
    the block when used as a context manager, or for each call of a decorated function."""

    _bare = False

    def __init__(self, mode: bool) -> None:
        self.enabled = bool(mode)
        self.inference = is_inference_mode_enabled()
        self._prev = (is_grad_enabled(), self.inference)
        _state.enabled = self.enabled

    def __enter__(self) -> set_grad_enabled:
        return self

    def __call__(self, fn: _F) -> _F:
        _state.enabled = self._prev[0]  # decorating sets nothing now
        return super().__call__(fn)

    def clone(self) -> set_grad_enabled:
        return set_grad_enabled(self.enabled)  # takes effect now; its exit restores
