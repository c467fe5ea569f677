"""Tensor's layout methods: a dense tensor is strided; to_sparse makes its sparse COO form
(shrew/ops/sparse/coo.py), to_dense is itself."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.layout import strided
from ..ops.sparse.coo import SparseTensor, to_sparse

if TYPE_CHECKING:
    from .._tensor import Tensor


class SparseMethods:
    __slots__ = ()
    is_sparse = False
    is_sparse_csr = False
    layout = strided

    def to_sparse(self: Any, sparse_dim: int | None = None, **kwargs: Any) -> SparseTensor:
        """The nonzero elements as a sparse COO tensor (sparse_dim: how many leading dims
        are sparse; the rest are stored dense per element)."""
        return to_sparse(self, sparse_dim, **kwargs)

    def to_sparse_coo(self: Any) -> SparseTensor:
        return self.to_sparse()

    def to_dense(self: Any, dtype: Any = None) -> Tensor:
        """A dense tensor is its own dense form (as PyTorch)."""
        return self if dtype is None else self.to(dtype=dtype)
