"""shrew's dtypes and PyTorch's type-promotion rules."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from .errors import DTypeError, ShrewError, ShrewTypeError

BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3  # promotion categories, lowest first


class DType:
    """A tensor element type; ``.np`` is the numpy dtype backends store."""

    __slots__ = ("name", "np", "category", "itemsize", "is_signed")

    name: str
    """The name, e.g. ``"float32"``."""
    np: np.dtype
    """The numpy dtype of this type's storage (ml_dtypes' for bfloat16)."""
    category: int
    """The promotion category: 0 bool, 1 integer, 2 floating point, 3 complex."""
    itemsize: int
    """Bytes per element."""
    is_signed: bool
    """Whether the type holds negative numbers."""

    def __init__(self, name: str, np_dtype: Any = None) -> None:
        self.name = name
        self.np = np.dtype(name if np_dtype is None else np_dtype)
        self.category = FLOAT if name in ("float16", "bfloat16", "float32", "float64") else \
            {"b": BOOL, "i": INT, "u": INT, "c": COMPLEX}[self.np.kind]
        self.itemsize = self.np.itemsize
        self.is_signed = self.np.kind not in "bu"

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOAT

    @property
    def is_complex(self) -> bool:
        return self.category == COMPLEX

    def to_real(self) -> DType:
        """The dtype of a complex type's real and imaginary parts (complex64: float32);
        a real type itself (torch.dtype.to_real)."""
        return COMPLEX_PARTS.get(self, self)

    def to_complex(self) -> DType:
        """The complex type whose parts are this float type (float64: complex128; float16
        and bfloat16, which have none in shrew: complex64), as torch.dtype.to_complex."""
        return self if self.is_complex else complex128 if self is float64 else complex64

    def __repr__(self) -> str:
        return f"shrew.{self.name}"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (as_dtype, (self.name,))


float16 = DType("float16")
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16)
float32 = DType("float32")
float64 = DType("float64")
uint8 = DType("uint8")
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
bool_ = DType("bool")
# Complex types (docs/architecture.md, "Complex numbers"): a tensor of one stores its real
# and imaginary parts as a float tensor with a trailing dim of 2 (ops/complex/)
complex64 = DType("complex64")
complex128 = DType("complex128")
COMPLEX_PARTS = {complex64: float32, complex128: float64}

ALL_DTYPES = (float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64, bool_,
              complex64, complex128)
BY_NUMPY = {d.np: d for d in ALL_DTYPES if not d.is_complex}
"""The dtype of backend storage by its numpy dtype: real types only (a complex tensor's
storage is real pairs), so no complex array is ever wrapped as a plain tensor."""
_WITH_COMPLEX = {d.np: d for d in ALL_DTYPES}
_BY_NAME = {d.name: d for d in ALL_DTYPES}
# PyTorch's aliases: torch.half, torch.float, torch.double, torch.short, torch.int, torch.long
ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16,
           "int": int32, "long": int64, "cfloat": complex64, "cdouble": complex128}
_BY_NAME.update(ALIASES)

_default_float = float32


def get_default_dtype() -> DType:
    """The dtype of float tensors made without one, and of Python floats in arithmetic."""
    return _default_float


def set_default_dtype(dtype: Any) -> None:
    """Set get_default_dtype() (a floating-point dtype), as torch.set_default_dtype."""
    global _default_float
    dtype = as_dtype(dtype)
    if not dtype.is_floating_point:
        raise DTypeError(f"set_default_dtype: only floating-point types can be the default, "
                         f"got {dtype}")
    _default_float = dtype


def from_numpy_dtype(np_dtype: Any, op: str = "tensor") -> DType:
    """The shrew dtype for a numpy dtype, or a DTypeError naming the supported ones (a
    ShrewTypeError, TypeError as PyTorch's, for strings, bytes, objects and dates, which
    are no numbers at all)."""
    try:
        return _WITH_COMPLEX[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        names = ", ".join(d.name for d in ALL_DTYPES)
        if np.dtype(np_dtype).kind in "USOVMm":
            raise ShrewTypeError(f"{op}: can't convert an array of numpy dtype "
                                 f"{np.dtype(np_dtype)}; shrew supports {names}") from None
        raise DTypeError(f"{op}: unsupported dtype {np.dtype(np_dtype)}; "
                         f"shrew supports {names}") from None


def as_dtype(value: Any) -> DType:
    """Accept a shrew dtype, a numpy dtype, a dtype name or the Python types float/int/bool
    (float is float64 and int is int64, as in PyTorch)."""
    if isinstance(value, DType):
        return value
    if value is float:
        return float64
    if value is int:
        return int64
    if value is bool:
        return bool_
    if isinstance(value, str) and value.removeprefix("torch.") in _BY_NAME:
        return _BY_NAME[value.removeprefix("torch.")]
    try:
        return from_numpy_dtype(value, "dtype")
    except TypeError:
        raise ShrewTypeError(f"dtype: {value!r} is not a dtype") from None


def scalar_dtype(value: object) -> DType:
    """The dtype a bare Python number takes on its own (torch.tensor's inference).
    numpy scalars count by kind, so np.float32(2.5) is a float, not an int."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    if isinstance(value, (complex, np.complexfloating)):
        return _default_float.to_complex()
    return _default_float


def promote_types(type1: Any, type2: Any) -> DType:
    """The smallest dtype that holds both (torch.promote_types): the higher category wins;
    within one, the wider type, uint8 with a signed int needs int16, and float16 with
    bfloat16 float32."""
    a, b = as_dtype(type1), as_dtype(type2)
    if a is b:
        return a
    if COMPLEX in (a.category, b.category):  # the wider of the float parts, made complex
        parts = [d.to_real() for d in (a, b) if d.category >= FLOAT]
        return promote_types(*parts).to_complex() if len(parts) == 2 else \
            parts[0].to_complex()
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.itemsize == b.itemsize:  # uint8/int8 or float16/bfloat16: neither holds the other
        return int16 if a.category == INT else float32
    wide, narrow = (a, b) if a.itemsize > b.itemsize else (b, a)
    if narrow is uint8 and wide.itemsize < 2:
        return int16
    return wide


def _combine(higher: DType | None, lower: DType | None) -> DType | None:
    """PyTorch's merge of a higher-priority group's type with a lower one's: the lower only
    counts when it has a higher category (a float below ints, anything below bool)."""
    if higher is None:
        return lower
    if lower is None or higher.category >= lower.category:
        return higher
    if lower.is_complex:  # a float or integer tensor with a complex number: complex
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(*operands: Any) -> DType:
    """PyTorch's promotion of operands: tensors (or (dtype, ndim) pairs) and Python numbers.
    Tensors with dims outrank zero-dim tensors, which outrank numbers; a lower group only
    raises the category (int tensor * 2.5 is the default float dtype, float16 * 2.5 stays
    float16)."""
    groups: list[DType | None] = [None, None, None]  # dims, zero-dim, numbers
    for item in operands:
        if isinstance(item, tuple):
            dtype, ndim = item
            rank = 0 if ndim else 1
        elif hasattr(item, "dtype") and isinstance(item.dtype, DType):  # a Tensor
            dtype, rank = item.dtype, 0 if item.ndim else 1
        else:
            dtype, rank = scalar_dtype(item), 2
        prev = groups[rank]
        groups[rank] = dtype if prev is None else promote_types(prev, dtype)
    result = _combine(groups[0], _combine(groups[1], groups[2]))
    if result is None:
        raise DTypeError("result_type: needs at least one operand")
    return result


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch's promotion allows a cast (torch.can_cast): never float to integer
    or bool, nor integer to bool."""
    a, b = as_dtype(from_), as_dtype(to)
    return a.category <= b.category


def check_float(dtype: DType, op: str, error: type[ShrewError] = DTypeError) -> None:
    if not dtype.is_floating_point:
        raise error(f"{op}: needs a floating-point tensor, got {dtype}")


class finfo:  # noqa: N801  (torch's name)
    """Limits of a floating-point dtype (torch.finfo): bits, eps, max, min, tiny,
    smallest_normal, resolution, dtype."""

    def __init__(self, dtype: Any = None) -> None:
        # a complex type's limits are its parts', as PyTorch's
        dt = get_default_dtype() if dtype is None else as_dtype(dtype).to_real()
        check_float(dt, "finfo")
        info = ml_dtypes.finfo(dt.np)
        self.bits = dt.itemsize * 8
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # exactly, as torch (numpy rounds it)
        self.dtype = dt.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
                f"eps={self.eps}, smallest_normal={self.smallest_normal}, "
                f"tiny={self.tiny}, dtype={self.dtype})")


class iinfo:  # noqa: N801  (torch's name)
    """Limits of an integer (or bool) dtype (torch.iinfo): bits, max, min, dtype."""

    def __init__(self, dtype: Any) -> None:
        dt = as_dtype(dtype)
        if dt.is_floating_point:
            raise DTypeError(f"iinfo: needs an integer dtype, got {dt}; use finfo")
        info = np.iinfo(np.uint8 if dt is bool_ else dt.np)
        self.bits = dt.itemsize * 8
        self.max = 1 if dt is bool_ else int(info.max)
        self.min = int(info.min)
        self.dtype = dt.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
