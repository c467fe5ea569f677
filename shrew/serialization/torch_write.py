"""Writing PyTorch's own file format (torch.save's zip), which `torch.load(f,
weights_only=True)` reads: what shrew.save writes to a path ending in .pt or .pth.

The zip holds `<name>/data.pkl` (the object, pickled with protocol 2), `<name>/byteorder`,
`<name>/data/<key>` (each storage's raw little-endian bytes, 64-byte aligned as torch
aligns them, so torch.load(mmap=True) works) and `<name>/version`.  The pickle names only
what torch's weights_only unpickler (and shrew's own, unpickler.py) allows:
torch._utils._rebuild_tensor_v2 and _rebuild_parameter, collections.OrderedDict, and
torch's typed storage classes in each tensor's persistent id ("storage", torch.FloatStorage,
key, "cpu", numel).  It is written opcode by opcode (torch_pickle.py): Python's pickler
would import torch to check those names.

Tensors that view the same memory (a tied weight, a transposed or sliced view, an expand)
are written as views of one storage with their own offset and strides, as torch.save does,
so they share memory again once loaded.  A plain object of the program's own class (a
dataclass holding the model's config) is pickled as its class and attributes, as torch.save
does; torch.load then needs weights_only=False or the class allowed (add_safe_globals)."""
from __future__ import annotations

import io
import os
import struct
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from ..core.errors import DTypeError, ShrewTypeError, UnsupportedError
from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .torch_pickle import PickleWriter, TensorRecord, plain_object_class

# torch's typed storage class for each element type (the persistent id names it)
_STORAGE_CLASSES = {
    "float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
    "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
ALIGNMENT = 64  # where torch.save puts each storage's bytes (torch.load's mmap needs it)


class _Place(NamedTuple):
    """Where a tensor's elements lie: in the memory `group` names (with its dtype), from
    element `first` (counted from an origin every tensor of that memory shares), `strides`
    apart; `read(n)` copies n elements from `first` on to the host."""
    group: tuple[Any, ...]
    first: int
    strides: tuple[int, ...]
    read: Callable[[int], np.ndarray]


def _owner(array: Any) -> Any:
    """The object that owns an array's memory: the end of its chain of bases."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def _array_place(t: Tensor, data: Any) -> _Place | None:
    """A numpy (cpu) or CuPy (cuda) array's place; None where torch has no such layout
    (negative strides, strides that are not whole elements)."""
    itemsize = data.dtype.itemsize
    if any(s < 0 or s % itemsize for s in data.strides):
        return None
    pointer = (data.__array_interface__["data"][0] if isinstance(data, np.ndarray)
               else int(data.data.ptr))
    as_strided = getattr(t._backend, "xp", np).lib.stride_tricks.as_strided

    def read(n: int) -> np.ndarray:
        return t._backend.to_numpy(as_strided(data, shape=(n,), strides=(itemsize,)))
    # the element address: tensors of one memory and alignment count from the same origin
    group = (id(_owner(data)), data.dtype, pointer % itemsize)
    return _Place(group, pointer // itemsize, tuple(s // itemsize for s in data.strides), read)


def _buffer_place(t: Tensor, data: Any) -> _Place | None:
    """An OpenCL storage's place: a view of `buffer` at an element offset and strides."""
    if any(s < 0 for s in data.strides):
        return None

    def read(n: int) -> np.ndarray:
        return t._backend.to_numpy(data.view((n,), (1,), data.offset))
    return _Place((id(data.buffer), data.dtype), int(data.offset),
                  tuple(int(s) for s in data.strides), read)


def _place(t: Tensor) -> _Place:
    complex_values = t.dtype.is_complex  # stored as real pairs (ops/complex/): written copied
    data, found = (None if complex_values else t._data), None
    if t.numel() > 0 and not complex_values:
        if isinstance(data, np.ndarray) or hasattr(getattr(data, "data", None), "ptr"):
            found = _array_place(t, data)
        elif hasattr(data, "buffer") and hasattr(data, "offset"):
            found = _buffer_place(t, data)
    if found is not None:
        return found
    # an empty tensor, or a layout torch lacks: a contiguous copy, its own storage
    steps, acc = [], 1
    for n in reversed(t.shape):
        steps.append(acc)
        acc *= max(n, 1)
    return _Place((id(t), "copy"), 0, tuple(reversed(steps)),
                  lambda n: np.ascontiguousarray(t._host() if complex_values
                                                 else t._backend.to_numpy(data)).reshape(-1))


def _extent(t: Tensor, strides: tuple[int, ...]) -> int:
    """How many elements of its storage a tensor spans, from its first on."""
    if t.numel() == 0:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(t.shape, strides))


