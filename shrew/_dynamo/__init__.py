"""``torch._dynamo`` as programs use it: ``reset``, ``explain``, ``disable``, ``config``
(its recompile limit), the shape marks, and ``optimize``, over shrew.compile.

shrew captures backend primitives, not Python bytecode, so a few of dynamo's controls have
nothing to steer here; they are accepted and say so (docs/compiling.md): marking a
dimension dynamic (shrew specialises every shape, a new size is a recompile) and letting a
function into the graph (every function's primitives are captured already).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..compiler import allow_in_graph, compile, disable, explain, is_compiling, reset
from . import config

__all__ = ["config", "reset", "explain", "disable", "is_compiling", "optimize",
           "allow_in_graph", "mark_dynamic", "maybe_mark_dynamic", "mark_static"]


def optimize(backend: Any = "inductor", *, nopython: bool = False, dynamic: bool | None = None,
             disable: bool = False, **kwargs: Any) -> Callable[[Any], Any]:
    """The decorator of dynamo's first interface: compile(fn, fullgraph=nopython)."""
    return lambda fn: compile(fn, fullgraph=nopython, dynamic=dynamic, disable=disable)


def mark_dynamic(t: Any, index: int | list[int], *, min: int | None = None,  # noqa: A002
                 max: int | None = None, **kwargs: Any) -> None:  # noqa: A002
    """Accepted: shrew specialises every shape, and each new size of a dimension is a
    recompile (bounded by config.recompile_limit)."""
    _check_dims("mark_dynamic", t, index)


def maybe_mark_dynamic(t: Any, index: int | list[int]) -> None:
    """As mark_dynamic."""
    _check_dims("maybe_mark_dynamic", t, index)


def mark_static(t: Any, index: int | list[int] | None = None) -> None:
    """Accepted: every dimension is static in shrew."""
    if index is not None and hasattr(t, "shape"):
        _check_dims("mark_static", t, index)


def _check_dims(name: str, t: Any, index: int | list[int]) -> None:
    from ..core.errors import ShrewIndexError
    for i in [index] if isinstance(index, int) else index:
        if not -t.dim() <= i < t.dim():
            raise ShrewIndexError(f"{name}: dimension {i} is out of range for a tensor of "
                                  f"{t.dim()} dimensions")
