"""Nested checkpoints (dicts, lists, tuples of tensors, numbers, strings, None) as a
table of arrays plus a JSON description of the structure: what shrew.save writes into a
safetensors file's metadata, so that loading needs no pickle."""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .errors import ShrewError
from .tensor import Tensor

FORMAT_KEY = "shrew.checkpoint"  # the metadata entry holding the description
FORMAT = "1"


def encode(obj: Any) -> tuple[dict[str, np.ndarray], str]:
    """(arrays by name, the JSON description) of a nested checkpoint.  A tensor that
    appears several times is stored once and comes back as one tensor."""
    arrays: dict[str, np.ndarray] = {}
    seen: dict[int, str] = {}  # id(tensor or array) -> its array name

    def store(x: Any) -> str:
        if id(x) not in seen:
            seen[id(x)] = name = f"t{len(seen)}"
            arrays[name] = x.numpy() if isinstance(x, Tensor) else np.asarray(x, order="C")
        return seen[id(x)]

    def node(x: Any, path: str) -> Any:
        if x is None or isinstance(x, (bool, str)):
            return x
        if isinstance(x, (int, np.integer)):
            return int(x)
        if isinstance(x, (float, np.floating)):
            return float(x)
        if isinstance(x, Tensor):
            from .nn.parameter import Parameter
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
        raise ShrewError(f"save: cannot save a {type(x).__name__} at {path or 'the top'}: a "
                         f"checkpoint holds tensors, numpy arrays, numbers, strings, None and "
                         f"dicts, lists and tuples of them")

    return arrays, json.dumps(node(obj, ""))


def decode(description: str, tensor: Callable[[str], Tensor],
           ndarray: Callable[[str], np.ndarray],
           parameter: Callable[[Tensor, bool], Tensor]) -> Any:
    """Rebuild the structure from its JSON description: `tensor(name)` and
    `ndarray(name)` give a stored array as a Tensor or as a numpy array,
    `parameter(t, requires_grad)` makes an nn.Parameter."""
    built: dict[str, Any] = {}  # one object per stored name, so sharing survives

    def stored(name: str, make: Callable[[], Any]) -> Any:
        if name not in built:
            built[name] = make()
        return built[name]

    def node(x: Any) -> Any:
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if not isinstance(x, dict) or len(x) not in (1, 3):
            raise ShrewError(f"load: the checkpoint's structure holds an unknown entry {x!r:.80}")
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
        raise ShrewError(f"load: the checkpoint's structure holds an unknown entry {x!r:.80}")

    try:
        return node(json.loads(description))
    except ShrewError:
        raise
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise ShrewError(f"load: the checkpoint's structure description is malformed "
                         f"({type(exc).__name__}: {exc})") from None