class _Storages:
    """The tensors of the object, grouped by the memory they view; then one storage per
    group, spanning the elements its tensors reach."""

    def __init__(self) -> None:
        self.places: dict[int, tuple[Tensor, _Place]] = {}
        self.groups: dict[tuple[Any, ...], list[int]] = {}

    def add(self, t: Tensor, where: str) -> None:
        if id(t) in self.places:
            return
        if t.dtype.name not in _STORAGE_CLASSES:
            raise DTypeError(f"save: the tensor at {where} is {t.dtype}, which PyTorch's format "
                             f"has no storage for")
        place = _place(t)
        self.places[id(t)] = (t, place)
        self.groups.setdefault(place.group, []).append(id(t))

    def records(self) -> tuple[dict[int, TensorRecord], list[np.ndarray]]:
        """(each tensor's record by id, the storages' contents in key order)."""
        records: dict[int, TensorRecord] = {}
        contents: list[np.ndarray] = []
        for members in self.groups.values():
            placed = [self.places[i] for i in members]
            start = min(p.first for _, p in placed)
            end = max(p.first + _extent(t, p.strides) for t, p in placed)
            reader = next(p for _, p in placed if p.first == start)
            key, numel = str(len(contents)), end - start
            contents.append(reader.read(numel) if numel else np.empty(0, placed[0][0].dtype.np))
            for t, p in placed:
                records[id(t)] = TensorRecord(
                    _STORAGE_CLASSES[t.dtype.name], key, numel, p.first - start,
                    tuple(t.shape), p.strides, t.requires_grad, isinstance(t, Parameter))
        return records, contents


def _collect(obj: Any, storages: _Storages) -> None:
    """Check that torch.load(weights_only=True) can rebuild everything in `obj`, and note
    its tensors; errors name where in `obj` the offending value is."""
    seen: set[int] = set()

    def visit(x: Any, where: str) -> None:
        if x is None or isinstance(x, (bool, int, float, str, np.bool_, np.integer,
                                       np.floating)):
            return
        if isinstance(x, Tensor):
            storages.add(x, where)
            return
        if isinstance(x, Module):
            raise UnsupportedError(
                f"save: {where} is a whole nn.Module ({type(x).__name__}), which PyTorch's "
                f"format cannot hold: torch.load cannot rebuild a shrew class; save its "
                f"state_dict() to the .pt file, or the module to a .safetensors file "
                f"(shrew.load rebuilds it)")
        container = isinstance(x, (Mapping, list, tuple))
        plain = not container and plain_object_class(x) is not None
        if not container and not plain:
            raise ShrewTypeError(
                f"save: cannot write the {type(x).__name__} at {where} in PyTorch's format: "
                f"a .pt file holds tensors, numbers, strings, None, dicts, lists and tuples "
                f"of them, and plain objects of a class of the program's own (a dataclass) "
                f"(numpy arrays, sets and modules go in a .safetensors file)")
        if id(x) in seen:
            return
        seen.add(id(x))
        if plain:
            visit(vars(x), f"{where}'s attributes")
        elif isinstance(x, Mapping):
            for k, v in x.items():
                visit(k, f"{where} key {k!r:.40}")
                visit(v, f"{where}[{k!r:.40}]")
            if type(x) is OrderedDict:
                visit(dict(vars(x)), f"{where}'s attributes")
        else:
            for i, v in enumerate(x):
                visit(v, f"{where}[{i}]")

    visit(obj, "the top")


def _header_extra(offset: int, name: str, size: int) -> bytes:
    """A zip extra field that pads a local header at `offset` so its data starts on an
    ALIGNMENT boundary (torch's own "FB" padding record)."""
    header = 30 + len(name.encode()) + (20 if size * 1.05 > zipfile.ZIP64_LIMIT else 0)
    pad = -(offset + header) % ALIGNMENT
    if 0 < pad < 4:  # an extra record is at least its 4-byte id and length
        pad += ALIGNMENT
    return b"FB" + struct.pack("<H", pad - 4) + b"Z" * (pad - 4) if pad else b""


def _write_zip(archive: str, pickled: bytes, contents: list[np.ndarray],
               byteorder: bool) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        def record(name: str, data: bytes | memoryview) -> None:
            info = zipfile.ZipInfo(f"{archive}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.extra = _header_extra(out.tell(), info.filename, len(data))
            zf.writestr(info, data)
        record("data.pkl", pickled)
        if byteorder:
            record("byteorder", b"little")
        for key, array in enumerate(contents):
            little = array.astype(array.dtype.newbyteorder("<"), copy=False)
            record(f"data/{key}", np.ascontiguousarray(little).view(np.uint8).data)
        record("version", b"3\n")
    return out.getvalue()


def archive_name(f: Any) -> str:
    """The zip's top folder, as torch.save names it: the file's name without its
    extension for a path, "archive" for a file object."""
    if hasattr(f, "write"):
        return "archive"
    stem = os.path.basename(os.fsdecode(f)).rpartition(".")
    return (stem[0] if stem[1] else stem[2]) or "archive"


def dumps(obj: Any, archive: str, byteorder: bool = True) -> bytes:
    """The bytes of a torch.save zip file of `obj`, which may hold tensors (on any
    device; written as cpu tensors), nn.Parameters, numbers, strings, None, and dicts,
    OrderedDicts, lists and tuples of them: state dicts, optimizer state dicts, and
    checkpoints of those; `byteorder`: whether to write the byteorder entry."""
    storages = _Storages()
    _collect(obj, storages)
    records, contents = storages.records()
    return _write_zip(archive, PickleWriter(records).dumps(obj), contents, byteorder)
