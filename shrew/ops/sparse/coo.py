"""Sparse COO tensors: SparseTensor, sparse_coo_tensor and the dense <-> sparse conversions.

A SparseTensor is not a dense Tensor with other storage but a small class of its own that
holds two dense tensors, `indices` [sparse_dim, nnz] (int64) and `values` [nnz, *dense
sizes], and the size.  Every sparse operation is a composition of dense ones on those two
(index_select, index_add, gather), so it runs on every backend, and autograd needs nothing
new: gradients flow into `values`, whose gradient is the sparse tensor's, with the same
pattern.  A dense-only operation given a SparseTensor raises UnsupportedError naming it
(its methods through __getattr__; functions through core.errors.not_a_tensor).

Coalescing (sorting the coordinates and summing duplicates) and converting a dense tensor
(finding its nonzeros) depend on the data for their sizes, so they read the indices back
once, as PyTorch's do."""
from __future__ import annotations

import numbers
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...core.dtype import as_dtype, int64
from ...core.errors import (ArgumentError, DeviceError, DTypeError, ShapeError,
                            ShrewIndexError, ShrewTypeError, sparse_unsupported)
from ...core.fields import AnyTensor
from ...core.layout import sparse_coo
from ...core.shape import Size, fmt, normalize_dim, numel
from ..creation import tensor, zeros

if TYPE_CHECKING:
    from types import FrameType

    from ..._tensor import Tensor
    from ...typing import DTypeLike


