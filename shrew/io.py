"""save / load of state dicts in the safetensors format: plain arrays and a JSON header,
so loading a file never runs code (no pickle)."""
from __future__ import annotations

import os
from collections.abc import Mapping

import safetensors.numpy
from safetensors import SafetensorError

from .errors import DTypeError, ShrewError
from .ops.creation import from_numpy
from .tensor import Tensor


def save(state_dict: Mapping[str, Tensor], path: str | os.PathLike[str]) -> None:
    """Write a {name: Tensor} mapping (e.g. module.state_dict()) to a .safetensors file."""
    arrays = {}
    for name, t in state_dict.items():
        if not isinstance(name, str) or not isinstance(t, Tensor):
            raise ShrewError(f"save: state_dict must map str names to Tensors, got "
                             f"{name!r}: {type(t).__name__}")
        arrays[name] = t.numpy()
    safetensors.numpy.save_file(arrays, os.fspath(path))


def load(path: str | os.PathLike[str], device: str = "cpu") -> dict[str, Tensor]:
    """Read a .safetensors file into {name: Tensor} on `device`.  A file that is not valid
    safetensors raises ShrewError."""
    try:
        arrays = safetensors.numpy.load_file(os.fspath(path))
    except SafetensorError as exc:
        raise ShrewError(f"load: {os.fspath(path)!r} is not a valid safetensors file "
                         f"({exc})") from None
    except TypeError as exc:  # numpy has no such dtype (bfloat16, float8)
        raise DTypeError(f"load: {os.fspath(path)!r} holds a dtype shrew does not support "
                         f"({exc})") from None
    out = {}
    for name, a in arrays.items():
        try:
            out[name] = from_numpy(a, device=device)
        except DTypeError as exc:
            raise DTypeError(f"load: tensor {name!r} in {os.fspath(path)!r}: {exc}") from None
    return out
