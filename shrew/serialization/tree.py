"""Nested checkpoints (dicts, lists, tuples, sets of tensors, numbers, strings, None, whole
nn.Modules, and plain objects of a program's own class: a config dataclass) as a table of
arrays plus a JSON description of the structure: what shrew.save writes into a safetensors
file's metadata, so that loading needs no pickle.

A module (or a plain object) is described by its class's name and its attributes; a
function an attribute holds (an activation) by its name.  Loading looks those names up in
shrew.serialization's allowlist: nothing a file names is imported or called."""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from types import FunctionType
from typing import Any

import numpy as np

from ..core.errors import LoadError, ShrewError, ShrewTypeError
from .._tensor import Tensor
from .allowlist import global_name
from .torch_pickle import plain_object_class
from ..nn.modules.module import Module
from ..nn.parameter import Parameter

FORMAT_KEY = "shrew.checkpoint"  # the metadata entry holding the description
FORMAT = "1"


def encode(obj: Any) -> tuple[dict[str, np.ndarray], str]:
    """(arrays by name, the JSON description) of a nested checkpoint.  A tensor that
    appears several times is stored once and comes back as one tensor."""
    arrays: dict[str, np.ndarray] = {}
    seen: dict[int, str] = {}  # id(tensor or array) -> its array name
    modules: dict[int, str] = {}  # id(module) -> its key, so sharing (and cycles) survive

    def store(x: Any) -> str:
        if id(x) not in seen:
            seen[id(x)] = name = f"t{len(seen)}"
            arrays[name] = x._host() if isinstance(x, Tensor) else np.asarray(x, order="C")
        return seen[id(x)]

    def module(x: Any, path: str) -> Any:
        if id(x) in modules:
            return {"ref": modules[id(x)]}
        modules[id(x)] = key = f"m{len(modules)}"
        # (a class's _not_saved: what it makes again when needed, as an OptimizedModule
        # its captured programs)
        skipped = getattr(type(x), "_not_saved", ())
        state = {k: v for k, v in vars(x).items() if k not in skipped}
        return {"object": global_name(type(x)), "id": key, "state": node(state, path)}

    def node(x: Any, path: str) -> Any:
        if x is None or isinstance(x, (bool, str)):
            return x
        if isinstance(x, (int, np.integer)):
            return int(x)
        if isinstance(x, (float, np.floating)):
            return float(x)
        if isinstance(x, Tensor):
            return {"tensor": store(x), "requires_grad": x.requires_grad,
                    "parameter": isinstance(x, Parameter)}
        if isinstance(x, np.ndarray):
            return {"ndarray": store(x)}
        if isinstance(x, Mapping):
            return {"dict": [[node(k, f"{path} key {k!r}"), node(v, f"{path}[{k!r}]")]
                             for k, v in x.items()]}
        if isinstance(x, tuple):
            return {"tuple": [node(v, f"{path}[{i}]") for i, v in enumerate(x)]}
        if isinstance(x, list):
            return {"list": [node(v, f"{path}[{i}]") for i, v in enumerate(x)]}
        if isinstance(x, (set, frozenset)):
            return {"set": [node(v, f"{path} item") for v in x]}
        if isinstance(x, Module) or plain_object_class(x) is not None:
            return module(x, path)
        if isinstance(x, (FunctionType, type)) and "<" not in x.__qualname__:
            # by name (a lambda or a local function has none a load could look up)
            return {"global": global_name(x)}
        raise ShrewTypeError(f"save: cannot save a {type(x).__name__} at {path or 'the top'}: a "
                             f"checkpoint holds tensors, numpy arrays, numbers, strings, None, "
                             f"dicts, lists, tuples and sets of them, nn.Modules, and plain "
                             f"objects of a class of the program's own (a dataclass)")

    return arrays, json.dumps(node(obj, ""))


def decode(description: str, tensor: Callable[[str], Tensor],
           ndarray: Callable[[str], np.ndarray],
           parameter: Callable[[Tensor, bool], Tensor],
           resolve: Callable[[str], Any]) -> Any:
    """Rebuild the structure from its JSON description: `tensor(name)` and
    `ndarray(name)` give a stored array as a Tensor or as a numpy array,
    `parameter(t, requires_grad)` makes an nn.Parameter, `resolve(name)` gives the
    allowed class or function a name stands for (or raises)."""
    built: dict[str, Any] = {}  # one object per stored name, so sharing survives
    modules: dict[str, Any] = {}

    def module(x: dict[str, Any]) -> Any:
        cls = resolve(x["object"])
        is_module = isinstance(cls, type) and issubclass(cls, Module)
        if not is_module and not (isinstance(cls, type) and cls.__new__ is object.__new__):
            raise LoadError(f"load: the checkpoint rebuilds a {x['object']}, which is not "
                            f"an nn.Module class or a class of plain objects")
        # as pickle does: a bare instance (its __init__ not called), then its attributes
        modules[str(x["id"])] = obj = cls.__new__(cls) if is_module else object.__new__(cls)
        state = node(x["state"])
        if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
            raise LoadError(f"load: the checkpoint's {x['object']} has malformed attributes")
        obj.__dict__.update(state)
        return obj

    def stored(name: str, make: Callable[[], Any]) -> Any:
        if name not in built:
            built[name] = make()
        return built[name]

    def node(x: Any) -> Any:
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if not isinstance(x, dict) or len(x) not in (1, 3):
            raise LoadError(f"load: the checkpoint's structure holds an unknown entry {x!r:.80}")
        if "tensor" in x:
            def make() -> Any:
                t = tensor(x["tensor"])
                if x.get("parameter"):
                    return parameter(t, bool(x.get("requires_grad", True)))
                return t.requires_grad_() if x.get("requires_grad") else t
            return stored(x["tensor"], make)
        if "ndarray" in x:
            return stored(x["ndarray"], lambda: ndarray(x["ndarray"]))
        if "dict" in x:
            return {node(k): node(v) for k, v in x["dict"]}
        if "tuple" in x:
            return tuple(node(v) for v in x["tuple"])
        if "list" in x:
            return [node(v) for v in x["list"]]
        if "set" in x:
            return {node(v) for v in x["set"]}
        if "object" in x:
            return module(x)
        if "ref" in x:
            return modules[str(x["ref"])]
        if "global" in x:
            return resolve(str(x["global"]))
        raise LoadError(f"load: the checkpoint's structure holds an unknown entry {x!r:.80}")

    try:
        return node(json.loads(description))
    except ShrewError:
        raise
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise LoadError(f"load: the checkpoint's structure description is malformed "
                        f"({type(exc).__name__}: {exc})") from None