class SparseTensor:
    """A sparse tensor in COO form (torch.sparse_coo): the coordinates of its specified
    elements, `indices` [sparse_dim, nnz], their `values` [nnz, *dense sizes], and its size.
    Duplicate coordinates sum; coalesce() sorts them and adds duplicates up."""

    __slots__ = ("_i", "_v", "_size", "_coalesced", "__weakref__")
    _i: Tensor  # int64 [sparse_dim, nnz]
    _v: Tensor  # [nnz, *dense sizes]
    _size: Size
    _coalesced: bool  # coordinates sorted and distinct
    is_sparse = True
    is_sparse_csr = False
    layout = sparse_coo

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise ShrewTypeError("SparseTensor: build one with shrew.sparse_coo_tensor(indices, "
                             "values, size) or dense.to_sparse()")

    @classmethod
    def _make(cls, indices: Tensor, values: Tensor, size: Sequence[int],
              coalesced: bool) -> SparseTensor:
        """A SparseTensor of checked parts."""
        s = object.__new__(cls)
        s._i, s._v, s._size, s._coalesced = indices, values, Size(size), coalesced
        return s

    # -- attributes ------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return self._size

    def size(self, dim: int | None = None) -> Any:
        return self._size if dim is None else self._size[normalize_dim(dim, len(self._size),
                                                                        "size")]

    def dim(self) -> int:
        return len(self._size)

    ndim = property(dim)

    def numel(self) -> int:
        return numel(self._size)

    @property
    def dtype(self) -> Any:
        return self._v.dtype

    @property
    def device(self) -> Any:
        return self._v.device

    @property
    def is_cuda(self) -> bool:
        return self._v.is_cuda

    def sparse_dim(self) -> int:
        return self._i.shape[0]

    def dense_dim(self) -> int:
        return self._v.ndim - 1

    def _nnz(self) -> int:
        return self._i.shape[1]

    def is_coalesced(self) -> bool:
        return self._coalesced

    def _indices(self) -> Tensor:
        """The coordinates as stored (duplicates and order kept)."""
        return self._i

    def _values(self) -> Tensor:
        """The values as stored, differentiable."""
        return self._v

    def indices(self) -> Tensor:
        self._need_coalesced("indices")
        return self._i

    def values(self) -> Tensor:
        self._need_coalesced("values")
        return self._v

    def _need_coalesced(self, op: str) -> None:
        if not self._coalesced:
            raise ArgumentError(f"{op}: cannot get {op} of an uncoalesced sparse tensor; "
                                f"call .coalesce() first (or ._{op}() for the stored ones)")

    # -- autograd: through the values ------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._v.requires_grad

    @property
    def is_leaf(self) -> bool:
        return self._v.is_leaf

    @property
    def grad_fn(self) -> Any:
        return self._v.grad_fn

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        self._v.requires_grad_(requires_grad)
        return self

    @property
    def grad(self) -> SparseTensor | None:
        """A leaf's gradient: sparse, on this tensor's (coalesced) pattern, as PyTorch's
        sparse.mm gives.  Each stored element's gradient is that of its position, so a
        position stored twice takes the one value (the mean of equal ones)."""
        g = self._v.grad
        if g is None:
            return None
        return coalesce(SparseTensor._make(self._i, g, self._size, self._coalesced), "mean")

    @grad.setter
    def grad(self, value: None) -> None:
        if value is not None:
            raise sparse_unsupported("grad (assigning a gradient)")
        self._v.grad = None

    def detach(self) -> SparseTensor:
        return SparseTensor._make(self._i, self._v.detach(), self._size, self._coalesced)

    def clone(self) -> SparseTensor:
        return SparseTensor._make(self._i.clone(), self._v.clone(), self._size,
                                  self._coalesced)

    # -- conversions -----------------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> SparseTensor:
        """Both parts moved or cast as Tensor.to does (the indices keep int64)."""
        values = self._v.to(*args, **kwargs)
        indices = self._i.to(values.device)
        return SparseTensor._make(indices, values, self._size, self._coalesced)

    def cpu(self) -> SparseTensor:
        return self.to("cpu")

    def double(self) -> SparseTensor:
        return self.to(dtype=as_dtype("float64"))

    def float(self) -> SparseTensor:
        return self.to(dtype=as_dtype("float32"))

    def coalesce(self) -> SparseTensor:
        return coalesce(self, "sum")

    def to_dense(self, dtype: DTypeLike | None = None) -> Tensor:
        """The dense tensor: zeros, with each stored value added at its coordinates."""
        k = self.sparse_dim()
        rows = numel(self._size[:k])
        dense = zeros((rows, *self._size[k:]), dtype=self._v.dtype, device=self._v.device)
        out = add_rows(dense, _linear(self._i, self._size[:k]), self._v).reshape(*self._size)
        return out if dtype is None else out.to(dtype=dtype)

    def to_sparse(self, *args: Any, **kwargs: Any) -> SparseTensor:
        return self

    to_sparse_coo = to_sparse

    # -- shape -----------------------------------------------------------------------------
    def transpose(self, dim0: int, dim1: int) -> SparseTensor:
        """Two sparse dims swapped: their rows of indices exchanged (no longer sorted)."""
        d0, d1 = (normalize_dim(d, self.ndim, "transpose") for d in (dim0, dim1))
        k = self.sparse_dim()
        if max(d0, d1) >= k:
            raise sparse_unsupported("transpose of a dense dim")
        order = list(range(k))
        order[d0], order[d1] = order[d1], order[d0]
        size = list(self._size)
        size[d0], size[d1] = size[d1], size[d0]
        indices = self._i.index_select(0, tensor(order, dtype=int64, device=self._i.device))
        return SparseTensor._make(indices, self._v, size, self._coalesced and d0 == d1)

    def t(self) -> SparseTensor:
        if self.ndim > 2:
            raise ShapeError(f"t: expects a tensor of at most 2 dims, got {fmt(self._size)}")
        return self if self.ndim < 2 else self.transpose(0, 1)

    T = property(t)

    # -- arithmetic ------------------------------------------------------------------------
    def _scaled(self, values: Tensor) -> SparseTensor:
        return SparseTensor._make(self._i, values, self._size, self._coalesced)

    def __neg__(self) -> SparseTensor:
        return self._scaled(-self._v)

    def __mul__(self, other: Any) -> SparseTensor:
        """By a number, or elementwise by a dense tensor of the same size (its entries at
        the stored coordinates)."""
        if _is_scalar(other):
            return self._scaled(self._v * other)
        if isinstance(other, AnyTensor) and tuple(other.shape) == tuple(self._size):
            k = self.sparse_dim()
            picked = other.reshape(numel(self._size[:k]), *self._size[k:]).index_select(
                0, _linear(self._i, self._size[:k]))
            return self._scaled(self._v * picked)
        raise sparse_unsupported(f"mul by {_kind(other)}")

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> SparseTensor:
        if _is_scalar(other):
            return self._scaled(self._v / other)
        raise sparse_unsupported(f"div by {_kind(other)}")

    def __add__(self, other: Any) -> SparseTensor:
        """sparse + sparse: both sets of elements (coalesced where both were)."""
        if not isinstance(other, SparseTensor):
            # as PyTorch: dense + sparse works (__radd__), sparse + dense does not
            raise sparse_unsupported(f"add of a sparse tensor and {_kind(other)} (write "
                                     f"dense + sparse)")
        if other._size != self._size or other.sparse_dim() != self.sparse_dim():
            raise ShapeError(f"add: sparse tensors of sizes {fmt(self._size)} and "
                             f"{fmt(other._size)} (sparse dims {self.sparse_dim()} and "
                             f"{other.sparse_dim()}) do not match")
        from ..shape.recorded import cat
        both = SparseTensor._make(cat([self._i, other._i], 1), cat([self._v, other._v], 0),
                                  self._size, False)
        return both.coalesce() if self._coalesced and other._coalesced else both

    def __radd__(self, other: Any) -> Tensor:
        """dense + sparse: a dense tensor."""
        if isinstance(other, AnyTensor):
            return other + self.to_dense()
        raise sparse_unsupported(f"add of {_kind(other)} and a sparse tensor")

    def __sub__(self, other: Any) -> SparseTensor:
        if isinstance(other, SparseTensor):
            return self + (-other)
        raise sparse_unsupported(f"sub of a sparse tensor and {_kind(other)}")

    def __rsub__(self, other: Any) -> Tensor:
        if isinstance(other, AnyTensor):
            return other - self.to_dense()
        raise sparse_unsupported(f"sub of {_kind(other)} and a sparse tensor")

    def __matmul__(self, other: Any) -> Tensor:
        from .products import mm, mv
        return mv(self, other) if isinstance(other, AnyTensor) and other.ndim == 1 else \
            mm(self, other)

    def mm(self, other: Tensor) -> Tensor:
        from .products import mm
        return mm(self, other)

    def matmul(self, other: Tensor) -> Tensor:
        return self @ other

    def sum(self, dim: int | Sequence[int] | None = None, keepdim: bool = False,
            dtype: DTypeLike | None = None) -> Any:
        """torch.sparse.sum: dense when every dim is summed, else sparse."""
        if keepdim:
            raise sparse_unsupported("sum(keepdim=True)")
        from .products import sparse_sum
        return sparse_sum(self, dim, dtype)

    def __getattr__(self, name: str) -> Any:
        """Anything else is a dense-only operation: say which, and how to go dense.  A
        private field (a dense op reading its storage) names the op the user called."""
        if name.startswith("__"):
            raise AttributeError(name)
        raise sparse_unsupported(_called_op() if name.startswith("_") else name)

    def __bool__(self) -> bool:
        raise sparse_unsupported("bool")

    def __len__(self) -> int:
        if not self._size:
            raise ShrewTypeError("len() of a 0-d tensor")
        return self._size[0]

    def __repr__(self) -> str:
        pad = " " * 7
        indices = repr(self._i).replace("\n", "\n" + pad + " " * 8)
        values = repr(self._v).replace("\n", "\n" + pad + " " * 7)
        extra = "" if self._v.grad_fn is None else f", grad_fn=<{self._v.grad_fn.name()}>"
        return (f"tensor(indices={indices},\n{pad}values={values},\n{pad}"
                f"size={tuple(self._size)}, nnz={self._nnz()}, layout=shrew.sparse_coo"
                f"{extra})")


