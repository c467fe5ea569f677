"""``shrew.jit``: the TorchScript names that model code calls to stay scriptable.  shrew runs
Python only and never scripts: ``is_scripting()`` and ``is_tracing()`` are False, the
decorators ``ignore``, ``unused`` and ``export`` return the function they decorate, and
``Final`` is ``typing.Final``.  Compiling to TorchScript (``script``, ``trace``) and its
files (``save``, ``load``) raise UnsupportedError: run the module as it is, or write a
training step as C with ``shrew.export``."""

from collections.abc import Callable
from typing import Any, Final, TypeVar  # Final: re-exported under torch.jit's name

from ..core.errors import UnsupportedError

from . import annotations  # noqa: E402  (torch.jit.annotations: typing's names)

__all__ = ["Final", "ignore", "unused", "export", "is_scripting", "is_tracing", "script",
           "trace", "save", "load", "annotate", "annotations", "TracerWarning"]

F = TypeVar("F", bound=Callable[..., Any])
_INSTEAD = ("shrew has no TorchScript; run the module as it is (shrew runs Python), or write "
            "a training step as C with shrew.export.trace_training")


class TracerWarning(Warning):
    """torch.jit's warning about code a trace cannot capture (programs filter it; shrew
    never traces, so never issues it)."""


def annotate(the_type: Any, the_value: Any) -> Any:
    """`the_value` itself: the type is TorchScript's hint, and nothing is scripted."""
    return the_value


def is_scripting() -> bool:
    """False: shrew code is never being compiled by TorchScript."""
    return False


def is_tracing() -> bool:
    """False: shrew code is never being traced by torch.jit.trace."""
    return False


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``@ignore`` and ``@ignore(drop=True)``: the function itself (nothing is scripted)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: F) -> F:
    """The function itself."""
    return fn


def export(fn: F) -> F:
    """The function itself."""
    return fn


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """Always raises UnsupportedError: shrew does not compile to TorchScript."""
    raise UnsupportedError(f"jit.script: {_INSTEAD}")


def trace(func: Any, example_inputs: Any = None, optimize: Any = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-05, strict: bool = True,
          example_kwarg_inputs: Any = None) -> Any:
    """Always raises UnsupportedError: shrew does not compile to TorchScript."""
    raise UnsupportedError(f"jit.trace: {_INSTEAD}")


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Always raises UnsupportedError: shrew writes no TorchScript archives."""
    raise UnsupportedError("jit.save: shrew has no TorchScript archives; save the state dict "
                           "with shrew.save(model.state_dict(), path)")


def load(f: Any, map_location: Any = None, _extra_files: Any = None,
         _restore_shapes: bool = False) -> Any:
    """Always raises UnsupportedError: shrew reads no TorchScript archives."""
    raise UnsupportedError("jit.load: shrew cannot run TorchScript archives; load a state dict "
                           "with shrew.load and build the module in Python")

