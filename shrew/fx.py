"""torch.fx, for what programs call outside tracing: shrew runs eagerly and has no graph
tracer, so wrap (which marks a function to stay a call in a traced graph) returns its
argument, as torch.fx.wrap does for a program that is never traced."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

_F = TypeVar("_F", bound=Callable | str)


def wrap(fn_or_name: _F) -> _F:
    """The function (or its name) unchanged."""
    return fn_or_name


__all__ = ["wrap"]
