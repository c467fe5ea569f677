"""Tensor's device and dtype conversions (ops/cast.py): to, cpu, float(), long(), ...

A mixin of its own because its methods are named after the builtins float, int and bool,
which would shadow them in the annotations of the rest of the class."""
from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from ..core import dtype as D
from ..ops import comparison as _comparison
from ..ops import cast as _cast

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import DTypeLike


class CastMethods:
    """Conversions between devices and dtypes."""

    __slots__ = ()

    def to(self: Any, *args: Any, **kwargs: Any) -> Tensor:
        """to(dtype), to(device=None, dtype=None), to(other); non_blocking=, copy=,
        memory_format= accepted (ops/cast.py)."""
        return _cast.to(self, *args, **kwargs)

    def cpu(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_device(self, "cpu")

    def cuda(self: Any, device: Any = None, non_blocking: builtins.bool = False,
             memory_format: Any = None) -> Tensor:
        """A copy on CUDA device `device` (an index, "cuda:N"; None: the current one); a
        DeviceError saying why when no CUDA device is usable."""
        from ..cuda import _cuda
        return _cast.to_device(self, _cuda.device_string(device, "Tensor.cuda"))

    def type_as(self: Any, other: Tensor) -> Tensor:
        """This tensor in other's dtype."""
        return _cast.to_dtype(self, other.dtype)

    # -- whole-tensor comparisons (ops/comparison.py), here with the other conversions ---------
    def isclose(self: Any, other: Tensor, rtol: builtins.float = 1e-05,
                atol: builtins.float = 1e-08, equal_nan: builtins.bool = False) -> Tensor:
        return _comparison.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self: Any, other: Tensor, rtol: builtins.float = 1e-05,
                 atol: builtins.float = 1e-08, equal_nan: builtins.bool = False
                 ) -> builtins.bool:
        return _comparison.allclose(self, other, rtol, atol, equal_nan)

    def equal(self: Any, other: Tensor) -> builtins.bool:
        return _comparison.equal(self, other)

    # -- dtype (ops/cast.py) ----------------------------------------------------------------
    # float() ... bool(): memory_format is accepted (shrew's tensors are always row-major)
    def to_dtype(self: Any, dtype: DTypeLike) -> Tensor:
        return _cast.to_dtype(self, dtype)

    def type(self: Any, dtype: DTypeLike | str | type | None = None,
             non_blocking: builtins.bool = False) -> Tensor | str:
        return _cast.type_(self, dtype, non_blocking)

    def float(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.float32)

    def double(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.float64)

    def half(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.float16)

    def bfloat16(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.bfloat16)

    def long(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.int64)

    def int(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.int32)

    def short(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.int16)

    def char(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.int8)

    def byte(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.uint8)

    def bool(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.bool_)

    def is_floating_point(self: Any) -> builtins.bool: return self.dtype.is_floating_point
    def is_complex(self: Any) -> builtins.bool: return self.dtype.is_complex

    # complex types (ops/complex/): a complex tensor's methods are in ops/complex/pair.py
    def cfloat(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.complex64)

    def cdouble(self: Any, memory_format: Any = None) -> Tensor:
        return _cast.to_dtype(self, D.complex128)
    def element_size(self: Any) -> builtins.int: return self.dtype.itemsize

    @property
    def itemsize(self: Any) -> builtins.int:
        return self.dtype.itemsize

    @property
    def nbytes(self: Any) -> builtins.int:
        """The bytes of its elements (numel times the element size; a view's own, not its
        storage's), as PyTorch's."""
        return self.numel() * self.dtype.itemsize

