"""PyTorch's legacy tensor types (torch.FloatTensor, torch.cuda.LongTensor, ...), Tensor.new,
and the memory formats (torch.channels_last, ...).

shrew stores every tensor row-major ("contiguous_format"): a memory_format argument is a
layout hint it accepts and ignores (values are identical), while
is_contiguous(memory_format=) answers as PyTorch does for the tensor's actual strides."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.dtype import DType, as_dtype
from ..core.errors import ShrewTypeError
from ..core.shape import Size

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import DeviceLike


class memory_format:  # noqa: N801  (torch's name)
    """torch.memory_format: one of preserve_format, contiguous_format, channels_last,
    channels_last_3d."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickles as the module-level singleton


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

# the dims from fastest to slowest varying, for the formats that need a given rank
_ORDERS = {"channels_last": (4, (1, 3, 2, 0)), "channels_last_3d": (5, (1, 4, 3, 2, 0))}


def check_format(op: str, fmt: object) -> None:
    """memory_format= must be one of torch's four (or None): anything else is a TypeError."""
    if fmt is not None and not isinstance(fmt, memory_format):
        raise ShrewTypeError(f"{op}: memory_format must be a shrew.memory_format "
                             f"(e.g. shrew.channels_last), got {type(fmt).__name__}")


def is_contiguous_as(x: Tensor, fmt: memory_format) -> bool:
    """PyTorch's test: the non-1 dims, in the format's order, step by the product of the
    sizes before them; channels_last needs a 4-d tensor, channels_last_3d a 5-d one."""
    check_format("is_contiguous", fmt)
    if fmt.name not in _ORDERS:
        return bool(x.is_contiguous())
    rank, order = _ORDERS[fmt.name]
    if x.ndim != rank:
        return False
    steps: tuple[int, ...] = x.stride()  # type: ignore[assignment]  # no dim: a tuple
    expected = 1
    for d in order:
        if x.shape[d] != 1:
            if steps[d] != expected:
                return False
            expected *= x.shape[d]
    return True


def legacy_sizes(args: tuple) -> tuple[int, ...] | None:
    """The sizes a legacy constructor's arguments give, or None where they are data: ()
    is (0,), ints (not bools) are sizes, and so is one Size."""
    if not args:
        return (0,)
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
           for a in args):
        return tuple(int(a) for a in args)
    if len(args) == 1 and isinstance(args[0], Size):
        return tuple(args[0])
    return None


def construct(op: str, dtype: DType, device: DeviceLike | None, args: tuple) -> Tensor:
    """The legacy constructors' forms: () an empty 1-d tensor, (ints...) or (Size) an
    uninitialised one (zeros in shrew), (sequence or numpy array) a copy of the data,
    (Tensor) that tensor when its dtype and device match."""
    from .._tensor import Tensor
    from .creation import empty, tensor
    sizes = legacy_sizes(args)
    if sizes is not None:
        return empty(sizes, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0]
        if t.dtype is not dtype or (device is not None and t.device != device):
            raise ShrewTypeError(f"{op}: expected a {dtype} tensor on {device or t.device}, got "
                                 f"{t.dtype} on {t.device}")
        return t
    if len(args) == 1 and isinstance(args[0], (Sequence, np.ndarray)):
        return tensor(args[0], dtype=dtype, device=device)
    raise ShrewTypeError(f"{op}: takes sizes (ints or a Size), a sequence of data or a "
                         f"tensor, got {tuple(type(a).__name__ for a in args)}")


class _LegacyType(type):
    """The metaclass of torch.FloatTensor & co: calling one constructs a tensor of its dtype
    (and on CUDA for torch.cuda's); isinstance(t, FloatTensor) asks t's dtype and device."""

    dtype: DType
    is_cuda: bool

    def __instancecheck__(cls, obj: object) -> bool:
        from .._tensor import Tensor
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and obj.is_cuda == cls.is_cuda)

    def __call__(cls, *args: Any, device: DeviceLike | None = None) -> Tensor:
        return construct(cls.__qualname__, cls.dtype, "cuda" if cls.is_cuda else device, args)

    def __repr__(cls) -> str:
        return f"<class 'torch.{'cuda.' if cls.is_cuda else ''}{cls.__name__}'>"


_NAMES = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16",
          "Long": "int64", "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8",
          "Bool": "bool"}


def legacy_types(cuda: bool) -> dict[str, type]:
    """{"FloatTensor": the class, ...}: torch's ten legacy types, CPU or CUDA."""
    module = "shrew.cuda" if cuda else "shrew"
    return {f"{k}Tensor": _LegacyType(f"{k}Tensor", (), {
        "dtype": as_dtype(v), "is_cuda": cuda, "__module__": module,
        "__qualname__": f"{k}Tensor"}) for k, v in _NAMES.items()}


class ByteStorage:
    """torch.ByteStorage's uses in programs: ByteStorage.from_buffer(bytes) (the pickled
    object exchanged by distributed all_gather helpers) and ByteStorage(n).  shrew has no
    storage objects apart from tensors, so both give a 1-d uint8 tensor, which
    ByteTensor(storage) and .to(device) then take as they are."""

    def __new__(cls, size: int = 0, *, device: DeviceLike | None = None) -> Any:
        from .creation import zeros
        return zeros(int(size), dtype="uint8", device=device)

    @staticmethod
    def from_buffer(buffer: Any, byte_order: str | None = None, count: int = -1,
                    offset: int = 0) -> Tensor:
        """The bytes of `buffer` (anything with the buffer protocol) from `offset`,
        `count` of them (-1: all), as a new 1-d uint8 tensor."""
        from .creation import tensor
        data = np.frombuffer(buffer, dtype=np.uint8, count=count, offset=offset)
        return tensor(data.copy())
