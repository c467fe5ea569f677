"""Reading PyTorch's .pt / .pth files (torch.save's zip format) without torch and
without running their pickle: a restricted unpickler that can only rebuild tensors,
parameters and plain containers, like torch.load(weights_only=True).

A torch.save zip holds `<name>/data.pkl` (the pickled object, whose tensors point at
storages by key) and `<name>/data/<key>` (each storage's raw bytes)."""
from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any

import ml_dtypes
import numpy as np

from ..core.errors import DTypeError, ShrewError
from ..ops.creation import from_numpy
from .._tensor import Tensor
from ..nn.parameter import Parameter

# torch's typed storage classes, as pickles name them, and the element type of each
_STORAGES = {
    "DoubleStorage": np.float64, "FloatStorage": np.float32, "HalfStorage": np.float16,
    "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
    "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
    "BFloat16Storage": ml_dtypes.bfloat16, "ComplexFloatStorage": np.complex64,
    "ComplexDoubleStorage": np.complex128, "UntypedStorage": np.uint8,
}


class _StorageType:
    """What a pickle's reference to torch.FloatStorage (etc.) becomes: a name and a dtype."""

    def __init__(self, name: str) -> None:
        self.name, self.dtype = name, _STORAGES[name]


class _Rebuilt:
    """A tensor rebuilt from the pickle, made into a shrew Tensor once the device is known."""

    def __init__(self, values: np.ndarray, requires_grad: bool, parameter: bool) -> None:
        self.values, self.requires_grad, self.parameter = values, requires_grad, parameter


def _rebuild_tensor_v2(storage: np.ndarray, offset: int, size: tuple[int, ...],
                       stride: tuple[int, ...], requires_grad: bool = False,
                       backward_hooks: Any = None, metadata: Any = None) -> _Rebuilt:
    """A tensor's values: the strided view of its storage, bounds-checked (a crafted
    file must not read outside the storage), copied out."""
    size, stride = tuple(size), tuple(stride)
    ok = (isinstance(offset, int) and offset >= 0 and len(size) == len(stride)
          and all(isinstance(n, int) and n >= 0 for n in size)
          and all(isinstance(s, int) and s >= 0 for s in stride))
    if not ok:
        raise ShrewError(f"load: a tensor with offset {offset!r}, size {size!r} and stride "
                         f"{stride!r} is malformed")
    if 0 in size:
        return _Rebuilt(np.zeros(size, storage.dtype), requires_grad, parameter=False)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= storage.size:
        raise ShrewError(f"load: a tensor of size {list(size)} reaches element {last} of a "
                         f"storage of {storage.size}")
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=size,
                                           strides=[s * storage.itemsize for s in stride],
                                           writeable=False)
    return _Rebuilt(np.array(view), requires_grad, parameter=False)


def _rebuild_parameter(data: _Rebuilt, requires_grad: bool, backward_hooks: Any,
                       state: Any = None) -> _Rebuilt:
    if not isinstance(data, _Rebuilt):
        raise ShrewError("load: a Parameter in the file does not wrap a tensor")
    return _Rebuilt(data.values, bool(requires_grad), parameter=True)


# The only callables the pickle may reach: each name maps to shrew's own safe stand-in.
_ALLOWED: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    **{("torch", name): _StorageType(name) for name in _STORAGES},
    ("torch.storage", "UntypedStorage"): _StorageType("UntypedStorage"),
}


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file: IO[bytes], storage: Callable[[_StorageType, str, int], np.ndarray],
                 where: str, weights_only: bool | None) -> None:
        super().__init__(file)
        self._storage, self._where, self._weights_only = storage, where, weights_only

    def find_class(self, module: str, name: str) -> Any:
        found = _ALLOWED.get((module, name))
        if found is None:
            even = ", even with weights_only=False" if self._weights_only is False else ""
            raise ShrewError(f"load: {self._where} refers to {module}.{name}, which shrew "
                             f"refuses to load: only tensors, parameters and plain containers "
                             f"(dict, OrderedDict, list, tuple, numbers, strings) are allowed, "
                             f"and nothing in the file is run{even} (save a state_dict "
                             f"instead of a pickled object)")
        return found

    def persistent_load(self, pid: Any) -> np.ndarray:
        if (not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage"
                or not isinstance(pid[1], _StorageType)):
            raise ShrewError(f"load: {self._where} has an unknown storage reference {pid!r:.80}")
        _, kind, key, _location, numel = pid
        return self._storage(kind, str(key), int(numel))


