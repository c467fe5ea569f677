"""shrew.save / shrew.load: files that never run code when loaded.

- A {name: Tensor} state dict is saved as a plain safetensors file (readable by
  safetensors' own loaders and by PyTorch through them).
- Any other checkpoint (nested dicts, lists and tuples of tensors, numpy arrays,
  numbers, strings, None: model, optimizer and scheduler state, the epoch; a whole
  nn.Module) is saved as a safetensors file of its arrays, with a JSON description of
  the structure in the file's metadata (tree.py).  A module comes back only if its class
  is allowed (allowlist.py).
- A path ending in .pt / .pth (or format="torch") is written in PyTorch's own zip format,
  which torch.load(weights_only=True) reads (torch_write.py).
- shrew.load also reads PyTorch's .pt / .pth files (torch.save's zip format) through a
  restricted unpickler that can only rebuild tensors and plain containers (torch_zip.py)."""
from __future__ import annotations

import io
import json
import os
import warnings
from collections.abc import Mapping
from typing import IO, Any

import ml_dtypes
import numpy as np
import safetensors
import safetensors.numpy
from safetensors import SafetensorError

from . import allowlist, torch_write, tree
from ..core.errors import (DTypeError, LoadError, ShrewError, ShrewValueError,
                           UnsupportedError)
from ..ops.creation import from_numpy
from .errors import in_file
from .formats import is_pickle, is_safetensors, is_zip
from .torch_zip import read_torch_zip
from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.parameter import Parameter

PathOrFile = str | os.PathLike[str] | IO[bytes]


def _is_state_dict(obj: Any) -> bool:
    return (isinstance(obj, Mapping) and len(obj) > 0
            and all(isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items()))


TORCH_SUFFIXES = (".pt", ".pth")  # a path so named is written in PyTorch's own format
FORMATS = ("safetensors", "torch")


def _writes_torch(f: PathOrFile, format: str | None) -> bool:
    """Whether save writes PyTorch's format: as `format` says, else when the path (or the
    file object's name) ends in .pt or .pth."""
    if format is not None:
        if format not in FORMATS:
            raise ShrewValueError(f"save: format must be one of {FORMATS} or None (by the "
                                  f"file's suffix), got {format!r}")
        return format == "torch"
    name = getattr(f, "name", None) if hasattr(f, "write") else os.fsdecode(f)
    return isinstance(name, str) and name.lower().endswith(TORCH_SUFFIXES)