def _called_op() -> str:
    """The outermost shrew function on the stack (a decorator's wrapper skipped): the
    operation the user called."""
    frame: FrameType | None = sys._getframe(2)
    name = "this operation"
    while frame is not None:
        code = frame.f_code
        if frame.f_globals.get("__name__", "").startswith("shrew.") and \
                "<locals>" not in getattr(code, "co_qualname", ""):  # Python 3.11 on
            name = code.co_name
        frame = frame.f_back
    return name


def _is_scalar(x: object) -> bool:
    """A Python number or a 0-d tensor: what scales every value alike."""
    return isinstance(x, (int, float, numbers.Number)) or (isinstance(x, AnyTensor) and
                                                           x.ndim == 0)


def _kind(x: object) -> str:
    if isinstance(x, SparseTensor):
        return "a sparse tensor"
    if isinstance(x, AnyTensor):
        return f"a dense tensor of shape {fmt(x.shape)}"
    return type(x).__name__


def add_rows(out: Tensor, index: Tensor, rows: Tensor) -> Tensor:
    """out with each row of `rows` added into out's row `index` (index_add along dim 0).
    With no rows the result still depends on `rows` (a zero gradient), as PyTorch's does:
    index_add returns out alone for an empty index."""
    if index.shape[0] == 0:
        return out + rows.sum() if rows.requires_grad else out
    return out.index_add(0, index, rows)


