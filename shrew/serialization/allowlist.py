"""torch.serialization's allowlist: the classes and functions a file may name.

shrew.save writes a whole nn.Module (`shrew.save(model, f)`) as its class's name plus its
attributes; shrew.load rebuilds it only when that class is allowed: shrew's own modules
and functions always are, a program's own classes (`RNNModel`) once the program lists
them here, as PyTorch's `torch.load(weights_only=True)` requires.  Rebuilding an allowed
class creates the object without calling its __init__ and sets its attributes: nothing
named by a file is ever imported or called, whatever `weights_only` says."""
from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from types import FunctionType, TracebackType
from typing import Any

from ..core.errors import RefusedGlobalError, ShrewTypeError
from ..nn.modules.module import Module

_allowed: dict[str, Any] = {}  # "module:qualname" -> the class or function it names


def global_name(obj: Any) -> str:
    """The name under which a file refers to the class or function `obj`."""
    return f"{obj.__module__}:{obj.__qualname__}"


def _entries(globals_: Iterable[Any]) -> dict[str, Any]:
    """{name: object} of an allowlist: objects, or (object, "module.qualname") pairs."""
    entries: dict[str, Any] = {}
    for entry in globals_:
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
            obj, name = entry
            module, _, qualname = name.rpartition(".")
            entries[f"{module}:{qualname}"] = obj
        elif hasattr(entry, "__module__") and hasattr(entry, "__qualname__"):
            entries[global_name(entry)] = entry
        else:
            raise ShrewTypeError(f"add_safe_globals: {entry!r:.60} is not a class or function "
                                 f"(nor an (object, 'module.name') pair)")
    return entries


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow shrew.load to rebuild these classes (and refer to these functions)."""
    _allowed.update(_entries(safe_globals))


def get_safe_globals() -> list[Any]:
    """The classes and functions add_safe_globals allowed."""
    return list(_allowed.values())


def clear_safe_globals() -> None:
    """Forget every class and function add_safe_globals allowed."""
    _allowed.clear()


class safe_globals:
    """`with safe_globals([...]):` allows these classes and functions inside the block."""

    def __init__(self, safe_globals: list[Any]) -> None:
        self._entries = _entries(safe_globals)
        self._before: dict[str, Any] = {}

    def __enter__(self) -> None:
        self._before = dict(_allowed)
        _allowed.update(self._entries)

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        _allowed.clear()
        _allowed.update(self._before)


def allowed_class(name: str) -> type | None:
    """The class add_safe_globals allowed under `name` ("module:qualname"), or None: what
    a .pt file's pickle may make an instance of (never calling it)."""
    found = _allowed.get(name)
    return found if isinstance(found, type) else None


# The modules that held shrew's layers and functions before nn/ took PyTorch's layout, and
# those that hold them now: a file saved then names, say, shrew.nn.layers:Linear.
_FORMER_HOMES: dict[str, tuple[str, ...]] = {
    **{f"shrew.nn.{name}": (f"shrew.nn.modules.{name}",)
       for name in ("module", "container", "conv", "activation", "loss", "rnn", "transformer")},
    "shrew.nn.attention": ("shrew.nn.modules.activation", "shrew.nn.modules.transformer"),
    "shrew.nn.layers": tuple(f"shrew.nn.modules.{name}" for name in (
        "linear", "sparse", "dropout", "pixelshuffle", "upsampling", "flatten")),
    "shrew.nn.normalization": tuple(f"shrew.nn.modules.{name}" for name in (
        "normalization", "batchnorm", "instancenorm")),
    "shrew.nn.pooling": ("shrew.nn.modules.pooling", "shrew.nn.modules.fold"),
    "shrew.nn.functional.layers": tuple(f"shrew.nn.functional.{name}" for name in (
        "linear", "conv", "dropout", "normalization", "batchnorm")),
    "shrew.nn.functional.normalization": ("shrew.nn.functional.instancenorm",
                                          "shrew.nn.functional.distance"),
    "shrew.nn.functional.loss": ("shrew.nn.functional.distance",),
    "shrew.nn.functional.pooling": ("shrew.nn.functional.fold",),
    "shrew.nn.functional.vision": tuple(f"shrew.nn.functional.{name}" for name in (
        "padding", "pixelshuffle", "upsampling")),
}


def _defined_as(module_name: str, qualname: str) -> Any:
    """The object defined as `qualname` in the already imported module `module_name`, or
    None (so a name cannot reach, say, `os.system` through a module's imports).  Read from
    each namespace's __dict__, not with getattr: a package's __getattr__ may import a
    submodule (shrew.backends.opencl imports pyopencl), and nothing a file names may be
    imported."""
    found: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        namespace = getattr(found, "__dict__", None)
        found = namespace.get(part) if isinstance(namespace, Mapping) else None
    if found is None or not hasattr(found, "__qualname__"):
        return None
    return found if global_name(found) == f"{module_name}:{qualname}" else None


def _shrew_own(name: str) -> Any:
    """The shrew nn.Module class or shrew function `name` names, or None: looked up only
    among modules already imported, under that name or, for a name written before nn/ was
    reorganised, in the modules that now hold what its module held."""
    module_name, _, qualname = name.partition(":")
    if module_name != "shrew" and not module_name.startswith("shrew."):
        return None
    homes = (module_name, *_FORMER_HOMES.get(module_name, ()))
    found = next((f for f in (_defined_as(home, qualname) for home in homes) if f is not None),
                 None)
    is_module_class = isinstance(found, type) and issubclass(found, Module)
    return found if is_module_class or isinstance(found, FunctionType) else None


def resolve(name: str, weights_only: bool | None) -> Any:
    """The class or function a file names: allowlisted, or shrew's own; else an error
    that says how to allow it."""
    found = _allowed.get(name)
    if found is None:
        found = _shrew_own(name)
    if found is None:
        dotted = name.replace(":", ".")
        beyond = (" even with weights_only=False: shrew never imports or runs code named by "
                  "a file" if weights_only is False else "")
        raise RefusedGlobalError(
            f"load: the checkpoint refers to {dotted}, which is not allowed{beyond}; if you "
            f"trust it, allow it with shrew.serialization.add_safe_globals"
            f"([{dotted.rpartition('.')[2]}]) or `with shrew.serialization."
            f"safe_globals([...]):`")
    return found
