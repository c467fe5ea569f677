"""Reading PyTorch's .pt / .pth files (torch.save's zip format) without torch and without
running their pickle (unpickler.py), and without letting a small file take much memory.

A torch.save zip holds `<name>/data.pkl` (the pickled object, whose tensors point at
storages by key) and `<name>/data/<key>` (each storage's raw bytes).  Memory is bounded:
- every zip entry is read in chunks, never past its declared size, and all entries
  together may inflate to at most INFLATE_FLOOR + INFLATE_RATIO times the file's size
  (torch.save never compresses, so only a crafted file, a deflate bomb, comes near);
- a storage must fit in its entry, which is checked before reading it;
- on the CPU a tensor that is a plain slice of its storage shares the storage's memory, as
  PyTorch's do (300 views of one storage cost one storage); any other tensor (a stride
  trick, a transposed view, every tensor on another device) is a copy, and the copies may
  total at most COPY_FLOOR + 2 x the storages' bytes, checked before each is made: size
  (2**15, 2**15) with stride (0, 0) over one element is refused, where PyTorch makes a
  view."""
from __future__ import annotations

import io
import zipfile
from collections import OrderedDict
from typing import IO, Any

import numpy as np

from ..core.errors import DTypeError, LoadError, ShrewError
from ..ops.creation import from_numpy
from .._tensor import Tensor
from ..nn.parameter import Parameter
from .errors import in_file
from .unpickler import Rebuilt, RestrictedUnpickler, StorageType

INFLATE_FLOOR = 64 << 20
INFLATE_RATIO = 64
COPY_FLOOR = 64 << 20
_CHUNK = 1 << 20


class _Archive:
    """The zip's entries, each read in bounded chunks against a budget for the file."""

    def __init__(self, file: IO[bytes], size: int, where: str) -> None:
        self.where = where
        self.zip = zipfile.ZipFile(file)
        self.names = self.zip.namelist()
        self.left = INFLATE_FLOOR + INFLATE_RATIO * size  # bytes all entries may inflate to

    def size(self, name: str) -> int:
        return self.zip.getinfo(name).file_size

    def read(self, name: str) -> bytes:
        declared = self.size(name)
        if declared > self.left:
            raise LoadError(f"load: {self.where}: the zip entry {name!r} would inflate to "
                            f"{declared} bytes, past the {self.left} left of the limit for a "
                            f"file of its size (a deflate bomb?)")
        self.left -= declared
        chunks, got = [], 0
        with self.zip.open(name) as entry:  # stops at the declared size, checks the CRC
            while chunk := entry.read(min(_CHUNK, declared - got + 1)):
                got += len(chunk)
                if got > declared:
                    raise LoadError(f"load: {self.where}: the zip entry {name!r} holds more "
                                    f"than the {declared} bytes it declares")
                chunks.append(chunk)
        if got != declared:
            raise LoadError(f"load: {self.where}: the zip entry {name!r} holds {got} bytes, "
                            f"not the {declared} it declares")
        return b"".join(chunks)


def read_torch_zip(file: IO[bytes], size: int, where: str, device: str,
                   weights_only: bool | None = None) -> Any:
    """The object torch.save wrote into the zip `file` (of `size` bytes), its tensors on
    `device`.  Every failure is a ShrewError naming `where`."""
    try:
        return _read(file, size, where, device, weights_only)
    except ShrewError as exc:
        raise in_file(exc, where) from None
    except Exception as exc:  # whatever a crafted zip or pickle provokes is the file's fault
        raise LoadError(f"load: {where} is not a valid PyTorch zip file "
                        f"({type(exc).__name__}: {exc})") from None


