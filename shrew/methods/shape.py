"""Tensor's shape and view methods beyond the core ones in _tensor.py: one-line calls into
shrew/ops/shape/composed.py (a mixin, so that _tensor.py stays short)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any


from ..ops import inplace as _inplace
from ..ops.shape import composed as _re
from ..ops.shape import strided as _strided
from ..core.errors import ShapeError, ShrewTypeError
from ..core.shape import normalize_dim
from ..ops.shape import arrange as _arrange
from ..ops.shape import copies as _copies

if TYPE_CHECKING:
    from .._tensor import Tensor


class ShapeMethods:
    """Mixed into Tensor; every method's first argument is the Tensor itself."""

    __slots__ = ()

    # -- size queries --------------------------------------------------------------------
    def nelement(self: Any) -> int:
        return self.numel()

    def is_contiguous(self: Any) -> bool:
        """Whether the elements lie in row-major order with no gaps (as .stride() says)."""
        expected = 1
        for size, step in reversed(list(zip(self.shape, _element_strides(self._data,
                                                                          self.shape)))):
            if size != 1 and step != expected:
                return False
            expected *= size
        return True

    def stride(self: Any, dim: int | None = None) -> tuple[int, ...] | int:
        """Element (not byte) strides, as torch: those of the storage's layout."""
        steps = _element_strides(self._data, self.shape)
        return steps if dim is None else steps[normalize_dim(dim, self.ndim, "stride")]

    def storage_offset(self: Any) -> int:
        """Where the first element lies in the memory this tensor is a view of."""
        return _strided.storage_offset_of(self, _inplace.memory_root(self))

    # -- views -----------------------------------------------------------------------------
    def as_strided(self: Any, size: Sequence[int], stride: Sequence[int],
                   storage_offset: int | None = None) -> Tensor:
        return _strided.as_strided(self, size, stride, storage_offset)

    def unfold(self: Any, dimension: int, size: int, step: int) -> Tensor:
        return _strided.unfold(self, dimension, size, step)

    def view_as(self: Any, other: Tensor) -> Tensor:
        return _re.view_as(self, other)

    def reshape_as(self: Any, other: Tensor) -> Tensor:
        return _re.view_as(self, other)

    def broadcast_to(self: Any, shape: Sequence[int]) -> Tensor:
        return _re.broadcast_to(self, shape)

    def movedim(self: Any, source: int | Sequence[int],
                destination: int | Sequence[int]) -> Tensor:
        return _re.movedim(self, source, destination)

    moveaxis = movedim

    def swapaxes(self: Any, axis0: int, axis1: int) -> Tensor:
        return _re.swapaxes(self, axis0, axis1)

    swapdims = swapaxes

    def t(self: Any) -> Tensor:
        return _re.t(self)

    @property
    def mT(self: Any) -> Tensor:  # noqa: N802  (torch's name)
        return _re.mT(self)

    def unflatten(self: Any, dim: int, sizes: Sequence[int]) -> Tensor:
        return _re.unflatten(self, dim, sizes)

    def unbind(self: Any, dim: int = 0) -> tuple[Tensor, ...]:
        return _re.unbind(self, dim)

    # -- splitting ---------------------------------------------------------------------------
    def split(self: Any, split_size: int | Sequence[int],
              dim: int = 0) -> tuple[Tensor, ...]:
        return _re.split(self, split_size, dim)

    def chunk(self: Any, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        return _re.chunk(self, chunks, dim)

    def tensor_split(self: Any, indices_or_sections: int | Sequence[int] | Tensor,
                     dim: int = 0) -> tuple[Tensor, ...]:
        return _re.tensor_split(self, indices_or_sections, dim)

    # -- reordering and repeating ----------------------------------------------------------------
    def flip(self: Any, *args: int | Sequence[int],
             dims: int | Sequence[int] | None = None) -> Tensor:
        """flip(0, 1), flip((0, 1)) or flip(dims=(0, 1))."""
        if dims is None:
            dims = args[0] if len(args) == 1 else args  # type: ignore[assignment]
        elif args:
            raise ShrewTypeError("flip: give the dims positionally or as dims=, not both")
        return _re.flip(self, dims)  # type: ignore[arg-type]

    def fliplr(self: Any) -> Tensor:
        return _re.fliplr(self)

    def flipud(self: Any) -> Tensor:
        return _re.flipud(self)

    def roll(self: Any, shifts: int | Sequence[int],
             dims: int | Sequence[int] | None = None) -> Tensor:
        return _re.roll(self, shifts, dims)

    def repeat(self: Any, *sizes: int | Sequence[int]) -> Tensor:
        return _re.repeat(self, *sizes)

    def tile(self: Any, *dims: int | Sequence[int]) -> Tensor:
        return _re.tile(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int)
                        else dims)  # type: ignore[arg-type]

    def repeat_interleave(self: Any, repeats: int | Tensor,
                          dim: int | None = None, *, output_size: int | None = None) -> Tensor:
        return _re.repeat_interleave(self, repeats, dim, output_size=output_size)

    # -- diagonals and triangles -------------------------------------------------------------------
    def diagonal(self: Any, offset: int = 0, dim1: int = 0,
                 dim2: int = 1) -> Tensor:
        return _re.diagonal(self, offset, dim1, dim2)

    def diag_embed(self: Any, offset: int = 0, dim1: int = -2,
                   dim2: int = -1) -> Tensor:
        return _re.diag_embed(self, offset, dim1, dim2)

    def diag(self: Any, diagonal: int = 0) -> Tensor:
        return _re.diag(self, diagonal)

    def trace(self: Any) -> Tensor:
        return _re.trace(self)

    def tril(self: Any, diagonal: int = 0) -> Tensor:
        return _re.tril(self, diagonal)

    def triu(self: Any, diagonal: int = 0) -> Tensor:
        return _re.triu(self, diagonal)

    # more arrangements (ops/shape/arrange.py) and the out-of-place scatters and copies
    # (ops/shape/copies.py), as torch's methods
    unsafe_chunk = _arrange.unsafe_chunk
    unsafe_split = _arrange.unsafe_split
    split_with_sizes = _arrange.split_with_sizes
    hsplit = _arrange.hsplit
    vsplit = _arrange.vsplit
    dsplit = _arrange.dsplit
    rot90 = _arrange.rot90
    diagflat = _arrange.diagflat
    sum_to_size = _arrange.sum_to_size
    narrow_copy = _copies.narrow_copy
    diagonal_scatter = _copies.diagonal_scatter
    select_scatter = _copies.select_scatter
    slice_scatter = _copies.slice_scatter
    as_strided_scatter = _copies.as_strided_scatter

    @property
    def H(self: Any) -> Tensor:  # noqa: N802  (torch's name)
        """The conjugate transpose of a matrix (shrew's tensors are real: its transpose)."""
        if self.ndim > 2:
            raise ShapeError(f"Tensor.H is only supported on matrices (2-D tensors), got "
                             f"{self.ndim}-D")
        return self.t()

    @property
    def mH(self: Any) -> Tensor:  # noqa: N802  (torch's name)
        """The conjugate transpose of the last two dims (real tensors: mT)."""
        return _re.mT(self)


def _element_strides(data: object, shape: Sequence[int]) -> tuple[int, ...]:
    """The storage's strides in elements: numpy/CuPy arrays give bytes (they have an
    itemsize), OpenCL storage gives elements; a storage with none is taken as row-major."""
    steps = getattr(data, "strides", None)
    if steps is None:
        steps, acc = [], 1
        for size in reversed(shape):
            steps.append(acc)
            acc *= max(size, 1)
        return tuple(reversed(steps))
    itemsize = getattr(data, "itemsize", 1)
    return tuple(int(s) // itemsize for s in steps)