def read_torch_zip(file: IO[bytes], where: str, device: str,
                   weights_only: bool | None = None) -> Any:
    """The object torch.save wrote into the zip `file`, its tensors on `device`."""
    try:
        archive = zipfile.ZipFile(file)
        names = archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ShrewError(f"load: {where} is not a valid PyTorch zip file ({exc})") from None
    pickles = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
    if len(pickles) != 1:
        raise ShrewError(f"load: {where} is not a valid PyTorch zip file (no single "
                         f"<name>/data.pkl in it)")
    prefix = pickles[0][:-len("data.pkl")]
    big_endian = (f"{prefix}byteorder" in names
                  and archive.read(f"{prefix}byteorder").strip() == b"big")
    storages: dict[str, np.ndarray] = {}

    def storage(kind: _StorageType, key: str, numel: int) -> np.ndarray:
        if key not in storages:
            try:
                raw = archive.read(f"{prefix}data/{key}")
            except KeyError:
                raise ShrewError(f"load: {where} lacks the storage {key!r} a tensor "
                                 f"needs") from None
            dtype = np.dtype(kind.dtype).newbyteorder(">" if big_endian else "<")
            if len(raw) < numel * dtype.itemsize:
                raise ShrewError(f"load: {where}: storage {key!r} has {len(raw)} bytes, its "
                                 f"{numel} elements need {numel * dtype.itemsize}")
            storages[key] = np.frombuffer(raw, dtype=dtype, count=numel).astype(
                dtype.newbyteorder("="))
        return storages[key]

    try:
        obj = _RestrictedUnpickler(io.BytesIO(archive.read(pickles[0])), storage, where,
                                   weights_only).load()
    except ShrewError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
            IndexError, KeyError, RecursionError, MemoryError, zipfile.BadZipFile) as exc:
        raise ShrewError(f"load: {where} is not a valid PyTorch zip file "
                         f"({type(exc).__name__}: {exc})") from None
    return _to_tensors(obj, device, where)


def _to_tensors(obj: Any, device: str, where: str) -> Any:
    """Replace each rebuilt tensor with a shrew Tensor (or nn.Parameter) on `device`."""
    made: dict[int, Tensor] = {}

    def convert(x: Any) -> Any:
        if isinstance(x, _Rebuilt):
            if id(x) not in made:
                try:
                    t = from_numpy(x.values, device=device)
                except DTypeError as exc:
                    raise DTypeError(f"load: a tensor in {where}: {exc}") from None
                if x.parameter:
                    t = Parameter(t, requires_grad=x.requires_grad)
                elif x.requires_grad:
                    t.requires_grad_()
                made[id(x)] = t
            return made[id(x)]
        if isinstance(x, dict):
            converted = {k: convert(v) for k, v in x.items()}
            return OrderedDict(converted) if isinstance(x, OrderedDict) else converted
        if isinstance(x, tuple):
            return tuple(convert(v) for v in x)
        if isinstance(x, list):
            return [convert(v) for v in x]
        if isinstance(x, (_StorageType, np.ndarray)) or callable(x):
            raise ShrewError(f"load: {where} holds a bare {type(x).__name__}, not a tensor")
        return x

    return convert(obj)


def looks_like_zip(head: bytes) -> bool:
    return head.startswith(b"PK\x03\x04")


def looks_like_pickle(head: bytes) -> bool:
    return head[:1] == b"\x80"  # the PROTO opcode that starts every modern pickle

