"""Tensor's indexing methods: x[key], x[key] = v (ops/index/subscript.py), gather, scatter,
index_*, masked_*, take, put, nonzero (ops/index/composed.py)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..ops.index import composed as _indexing
from ..ops.index import subscript as _subscript


if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import Index, Scalar


class IndexingMethods:
    """Reads and writes at indices."""

    __slots__ = ()

    def __getitem__(self: Any, key: Index) -> Tensor:
        """torch's indexing: ints, slices, None, Ellipsis, integer and bool tensors/lists."""
        return _subscript.getitem(self, key)

    def __setitem__(self: Any, key: Index, value: Tensor | Scalar) -> None:
        _subscript.setitem(self, key, value)

    def index_put(self: Any, indices: Sequence[Tensor | None], values: Tensor | Scalar,
                  accumulate: bool = False) -> Tensor:
        return _subscript.index_put(self, tuple(indices), values, accumulate)

    def index_put_(self: Any, indices: Sequence[Tensor | None], values: Tensor | Scalar,
                   accumulate: bool = False) -> Tensor:
        return _subscript.index_put_(self, tuple(indices), values, accumulate)

    def gather(self: Any, dim: int, index: Tensor) -> Tensor:
        return _indexing.gather(self, dim, index)

    def scatter(self: Any, dim: int, index: Tensor, src: Tensor | Scalar | None = None, *,
                value: Scalar | None = None, reduce: str | None = None) -> Tensor:
        return _indexing.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_(self: Any, dim: int, index: Tensor, src: Tensor | Scalar | None = None, *,
                 value: Scalar | None = None, reduce: str | None = None) -> Tensor:
        return _indexing.in_place("scatter_", _indexing.scatter, self, dim, index, src,
                                  value=value, reduce=reduce)

    def scatter_add(self: Any, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return _indexing.scatter_add(self, dim, index, src)

    def scatter_add_(self: Any, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return _indexing.in_place("scatter_add_", _indexing.scatter_add, self, dim, index, src)

    def scatter_reduce(self: Any, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                       include_self: bool = True) -> Tensor:
        return _indexing.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def scatter_reduce_(self: Any, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                        include_self: bool = True) -> Tensor:
        return _indexing.in_place("scatter_reduce_", _indexing.scatter_reduce, self, dim,
                                  index, src, reduce, include_self=include_self)

    def index_select(self: Any, dim: int, index: Tensor) -> Tensor:
        return _indexing.index_select(self, dim, index)

    def index_add(self: Any, dim: int, index: Tensor, source: Tensor, *,
                  alpha: Scalar = 1) -> Tensor:
        return _indexing.index_add(self, dim, index, source, alpha=alpha)

    def index_add_(self: Any, dim: int, index: Tensor, source: Tensor, *,
                   alpha: Scalar = 1) -> Tensor:
        return _indexing.in_place("index_add_", _indexing.index_add, self, dim, index, source,
                                  alpha=alpha)

    def index_copy(self: Any, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return _indexing.index_copy(self, dim, index, source)

    def index_copy_(self: Any, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return _indexing.in_place("index_copy_", _indexing.index_copy, self, dim, index, source)

    def index_fill(self: Any, dim: int, index: Tensor, value: Tensor | Scalar) -> Tensor:
        return _indexing.index_fill(self, dim, index, value)

    def index_fill_(self: Any, dim: int, index: Tensor, value: Tensor | Scalar) -> Tensor:
        return _indexing.in_place("index_fill_", _indexing.index_fill, self, dim, index, value)

    def masked_fill(self: Any, mask: Tensor, value: Tensor | Scalar) -> Tensor:
        return _indexing.masked_fill(self, mask, value)

    def masked_fill_(self: Any, mask: Tensor, value: Tensor | Scalar) -> Tensor:
        return _indexing.in_place("masked_fill_", _indexing.masked_fill, self, mask, value)

    def masked_scatter(self: Any, mask: Tensor, source: Tensor) -> Tensor:
        return _indexing.masked_scatter(self, mask, source)

    def masked_scatter_(self: Any, mask: Tensor, source: Tensor) -> Tensor:
        return _indexing.in_place("masked_scatter_", _indexing.masked_scatter, self, mask,
                                  source)

    def masked_select(self: Any, mask: Tensor) -> Tensor:
        return _indexing.masked_select(self, mask)

    def take(self: Any, index: Tensor) -> Tensor:
        return _indexing.take(self, index)

    def take_along_dim(self: Any, indices: Tensor, dim: int | None = None) -> Tensor:
        return _indexing.take_along_dim(self, indices, dim)

    def put(self: Any, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        return _indexing.put(self, index, source, accumulate)

    def put_(self: Any, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        return _indexing.in_place("put_", _indexing.put, self, index, source, accumulate)

    def nonzero(self: Any, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
        return _indexing.nonzero(self, as_tuple=as_tuple)

    def argwhere(self: Any) -> Tensor:
        return _indexing.argwhere(self)

    index_reduce = _indexing.index_reduce
    nonzero_static = _indexing.nonzero_static
