"""Tensor methods for PyTorch habits with no work to do on shrew's real, row-major tensors:
new (the legacy constructor), ravel, the conjugate family, data_ptr and
is_contiguous(memory_format=)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ops import legacy as _legacy

if TYPE_CHECKING:
    from .._tensor import Tensor


class LegacyMethods:
    __slots__ = ()

    def new(self: Any, *args: Any) -> Tensor:
        """Tensor.new (legacy): as torch.FloatTensor(*args), in this tensor's dtype and on
        its device: new() empty, new(2, 3) sizes, new([1, 2]) data."""
        return _legacy.construct("new", self.dtype, self.device, args)

    def ravel(self: Any) -> Tensor:
        """reshape(-1): a view when the memory allows it, else a copy."""
        return self.reshape(-1)

    # A real tensor is its own conjugate: PyTorch returns the tensor itself (a view).
    def conj(self: Any) -> Tensor:
        return self

    def resolve_conj(self: Any) -> Tensor:
        return self

    def resolve_neg(self: Any) -> Tensor:
        return self

    def conj_physical(self: Any) -> Tensor:
        """A copy, as PyTorch's for a real tensor (its own memory)."""
        return self.clone()

    def is_conj(self: Any) -> bool:
        return False

    def is_neg(self: Any) -> bool:
        return False

    def data_ptr(self: Any) -> int:
        """The address of the first element: numpy's (and CuPy's) pointer on cpu/cuda; on
        OpenCL, which hands out no addresses, the buffer's handle plus the byte offset: an
        int that is equal exactly when two tensors start at the same element."""
        data = self._data
        if hasattr(data, "ctypes"):  # numpy
            return int(data.ctypes.data)
        if hasattr(data, "data") and hasattr(data.data, "ptr"):  # CuPy
            return int(data.data.ptr)
        return int(data.buffer.int_ptr) + int(data.offset) * data.dtype.itemsize

    def is_contiguous(self: Any, memory_format: Any = _legacy.contiguous_format) -> bool:
        """Row-major contiguity, or PyTorch's answer for channels_last(_3d) from the
        strides (shrew never lays tensors out that way, so mostly False for 4-d ones)."""
        if memory_format is _legacy.contiguous_format:
            return bool(super().is_contiguous())  # type: ignore[misc]
        return _legacy.is_contiguous_as(self, memory_format)
