"""ComplexTensor: a Tensor of complex64/complex128 whose storage is a real "pair" tensor.

The pair is a float32/float64 tensor of the complex tensor's shape plus a trailing dim of 2
(real, imaginary), the layout of numpy's complex arrays and of torch.view_as_real.  The
complex tensor forwards its graph state (requires_grad, grad, id, leafness) to the pair, so
the pair is what autograd sees: a leaf complex tensor's .grad is its pair's gradient read as
complex numbers.  Ops that PyTorch refuses on complex numbers, and those shrew has not
written for them, meet ``_data``, which raises a DTypeError naming the op.
"""
from __future__ import annotations

import builtins
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._tensor import Tensor
from ...core.dtype import COMPLEX_PARTS, DType, as_dtype
from ...core.errors import DTypeError, ShapeError, ShrewTypeError
from ...core.fields import AnyTensor
from ...core.shape import Size, fmt, normalize_dim

if TYPE_CHECKING:
    from ...backends.base import Backend


class ComplexTensor(Tensor):
    """A complex tensor: `_pair` holds its values as (real, imaginary) along a last dim."""

    __slots__ = ("_pair",)
    _pair: Tensor

    # -- the graph state lives on the pair -------------------------------------------------
    @property
    def _data(self) -> Any:
        op = sys._getframe(1).f_code.co_name
        raise DTypeError(f"{op}: not supported for complex tensors ({self.dtype} of shape "
                         f"{fmt(self.shape)}); torch.view_as_real(z) gives the real pairs")

    @property
    def _op(self) -> Any:  # type: ignore[override]
        return self._pair._op

    @property
    def requires_grad(self) -> builtins.bool:
        return self._pair.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: builtins.bool) -> None:
        self._pair.requires_grad = value

    @property
    def id(self) -> builtins.int:  # type: ignore[override]
        return self._pair.id

    @property
    def _grad(self) -> Tensor | None:
        g = self._pair._grad
        return None if g is None else view_as_complex(g)

    @_grad.setter
    def _grad(self, value: Tensor | None) -> None:
        self._pair._grad = None if value is None else view_as_real(value)

    @property
    def _retains_grad(self) -> builtins.bool:  # type: ignore[override]
        return self._pair._retains_grad

    def requires_grad_(self, requires_grad: builtins.bool = True) -> Tensor:
        self._pair.requires_grad_(requires_grad)
        return self

    def retain_grad(self) -> None:
        self._pair.retain_grad()

    def register_hook(self, hook: Any) -> Any:
        return self._pair.register_hook(lambda g: _hook_result(hook(view_as_complex(g))))

    def backward(self, gradient: Tensor | None = None, retain_graph: builtins.bool | None = None,
                 create_graph: builtins.bool = False, inputs: Any = None) -> Any:
        """With a complex `gradient` (PyTorch's): the real loss Re(sum(conj(gradient) * z))
        backpropagated; without one PyTorch refuses a complex output, and so does shrew."""
        if gradient is None:
            raise DTypeError(f"backward: grad can be implicitly created only for real scalar "
                             f"outputs, got {self.dtype}")
        return self._pair.backward(view_as_real(gradient), retain_graph, create_graph, inputs)

    @property
    def data(self) -> Tensor:
        return make(self._pair.data)

    @data.setter
    def data(self, value: Tensor) -> None:
        self._pair.data = view_as_real(value)

    # -- host ------------------------------------------------------------------------------
    def _host(self) -> np.ndarray:
        pairs = self._pair._host()
        if pairs.strides[-1] != pairs.itemsize or any(s % (2 * pairs.itemsize)
                                                      for s in pairs.strides[:-1]):
            pairs = np.ascontiguousarray(pairs)
        return pairs.view(self.dtype.np)[..., 0]

    def detach(self) -> Tensor:
        return make(self._pair.detach())

    def clone(self, *, memory_format: Any = None) -> Tensor:
        return make(self._pair.clone())

    def contiguous(self, memory_format: Any = None) -> Tensor:
        return make(self._pair.contiguous())

    def __deepcopy__(self, memo: dict[builtins.int, Any]) -> Tensor:
        return make(self._pair.__deepcopy__(memo))

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild, (self._pair,))

    def __bool__(self) -> builtins.bool:
        return builtins.bool(self.item())

    def __float__(self) -> builtins.float:
        raise ShrewTypeError("float: cannot convert a complex tensor to a Python float")

    def __int__(self) -> builtins.int:
        raise ShrewTypeError("int: cannot convert a complex tensor to a Python int")

    # -- shape: the op on the pair, over the leading dims ----------------------------------
    def reshape(self, *shape: Any) -> Tensor:
        sizes = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], builtins.int) \
            else shape
        return make(self._pair.reshape(*sizes, 2))

    view = reshape

    def _dim(self, d: builtins.int, op: str, extra: builtins.int = 0) -> builtins.int:
        return normalize_dim(d, self.ndim + extra, op)

    def transpose(self, dim0: builtins.int, dim1: builtins.int) -> Tensor:
        return make(self._pair.transpose(self._dim(dim0, "transpose"),
                                         self._dim(dim1, "transpose")))

    def permute(self, *dims: Any) -> Tensor:
        order = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], builtins.int) \
            else dims
        return make(self._pair.permute(*(self._dim(d, "permute") for d in order), self.ndim))

    @property
    def T(self) -> Tensor:  # noqa: N802
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self) -> Tensor:  # noqa: N802
        return self.transpose(-2, -1)

    def narrow(self, dim: builtins.int, start: Any, length: builtins.int) -> Tensor:
        return make(self._pair.narrow(self._dim(dim, "narrow"), start, length))

    def select(self, dim: builtins.int, index: builtins.int) -> Tensor:
        return make(self._pair.select(self._dim(dim, "select"), index))

    def unsqueeze(self, dim: builtins.int) -> Tensor:
        return make(self._pair.unsqueeze(self._dim(dim, "unsqueeze", 1)))

    def squeeze(self, dim: Any = None) -> Tensor:
        if dim is None:
            dims: Any = tuple(d for d, n in enumerate(self.shape) if n == 1)
        elif isinstance(dim, builtins.int):
            dims = self._dim(dim, "squeeze")
        else:
            dims = tuple(self._dim(d, "squeeze") for d in dim)
        return make(self._pair.squeeze(dims))

    def flatten(self, start_dim: builtins.int = 0, end_dim: builtins.int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        return make(self._pair.flatten(self._dim(start_dim, "flatten"),
                                       self._dim(end_dim, "flatten")))

    def expand(self, *shape: Any) -> Tensor:
        sizes = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], builtins.int) \
            else shape
        return make(self._pair.expand(*sizes, 2))

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def pad(self, pads: Any, value: Any = 0.0) -> Tensor:
        if value != 0:
            raise DTypeError(f"pad: complex tensors pad with zeros only, got value={value!r}")
        return make(self._pair.pad([0, 0, *pads]))

    def __getitem__(self, key: Any) -> Tensor:
        return make(self._pair[_pair_key(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        from . import arith
        value = arith.as_pair(value, self.dtype, self)
        self._pair[_pair_key(key)] = value

    # -- conversions -----------------------------------------------------------------------
    def to_dtype(self, dtype: Any) -> Tensor:
        """The cast the ops make (x.to_dtype): to another complex type only.  An op that
        would cast a complex input to a real type (an integer op's int64, a float-only
        op's default float) raises, naming itself, rather than drop the imaginary parts;
        the user's casts (.to, .float(), .real) go through ops/cast.py and may drop them,
        as PyTorch's do."""
        from . import arith
        if not as_dtype(dtype).is_complex:
            op = sys._getframe(1).f_code.co_name
            raise DTypeError(f"{op}: not supported for complex tensors ({self.dtype} of "
                             f"shape {fmt(self.shape)}); torch.view_as_real(z) gives the "
                             f"real pairs")
        return arith.to_dtype(self, dtype)

    def is_complex(self) -> builtins.bool:
        return True

    def conj(self) -> Tensor:
        from . import arith
        return arith.conj(self)

    conj_physical = conj

    def is_conj(self) -> builtins.bool:
        return False  # shrew's conj() computes; no lazy conjugate bit

    def resolve_conj(self) -> Tensor:
        return self

    def resolve_neg(self) -> Tensor:
        return self

    @property
    def real(self) -> Tensor:
        return real(self)

    @real.setter
    def real(self, value: Any) -> None:
        real(self).copy_(value)

    @property
    def imag(self) -> Tensor:
        return imag(self)

    @imag.setter
    def imag(self, value: Any) -> None:
        imag(self).copy_(value)

    # -- what PyTorch defines beyond the elementwise kernels' dispatch -----------------------
    def __iter__(self) -> Any:
        return (self.select(0, i) for i in range(len(self)))

    def __eq__(self, other: Any) -> Any:
        from . import arith
        return arith.equal_elements(self, other, False)

    def __ne__(self, other: Any) -> Any:
        from . import arith
        return arith.equal_elements(self, other, True)

    __hash__ = Tensor.__hash__

    def eq(self, other: Any) -> Tensor:
        return self.__eq__(other)

    def ne(self, other: Any) -> Tensor:
        return self.__ne__(other)

    def __pow__(self, exponent: Any) -> Tensor:
        from . import arith
        return arith.power(self, exponent)

    def pow(self, exponent: Any) -> Tensor:
        return self.__pow__(exponent)

    def _update(self, value: Tensor) -> Tensor:
        """An in-place op: the new values written through the pair (ops/inplace.py)."""
        from . import arith
        self._pair.copy_(arith.as_pair(value, self.dtype, self))
        return self

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self._update(self + (other if alpha == 1 else other * alpha))

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self._update(self - (other if alpha == 1 else other * alpha))

    def mul_(self, other: Any) -> Tensor:
        return self._update(self * other)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        if rounding_mode is not None:
            raise DTypeError(f"div_: rounding_mode={rounding_mode!r} is not supported for "
                             f"complex tensors")
        return self._update(self / other)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    def zero_(self) -> Tensor:
        self._pair.zero_()
        return self

    def copy_(self, src: Any, non_blocking: builtins.bool = False) -> Tensor:
        from . import arith
        self._pair.copy_(arith.as_pair(src, self.dtype, self))
        return self


def _hook_result(out: Tensor | None) -> Tensor | None:
    return None if out is None else view_as_real(out)


def _rebuild(pair: Tensor) -> Tensor:
    return make(pair)


def _pair_key(key: Any) -> Any:
    """An index of the complex tensor as an index of its pair: the same, then all of the
    pair's last dim."""
    parts = key if isinstance(key, tuple) else (key,)
    if any(p is Ellipsis for p in parts):
        return (*parts, slice(None))
    return (*parts, Ellipsis, slice(None))


_COMPLEX_OF = {np.dtype(np.float32): as_dtype("complex64"),
               np.dtype(np.float64): as_dtype("complex128")}


def make(pair: Tensor) -> Tensor:
    """The complex tensor whose values are `pair` (float32 or float64, last dim 2),
    sharing its memory and graph."""
    z = object.__new__(ComplexTensor)
    z._pair = pair
    z._backend = pair._backend
    z.shape = Size(pair.shape[:-1])
    z.dtype = _COMPLEX_OF[pair.dtype.np]
    return z


def view_as_real(input: Tensor) -> Tensor:  # noqa: A002  (torch's name)
    """The real view of a complex tensor: its shape plus a last dim of 2 (real, imaginary),
    sharing memory and gradient (torch.view_as_real)."""
    if not isinstance(input, AnyTensor):
        raise ShrewTypeError(f"view_as_real: expected a Tensor, got {type(input).__name__}")
    if not isinstance(input, ComplexTensor):
        raise DTypeError(f"view_as_real: is only supported for complex tensors, got "
                         f"{input.dtype}")
    return input._pair


def view_as_complex(input: Tensor) -> Tensor:  # noqa: A002
    """The complex view of a float32/float64 tensor whose last dim is 2 (torch's)."""
    if not isinstance(input, AnyTensor):
        raise ShrewTypeError(f"view_as_complex: expected a Tensor, got {type(input).__name__}")
    if input.dtype.np not in _COMPLEX_OF:
        raise DTypeError(f"view_as_complex: is only supported for float32 and float64 "
                         f"tensors, got {input.dtype}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise ShapeError(f"view_as_complex: tensor must have a last dimension of size 2, got "
                         f"shape {fmt(input.shape)}")
    return make(input)


def from_host(host: np.ndarray, backend: Backend, dtype: DType, requires_grad: bool) -> Tensor:
    """A new leaf complex tensor holding the complex host array `host` (copied) in dtype."""
    from ..creation import tensor
    arr = np.array(host, dtype=dtype.np, order="C")  # (ascontiguousarray makes 0-d 1-d)
    pairs = arr.reshape(arr.shape + (1,)).view(COMPLEX_PARTS[dtype].np)
    return make(tensor(pairs, device=backend.device, requires_grad=requires_grad))


def share_host(arr: Any, backend: Backend) -> Tensor:
    """A complex tensor sharing the memory of `arr`, a complex numpy (or CuPy) array
    (from_numpy, from_dlpack), its pairs a real view of it."""
    from ...core.fields import wrap
    if arr.strides and (any(s % arr.itemsize for s in arr.strides)):
        arr = arr.copy()
    pairs = arr[..., None].view(COMPLEX_PARTS[as_dtype(arr.dtype)].np)
    return make(wrap(pairs, backend))


def real(input: Tensor) -> Tensor:  # noqa: A002
    """The real parts, a view (torch.real); a real tensor itself."""
    if not isinstance(input, ComplexTensor):
        if not isinstance(input, AnyTensor):
            raise ShrewTypeError(f"real: expected a Tensor, got {type(input).__name__}")
        return input
    return input._pair.select(-1, 0)


def imag(input: Tensor) -> Tensor:  # noqa: A002
    """The imaginary parts, a view (torch.imag); refused for real tensors, as PyTorch."""
    if not isinstance(input, ComplexTensor):
        raise DTypeError(f"imag: is not implemented for tensors with non-complex dtypes, got "
                         f"{getattr(input, 'dtype', type(input).__name__)}")
    return input._pair.select(-1, 1)