def _read(file: IO[bytes], size: int, where: str, device: str,
          weights_only: bool | None) -> Any:
    archive = _Archive(file, size, where)
    pickles = [n for n in archive.names if n.endswith("data.pkl") and n.count("/") == 1]
    if len(pickles) != 1:
        raise LoadError(f"load: {where} is not a valid PyTorch zip file (no single "
                        f"<name>/data.pkl in it)")
    prefix = pickles[0][:-len("data.pkl")]
    big_endian = (f"{prefix}byteorder" in archive.names
                  and archive.read(f"{prefix}byteorder").strip() == b"big")
    storages: dict[str, np.ndarray] = {}

    def storage(kind: StorageType, key: str, numel: int) -> np.ndarray:
        dtype = np.dtype(kind.dtype).newbyteorder(">" if big_endian else "<")
        if key in storages:
            if storages[key].dtype != dtype.newbyteorder("=") or storages[key].size != numel:
                raise LoadError(f"storage {key!r} is referred to with two dtypes or sizes")
            return storages[key]
        name = f"{prefix}data/{key}"
        if name not in archive.names:
            raise LoadError(f"load: {where} lacks the storage {key!r} a tensor needs")
        need = numel * dtype.itemsize
        if archive.size(name) < need:
            raise LoadError(f"storage {key!r} has {archive.size(name)} bytes, its {numel} "
                            f"elements need {need}")
        raw = archive.read(name)
        storages[key] = np.frombuffer(raw, dtype=dtype, count=numel).astype(
            dtype.newbyteorder("="))
        return storages[key]

    obj = RestrictedUnpickler(io.BytesIO(archive.read(pickles[0])), storage, where,
                              weights_only).load()
    budget = COPY_FLOOR + 2 * sum(s.nbytes for s in storages.values())
    return _Tensors(device, where, budget).convert(obj)


class _Tensors:
    """Turns each rebuilt tensor of the unpickled object into a shrew Tensor (or
    nn.Parameter) on the device, sharing or copying its storage within the budget."""

    def __init__(self, device: str, where: str, budget: int) -> None:
        self.device, self.where, self.budget = device, where, budget
        self.made: dict[int, Tensor] = {}
        self.filled: set[int] = set()  # the allowed classes' instances converted

    def convert(self, obj: Any) -> Any:
        try:
            return self._convert(obj)
        except RecursionError:
            raise LoadError(f"load: {self.where} holds containers nested too deeply (or "
                            f"one that contains itself)") from None

    def _convert(self, x: Any) -> Any:
        if isinstance(x, Rebuilt):
            if id(x) not in self.made:
                self.made[id(x)] = self._tensor(x)
            return self.made[id(x)]
        if isinstance(x, dict):
            # keys too: a tensor used as a key comes back as a shrew Tensor
            converted = {self._convert(k): self._convert(v) for k, v in x.items()}
            return OrderedDict(converted) if isinstance(x, OrderedDict) else converted
        if isinstance(x, (StorageType, np.ndarray)) or callable(x):
            raise LoadError(f"load: {self.where} holds a bare {type(x).__name__}, not a "
                            f"tensor")
        if type(x) in (tuple, list, set, frozenset):
            return type(x)(self._convert(v) for v in x)
        if isinstance(getattr(x, "__dict__", None), dict) and id(x) not in self.filled:
            # an allowed class's instance (unpickler.py made it): its tensors too
            self.filled.add(id(x))
            vars(x).update({k: self._convert(v) for k, v in vars(x).items()})
        return x

    def _values(self, x: Rebuilt) -> np.ndarray:
        if self.device == "cpu" and x.is_contiguous():
            return x.storage[x.offset:x.offset + x.numel].reshape(x.size)
        cost = x.numel * x.storage.itemsize
        if cost > self.budget:
            raise LoadError(f"load: {self.where}: a tensor of size {list(x.size)} and stride "
                            f"{list(x.stride)} over a storage of {x.storage.size} elements "
                            f"needs {cost} bytes, past the {self.budget} left for copies "
                            f"(a file may not expand its storages past twice their size)")
        self.budget -= cost
        view = np.lib.stride_tricks.as_strided(
            x.storage[x.offset:], shape=x.size,
            strides=[s * x.storage.itemsize for s in x.stride], writeable=False)
        return np.array(view)

    def _tensor(self, x: Rebuilt) -> Tensor:
        try:
            t = from_numpy(self._values(x), device=self.device)
        except DTypeError as exc:
            raise DTypeError(f"load: a tensor in {self.where}: {exc}") from None
        if x.parameter:
            return Parameter(t, requires_grad=x.requires_grad)
        return t.requires_grad_() if x.requires_grad else t
