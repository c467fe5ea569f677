"""shrew's dtypes and PyTorch's type-promotion rules."""
from __future__ import annotations

from typing import Any

import numpy as np

from .errors import DTypeError

BOOL, INT, FLOAT = 0, 1, 2  # promotion categories, lowest first


class DType:
    """A tensor element type; ``.np`` is the numpy dtype backends store."""

    __slots__ = ("name", "np", "category", "itemsize")

    name: str
    """The name, e.g. ``"float32"``."""
    np: np.dtype
    """The numpy dtype of this type's storage."""
    category: int
    """The promotion category: 0 bool, 1 integer, 2 floating point."""
    itemsize: int
    """Bytes per element."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.np = np.dtype(name)
        self.category = {"b": BOOL, "i": INT, "f": FLOAT}[self.np.kind]
        self.itemsize = self.np.itemsize

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOAT

    def __repr__(self) -> str:
        return f"shrew.{self.name}"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (as_dtype, (self.name,))


float16 = DType("float16")
float32 = DType("float32")
float64 = DType("float64")
int32 = DType("int32")
int64 = DType("int64")
bool_ = DType("bool")

ALL_DTYPES = (float16, float32, float64, int32, int64, bool_)
BY_NUMPY = {d.np: d for d in ALL_DTYPES}
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_PYTHON = {float: float32, int: int64, bool: bool_}
_SCALAR_DEFAULT = {BOOL: bool_, INT: int64, FLOAT: float32}


def from_numpy_dtype(np_dtype: Any, op: str = "tensor") -> DType:
    """The shrew dtype for a numpy dtype, or a DTypeError naming the supported ones."""
    try:
        return BY_NUMPY[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        names = ", ".join(_BY_NAME)
        raise DTypeError(f"{op}: unsupported dtype {np.dtype(np_dtype)}; "
                         f"shrew supports {names}") from None


def as_dtype(value: Any) -> DType:
    """Accept a shrew dtype, a numpy dtype, a dtype name or the Python types float/int/bool."""
    if isinstance(value, DType):
        return value
    if value in _BY_PYTHON:
        return _BY_PYTHON[value]
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    try:
        return from_numpy_dtype(value, "dtype")
    except TypeError:
        raise DTypeError(f"dtype: {value!r} is not a dtype") from None


def scalar_dtype(value: object) -> DType:
    """The dtype a bare Python number takes on its own (torch.tensor's inference).
    numpy scalars count by kind, so np.float32(2.5) is a float, not an int."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    return float32


def result_type(*operands: Any) -> DType:
    """PyTorch's promotion: the highest category wins; within it, tensors with dims
    outrank zero-dim tensors, which outrank Python scalars (scalars never widen)."""
    best_cat, best_rank = -1, -1
    best: Any = None  # the first operand sets it
    for item in operands:
        if isinstance(item, tuple):  # (dtype, ndim) for a tensor
            dtype, ndim = item
            rank = 2 if ndim else 1
        else:
            dtype, rank = scalar_dtype(item), 0
        cat = dtype.category
        if cat > best_cat or (cat == best_cat and rank > best_rank):
            best_cat, best_rank, best = cat, rank, dtype
        elif cat == best_cat and rank == best_rank and dtype.itemsize > best.itemsize:
            best = dtype
    if best_rank == 0:
        return _SCALAR_DEFAULT[best_cat]
    return best


def check_float(dtype: DType, op: str) -> None:
    if not dtype.is_floating_point:
        raise DTypeError(f"{op}: needs a floating-point tensor, got {dtype}")
