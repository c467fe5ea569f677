"""The restricted unpickler that reads the pickle inside a PyTorch .pt file: it may only
rebuild tensors, parameters and plain containers, like torch.load(weights_only=True).

Three rules keep a crafted pickle from reaching anything else:
- a name (GLOBAL) resolves only to the stand-ins below, made afresh for each load, or to a
  class the program allowed (add_safe_globals), so no other module, class or function of
  shrew or Python is ever handed to the file;
- an allowed class is never called: NEWOBJ makes an instance with its __new__ and no
  arguments (torch.save's form for a plain object: a checkpoint's config dataclass), and
  only the stand-ins may be REDUCEd;
- BUILD (the opcode that sets attributes) may only touch an OrderedDict the unpickler
  itself created (torch.save stores a state dict's `_metadata` that way) or an instance
  NEWOBJ made, never a class, function or module: otherwise a file could change what
  later loads return;
- a tensor is only described here (storage, offset, size, stride), checked against its
  storage; making it into memory is torch_zip.py's job, under a size budget."""
from __future__ import annotations

import pickle
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any, ClassVar, NamedTuple

import ml_dtypes
import numpy as np

from ..core.shape import numel
from ..core.errors import LoadError, RefusedGlobalError
from .allowlist import allowed_class

# torch's typed storage classes, as pickles name them, and the element type of each
_STORAGES = {
    "DoubleStorage": np.float64, "FloatStorage": np.float32, "HalfStorage": np.float16,
    "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
    "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
    "BFloat16Storage": ml_dtypes.bfloat16, "ComplexFloatStorage": np.complex64,
    "ComplexDoubleStorage": np.complex128, "UntypedStorage": np.uint8,
}
MAX_DIMS = 64  # numpy's limit, and more than any real tensor has


class StorageType(NamedTuple):
    """What a pickle's reference to torch.FloatStorage (etc.) becomes (immutable)."""
    name: str
    dtype: Any


class Rebuilt:
    """A tensor the pickle describes: a strided view of a storage, made into a shrew
    Tensor by torch_zip.py once the whole file is read and the device is known."""
    __slots__ = ("storage", "offset", "size", "stride", "requires_grad", "parameter")

    def __init__(self, storage: np.ndarray, offset: int, size: tuple[int, ...],
                 stride: tuple[int, ...], requires_grad: bool, parameter: bool) -> None:
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride
        self.requires_grad, self.parameter = requires_grad, parameter

    @property
    def numel(self) -> int:
        return numel(self.size)

    def is_contiguous(self) -> bool:
        """Whether the view is a plain slice of its storage (row-major, no gaps)."""
        expected = 1
        for n, s in reversed(list(zip(self.size, self.stride))):
            if n != 1 and s != expected:
                return False
            expected *= n
        return True


def _ints(values: Any, what: str) -> tuple[int, ...]:
    if not isinstance(values, (tuple, list)) or len(values) > MAX_DIMS or not all(
            type(v) is int and v >= 0 for v in values):
        raise LoadError(f"a tensor's {what} {values!r:.80} is not a list of at most "
                        f"{MAX_DIMS} non-negative integers")
    return tuple(values)


def _rebuild_tensor(storage: Any, offset: Any, size: Any, stride: Any,
                    requires_grad: Any = False, backward_hooks: Any = None,
                    metadata: Any = None) -> Rebuilt:
    """torch._utils._rebuild_tensor_v2, checked: the view must lie inside its storage."""
    if not isinstance(storage, np.ndarray):
        raise LoadError(f"a tensor's storage is a {type(storage).__name__}, not a storage")
    if type(offset) is not int or offset < 0:
        raise LoadError(f"a tensor's storage offset {offset!r:.40} is not a non-negative "
                        f"integer")
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if len(size) != len(stride):
        raise LoadError(f"a tensor has size {list(size)} but stride {list(stride)}")
    tensor = Rebuilt(storage, offset, size, stride, bool(requires_grad), parameter=False)
    if tensor.numel:  # Python integers: no overflow whatever the file says
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= storage.size:
            raise LoadError(f"a tensor of size {list(size)} reaches element {last} of a "
                            f"storage of {storage.size}")
    return tensor