def _linear(indices: Tensor, sizes: Sequence[int]) -> Tensor:
    """Each coordinate's position in C order among `sizes` (one int64 per column)."""
    linear = indices[0]
    for d in range(1, len(sizes)):
        linear = linear * sizes[d] + indices[d]
    return linear


def _unravel(positions: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """_linear's inverse on the host: [len(sizes), n] coordinates."""
    return np.stack(np.unravel_index(positions, tuple(sizes))) if len(positions) else \
        np.zeros((len(sizes), 0), np.int64)


def coalesce(s: SparseTensor, reduce: str) -> SparseTensor:
    """s with its coordinates sorted and duplicates combined (summed, or for a gradient on
    the pattern averaged)."""
    if s._coalesced:
        return s
    k = s.sparse_dim()
    sizes = s._size[:k]
    host = s._i.numpy().astype(np.int64)
    positions = np.ravel_multi_index(tuple(host), tuple(sizes)) if host.shape[1] else \
        np.zeros(0, np.int64)
    unique, inverse, counts = np.unique(positions, return_inverse=True, return_counts=True)
    device = s._v.device
    values = add_rows(zeros((len(unique), *s._size[k:]), dtype=s._v.dtype, device=device),
                      tensor(inverse.reshape(-1).astype(np.int64), device=device), s._v)
    if reduce == "mean" and (counts > 1).any():
        shape = (len(unique),) + (1,) * (values.ndim - 1)
        values = values / tensor(counts.reshape(shape), dtype=values.dtype, device=device)
    indices = tensor(_unravel(unique, sizes).astype(np.int64), device=device)
    return SparseTensor._make(indices, values, s._size, True)


def sparse_coo_tensor(indices: Any, values: Any, size: Sequence[int] | None = None, *,
                      dtype: DTypeLike | None = None, device: Any = None,
                      requires_grad: bool = False, check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> SparseTensor:
    """torch.sparse_coo_tensor: a sparse tensor with `values` [nnz, *dense sizes] at the
    coordinates `indices` [sparse_dim, nnz].  size=None takes each sparse dim's largest
    index plus one.  Indices are checked against the size (PyTorch's check_invariants
    checks, here always on).  is_coalesced=True promises sorted, distinct coordinates."""
    op = "sparse_coo_tensor"
    v = values if isinstance(values, AnyTensor) else tensor(values, dtype=dtype)
    if dtype is not None:
        v = v.to(dtype=dtype)
    if device is not None:
        v = v.to(device)
    i = indices if isinstance(indices, AnyTensor) else tensor(indices, dtype=int64)
    if i.dtype.is_floating_point or i.dtype.name == "bool":
        raise DTypeError(f"{op}: indices must be an integer tensor, got {i.dtype}")
    i = i.to(v.device, dtype=int64)
    if i.ndim != 2:
        raise ShapeError(f"{op}: indices must be 2-d [sparse_dim, nnz], got {fmt(i.shape)}")
    if v.ndim < 1 or v.shape[0] != i.shape[1]:
        raise ShapeError(f"{op}: values {fmt(v.shape)} must have one row per index column "
                         f"(nnz {i.shape[1]})")
    k = i.shape[0]
    if k < 1:
        raise ShapeError(f"{op}: indices need at least one sparse dim, got {fmt(i.shape)}")
    host = i.numpy()
    if size is None:
        size = tuple(int(m) + 1 for m in host.max(1)) if host.shape[1] else (0,) * k
        size = (*size, *v.shape[1:])
    size = tuple(int(n) for n in size)
    if len(size) != k + v.ndim - 1 or size[k:] != tuple(v.shape[1:]):
        raise ShapeError(f"{op}: size {size} does not fit {k} sparse dims and values "
                         f"{fmt(v.shape)} (their dims after the first are the dense dims)")
    if host.shape[1]:
        low, high = host.min(1), host.max(1)
        for d in range(k):
            if low[d] < 0 or high[d] >= size[d]:
                bad = low[d] if low[d] < 0 else high[d]
                raise ShrewIndexError(f"{op}: index {bad} of sparse dim {d} is out of range "
                                      f"for size {size[d]}")
    if requires_grad:
        if not v.dtype.is_floating_point:
            raise DTypeError(f"{op}: only floating-point tensors can require grad, "
                             f"got {v.dtype}")
        v = v.detach().requires_grad_()
    return SparseTensor._make(i, v, size, bool(is_coalesced) or host.shape[1] <= 1)


def to_sparse(x: Tensor, sparse_dim: int | None = None, *, layout: Any = None,
              blocksize: Any = None, dense_dim: int | None = None) -> SparseTensor:
    """Tensor.to_sparse: the nonzero elements of x (with sparse_dim < x.ndim, the slices
    over the last dims that hold a nonzero) as a coalesced sparse COO tensor; its values
    are read from x, so gradients flow back into x."""
    op = "to_sparse"
    if layout not in (None, sparse_coo) or blocksize is not None:
        raise sparse_unsupported(f"{op} to layout {layout} (only shrew.sparse_coo)")
    if x.ndim == 0:
        raise ShapeError(f"{op}: needs at least one dim, got a 0-d tensor")
    k = x.ndim if sparse_dim is None else sparse_dim
    if dense_dim is not None:
        k = x.ndim - dense_dim
    if not 1 <= k <= x.ndim:
        raise ArgumentError(f"{op}: sparse_dim must be in [1, {x.ndim}] for a tensor of "
                            f"shape {fmt(x.shape)}, got {k}")
    mask = x.detach() != 0
    if k < x.ndim:
        mask = mask.any(dim=tuple(range(k, x.ndim)))
    coords = cast("Tensor", mask.nonzero())  # [nnz, k]
    indices = coords.t().contiguous()
    rows = numel(x.shape[:k])
    values = x.reshape(rows, *x.shape[k:]).index_select(0, _linear(indices, x.shape[:k])) \
        if coords.shape[0] else x.reshape(rows, *x.shape[k:])[:0]
    return SparseTensor._make(indices, values, x.shape, True)


def check_pair(op: str, s: SparseTensor, d: Any, ndim: int = 2) -> None:
    """A sparse matrix and a dense operand on one device, in one dtype."""
    if not isinstance(d, AnyTensor):
        raise (sparse_unsupported(f"{op} of two sparse tensors") if isinstance(d, SparseTensor)
               else ShrewTypeError(f"{op}: the dense operand must be a shrew.Tensor, got "
                                   f"{type(d).__name__}"))
    if s.ndim != 2 or s.dense_dim() != 0:
        raise ShapeError(f"{op}: the sparse operand must be a 2-d matrix with 2 sparse dims, "
                         f"got size {fmt(s.shape)} with {s.sparse_dim()} sparse dims")
    if d.ndim != ndim:
        raise ShapeError(f"{op}: the dense operand must be {ndim}-d, got {fmt(d.shape)}")
    if s.shape[1] != d.shape[0]:
        raise ShapeError(f"{op}: inner dimensions differ: {fmt(s.shape)} and {fmt(d.shape)}")
    if s.dtype != d.dtype:
        raise DTypeError(f"{op}: operands must share a dtype, got {s.dtype} and {d.dtype}")
    if s.device != d.device:
        raise DeviceError(f"{op}: operands are on different devices ({s.device} and "
                          f"{d.device}); move them with .to(device) first")
