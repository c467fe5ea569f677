"""``shrew.compile`` and ``shrew.compiler``: PyTorch's graph compiler entry points.  shrew
runs eagerly, so compiling changes nothing: ``compile(model)`` returns the model (or
function) itself, which computes what the compiled one would, and ``is_compiling()`` is
False.  To fuse a training step into one C program, use ``shrew.export``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["compile", "disable", "is_compiling", "reset"]


def compile(model: Callable[..., Any] | None = None, *,  # noqa: A001  (torch's name)
            fullgraph: bool = False, dynamic: bool | None = None,
            backend: str | Callable[..., Any] | None = None, mode: str | None = None,
            options: dict[str, Any] | None = None, name: str | None = None,
            disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None) -> Any:
    """`model` itself (shrew runs eagerly); without `model`, a decorator that returns the
    function it decorates."""
    if model is None:
        return lambda fn: fn
    return model


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True, *,
            reason: str | None = None) -> Any:
    """`fn` itself (nothing is compiled to begin with); without `fn`, a decorator."""
    return (lambda f: f) if fn is None else fn


def is_compiling() -> bool:
    """False: shrew code is never being compiled."""
    return False


def reset() -> None:
    """Nothing to reset: shrew keeps no compiled code."""