def _rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any = None,
                       state: Any = None) -> Rebuilt:
    if not isinstance(data, Rebuilt):
        raise LoadError("a Parameter in the file does not wrap a tensor")
    return Rebuilt(data.storage, data.offset, data.size, data.stride, bool(requires_grad),
                   parameter=True)


def _stand_ins() -> dict[tuple[str, str], Any]:
    """The only names a pickle may use, each mapped to a stand-in of shrew's own."""
    return {
        ("collections", "OrderedDict"): OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
        **{("torch", name): StorageType(name, dtype) for name, dtype in _STORAGES.items()},
        ("torch.storage", "UntypedStorage"): StorageType("UntypedStorage", np.uint8),
    }


StorageReader = Callable[[StorageType, str, int], np.ndarray]


class RestrictedUnpickler(pickle._Unpickler):
    """pickle's Python unpickler (its opcodes can be overridden, the C one's cannot) with
    names limited to the stand-ins and BUILD limited to the OrderedDicts it made."""
    dispatch: ClassVar[dict[int, Any]] = dict(pickle._Unpickler.dispatch)
    stack: list[Any]  # the unpickler's own (undocumented) stack, which BUILD works on

    def __init__(self, file: IO[bytes], storage: StorageReader, where: str,
                 weights_only: bool | None) -> None:
        super().__init__(file)
        self._storage, self._where, self._weights_only = storage, where, weights_only
        self._names = _stand_ins()
        self._callable = {id(v) for v in self._names.values() if callable(v)}
        self._made: set[int] = set()  # the instances NEWOBJ made (BUILD may set theirs)

    def find_class(self, module: str, name: str) -> Any:
        found = self._names.get((module, name))
        if found is None:
            found = allowed_class(f"{module}:{name}")
        if found is None:
            even = ", even with weights_only=False" if self._weights_only is False else ""
            raise RefusedGlobalError(
                f"load: {self._where} refers to {module}.{name}, which shrew refuses to load: "
                f"only tensors, parameters and plain containers (dict, OrderedDict, list, "
                f"tuple, numbers, strings) are allowed, and nothing in the file is run{even} "
                f"(save a state_dict instead of a pickled object, or, if you trust it, allow "
                f"the class with shrew.serialization.add_safe_globals([{name}]))")
        return found

    def persistent_load(self, pid: Any) -> np.ndarray:
        if (not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage"
                or not isinstance(pid[1], StorageType) or type(pid[4]) is not int
                or pid[4] < 0):
            raise LoadError(f"load: {self._where} has an unknown storage reference {pid!r:.80}")
        _, kind, key, _location, numel = pid
        return self._storage(kind, str(key), numel)

    def load_reduce(self) -> None:
        if id(self.stack[-2]) not in self._callable:
            raise LoadError(f"load: {self._where} calls a {type(self.stack[-2]).__name__}; "
                            f"only tensors and OrderedDicts are rebuilt by a call (an "
                            f"allowed class is made without calling it)")
        super().load_reduce()  # type: ignore[misc]

    def load_newobj(self) -> None:
        args = self.stack.pop()
        cls = self.stack.pop()
        if not isinstance(cls, type) or cls.__new__ is not object.__new__ or args != ():
            raise LoadError(f"load: {self._where} makes a {cls!r:.60} from arguments "
                            f"{args!r:.60}; only an allowed class of plain objects, with "
                            f"none, is accepted (its own __new__ is never run)")
        obj: Any = object.__new__(cls)
        self._made.add(id(obj))
        self.stack.append(obj)

    dispatch[pickle.REDUCE[0]] = load_reduce
    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_build(self) -> None:
        state = self.stack.pop()
        target = self.stack[-1]
        made = type(target) is OrderedDict or id(target) in self._made
        if not made or not isinstance(state, dict) or not all(
                isinstance(k, str) for k in state):
            raise LoadError(f"load: {self._where} sets attributes on a "
                            f"{type(target).__name__}; only an OrderedDict's or an allowed "
                            f"class's instance's may be set (nothing else a file names may "
                            f"be changed)")
        target.__dict__.update(state)

    dispatch[pickle.BUILD[0]] = load_build