def _holds_module(obj: Any) -> bool:
    """Whether `obj` is an nn.Module or a dict, list or tuple holding one (at any depth)."""
    if isinstance(obj, Module):
        return True
    if isinstance(obj, Mapping):
        return any(_holds_module(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_holds_module(v) for v in obj)
    return False


def _name_of(f: PathOrFile) -> str:
    return repr(getattr(f, "name", "the file object") if hasattr(f, "write") else os.fsdecode(f))


def save(state_dict: Any, path: PathOrFile, pickle_module: Any = None, pickle_protocol: Any = None,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False,
         *, format: str | None = None) -> None:
    """Write `state_dict` (torch.save's `obj`: any checkpoint) to `path` (torch.save's `f`:
    a path or a binary file object), as torch.save; the first two parameters keep the
    names shrew has always given them (its API promises them), the others are torch's.

    Where `path` ends in .pt or .pth (a path, or an open file's name), or with
    format="torch": PyTorch's own zip format, which `torch.load(f, weights_only=True)`
    reads, for tensors, state dicts, optimizer state dicts and checkpoints of those
    (dicts, lists, tuples, numbers, strings, None).  A whole nn.Module (torch.save(model,
    "model.pth")), which PyTorch's format holds only as a pickle of its code, is written in
    shrew's own format under that name instead, with a warning (shrew.load reads it); with
    format="torch" it is refused.
    Otherwise (format="safetensors", the default for every other name and for a file
    object without one): safetensors, the safe format whose loading never unpickles.  A
    {name: Tensor} mapping such as module.state_dict() becomes a plain .safetensors file,
    anything else a checkpoint (safetensors with the structure in its metadata), whole
    modules included.  pickle_module and pickle_protocol are accepted and ignored (a .pt's
    pickle is always protocol 2, which every torch.load reads); _disable_byteorder_record
    leaves out the .pt's byteorder entry, as torch.save."""
    to_torch = _writes_torch(path, format)
    if to_torch and format is None and _holds_module(state_dict):
        warnings.warn(f"save: {_name_of(path)} holds a whole nn.Module, which PyTorch's "
                      f"format keeps only as a pickle of its code: it is written in shrew's "
                      f"own format instead (safetensors with the module's structure), which "
                      f"shrew.load reads and torch.load cannot; save the state_dict() for a "
                      f"file PyTorch reads", UserWarning, stacklevel=2)
        to_torch = False
    if to_torch:
        if not _use_new_zipfile_serialization:
            raise UnsupportedError("save: _use_new_zipfile_serialization=False (PyTorch's "
                                   "legacy format, a bare pickle) is not supported; the zip "
                                   "format every torch.load since 1.6 reads is written")
        data = torch_write.dumps(state_dict, torch_write.archive_name(path),
                                 byteorder=not _disable_byteorder_record)
    elif _is_state_dict(state_dict):
        arrays = {name: t.numpy() for name, t in state_dict.items()}
        data = safetensors.numpy.save(arrays)
    else:
        arrays, description = tree.encode(state_dict)
        metadata = {tree.FORMAT_KEY: description, "format": f"shrew-{tree.FORMAT}"}
        data = safetensors.numpy.save(arrays, metadata=metadata)
    if hasattr(path, "write"):
        path.write(data)
    else:
        with open(os.fspath(path), "wb") as out:
            out.write(data)


def _device_of(device: Any, map_location: Any) -> str:
    chosen = device if map_location is None else map_location
    if isinstance(chosen, Mapping) or callable(chosen):
        raise UnsupportedError("load: map_location must name one device (a str or a device); "
                               "mappings and functions are not supported")
    return str(chosen)


def load(path: PathOrFile, device: Any = "cpu", map_location: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Read what shrew.save wrote (a {name: Tensor} dict or a nested checkpoint), any
    safetensors file, or a PyTorch .pt / .pth zip file of tensors and state dicts, from
    `path` (torch.load's `f`: a path or a binary file object), with the tensors on
    `device` (or `map_location`, PyTorch's name for it).  Nothing in a file is ever run:
    a pickle in a PyTorch file may only rebuild tensors and plain containers, and a bare
    pickle is refused.  Bad files raise ShrewError.

    `weights_only` is accepted, and shrew loads the same way whatever it says: tensors,
    containers, and nn.Modules of allowed classes (shrew.serialization); with False, a
    file naming anything else is still refused, and the error says so."""
    device = _device_of(device, map_location)
    if hasattr(path, "read"):
        where, data = "the file object", path.read()
    else:
        where = repr(os.fspath(path))
        with open(os.fspath(path), "rb") as src:
            data = src.read()
    if is_zip(data):
        return read_torch_zip(io.BytesIO(data), len(data), where, device, weights_only)
    if is_pickle(data) and not is_safetensors(data):
        raise LoadError(f"load: {where} is not a valid safetensors file or PyTorch zip file: "
                        f"it is a bare pickle (PyTorch's legacy format, or pickle.dump), "
                        f"which shrew never loads because unpickling can run code")
    return _read_safetensors(data, where, device, weights_only)


# safetensors' dtype names; numpy's loader lacks BF16, which ml_dtypes gives numpy
_SAFETENSORS_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16,
    "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8,
    "BOOL": np.bool_, "U64": np.uint64, "U32": np.uint32, "U16": np.uint16,
    "C64": np.complex64,
}


def _arrays(data: bytes) -> dict[str, np.ndarray]:
    """{name: array} of a safetensors file's bytes (KeyError for a dtype numpy lacks)."""
    return {name: np.frombuffer(view["data"], dtype=_SAFETENSORS_DTYPES[view["dtype"]])
            .reshape(view["shape"]) for name, view in safetensors.deserialize(data)}


def _read_safetensors(data: bytes, where: str, device: str, weights_only: bool | None) -> Any:
    try:
        arrays = _arrays(data)
        metadata = _metadata(data)
    except SafetensorError as exc:
        raise LoadError(f"load: {where} is not a valid safetensors file ({exc})") from None
    except (TypeError, KeyError) as exc:  # numpy has no such dtype (bfloat16, float8)
        raise DTypeError(f"load: {where} holds a dtype shrew does not support ({exc})") from None

    def tensor(name: str) -> Tensor:
        try:
            return from_numpy(arrays[name], device=device)
        except DTypeError as exc:
            raise DTypeError(f"load: tensor {name!r} in {where}: {exc}") from None
        except KeyError:
            raise LoadError(f"load: {where}: the structure names a tensor {name!r} the file "
                            f"lacks") from None

    description = (metadata or {}).get(tree.FORMAT_KEY)
    if description is None:
        return {name: tensor(name) for name in arrays}

    def ndarray(name: str) -> np.ndarray:
        if name not in arrays:
            raise LoadError(f"load: {where}: the structure names an array {name!r} the file "
                            f"lacks")
        return arrays[name]

    def parameter(t: Tensor, requires_grad: bool) -> Tensor:
        return Parameter(t, requires_grad=requires_grad)

    try:
        return tree.decode(description, tensor, ndarray, parameter,
                           lambda name: allowlist.resolve(name, weights_only))
    except ShrewError as exc:
        raise in_file(exc, where) from None


def _metadata(data: bytes) -> dict[str, str] | None:
    """The __metadata__ of safetensors bytes already validated by safetensors itself."""
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + size])
    return header.get("__metadata__")
