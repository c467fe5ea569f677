"""Tensor: backend-agnostic; every differentiable method records one Op variant."""
from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import diagnostics as _diagnostics
from . import op as O
from .backends.registry import get_backend
from .dtype import (BY_NUMPY as _BY_NUMPY, FLOAT, DType, as_dtype, bool_, check_float, float32,
                    from_numpy_dtype, int64, result_type, scalar_dtype)
from .errors import DeviceError, DTypeError, ShapeError, ShrewError
from .grad_mode import is_grad_enabled
from .shape import (broadcast_shapes, fmt, infer_reshape, normalize_dim, normalize_dims,
                    numel)

if TYPE_CHECKING:
    import builtins

    import numpy.typing as npt

    from .backends.base import Backend, Storage
    from .backprop import GradStore
    from .typing import DTypeLike, Dims, Index, Scalar, ShapeLike, TensorData

_ids = itertools.count(1)

# Unary functions that only make sense on floats: an integer input is promoted to float32.
_FLOAT_UNARY = frozenset(("exp", "log", "sqrt", "sigmoid", "tanh", "gelu", "gelu_tanh",
                          "silu", "sin", "cos", "erf", "gelu_derivative",
                          "gelu_tanh_derivative"))


def _wrap(data: Storage, backend: Backend, op: O.Op | None = None) -> Tensor:
    """A new tensor around backend storage; records `op` when it is given."""
    t = object.__new__(Tensor)
    t._data = data
    t._backend = backend
    t.shape = data.shape
    t.dtype = _BY_NUMPY[data.dtype]
    t._op = op
    t.requires_grad = op is not None
    t.id = next(_ids)
    t.grad = None
    t._retains_grad = False
    if op is not None and _diagnostics.active:
        _diagnostics.record_site(t)
    return t


def _record(data: Storage, backend: Backend, op: O.Op, *inputs: Tensor) -> Tensor:
    """Wrap `data`, keeping `op` only if some input needs grad and recording is on."""
    for x in inputs:
        if x.requires_grad:
            if is_grad_enabled():
                return _wrap(data, backend, op)
            break
    return _wrap(data, backend)


def _same_device(op: str, *tensors: Tensor) -> None:
    first = tensors[0]._backend
    for t in tensors[1:]:
        if t._backend is not first:
            devs = " and ".join(dict.fromkeys(x.device for x in tensors))
            raise DeviceError(f"{op}: tensors are on different devices ({devs}); "
                              f"move them with .to(device) first")


def _host_array(data: object, op: str = "tensor") -> np.ndarray:
    """Python data (scalar or nested lists) as a numpy array with torch's dtype inference."""
    try:
        arr = np.array(data)
    except (ValueError, TypeError) as exc:
        raise ShapeError(f"{op}: data is not a rectangular nested list of numbers "
                         f"({exc})") from None
    except OverflowError as exc:
        raise DTypeError(f"{op}: a number does not fit in int64 ({exc})") from None
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        return arr.astype(np.float32)
    raise DTypeError(f"{op}: cannot make a tensor from data of numpy dtype {arr.dtype} "
                     f"(expected numbers, bools or nested lists of them)")


class Tensor:
    """An n-dimensional array on a device, recording how it was made for backward."""

    __slots__ = ("_data", "_backend", "shape", "dtype", "_op", "requires_grad", "id",
                 "grad", "_retains_grad", "__weakref__")
    __array_ufunc__ = None  # numpy defers to our reflected operators (np.float32(2) * t)

    shape: tuple[int, ...]
    """The size of each dim."""
    dtype: DType
    """The element type, e.g. ``shrew.float32``."""
    requires_grad: bool
    """Whether backward computes a gradient for this tensor (floating-point tensors only)."""
    id: int
    """Unique in the process: it keys gradients (GradStore) and optimizer state."""
    grad: Tensor | None
    """A leaf's accumulated gradient (each backward adds to it), else None."""
    _data: Storage
    _backend: Backend
    _op: O.Op | None
    _retains_grad: bool

    def __init__(self, data: TensorData, dtype: DTypeLike | None = None, device: str = "cpu",
                 requires_grad: bool = False) -> None:
        backend = get_backend(device)
        if isinstance(data, Tensor):
            host = data.numpy()
            inferred = data.dtype
        elif isinstance(data, (np.ndarray, np.generic)):  # numpy scalars keep their dtype too
            host = np.asarray(data)
            inferred = from_numpy_dtype(data.dtype)
        else:
            host = _host_array(data)
            inferred = _BY_NUMPY[host.dtype]
        dtype = inferred if dtype is None else as_dtype(dtype)
        _check_device_dtype(backend, dtype, "tensor")
        if requires_grad and not dtype.is_floating_point:
            raise DTypeError(f"tensor: only floating-point tensors can require grad, got {dtype}")
        storage = backend.from_numpy(np.asarray(host, dtype=dtype.np))
        self._data = storage
        self._backend = backend
        self.shape = storage.shape
        self.dtype = dtype
        self._op = None
        self.requires_grad = bool(requires_grad)
        self.id = next(_ids)
        self.grad = None
        self._retains_grad = False

    # -- attributes ----------------------------------------------------------------------
    @property
    def device(self) -> str:
        return self._backend.device

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def op(self) -> O.Op | None:
        return self._op

    @property
    def is_leaf(self) -> bool:
        return self._op is None

    def numel(self) -> int:
        return numel(self.shape)

    @overload
    def size(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def size(self, dim: int) -> int: ...
    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        if dim is None:
            return self.shape
        return self.shape[normalize_dim(dim, self.ndim, "size")]

    def dim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if not self.is_leaf:
            raise ShrewError("requires_grad_: only leaf tensors can change requires_grad")
        if requires_grad and not self.dtype.is_floating_point:
            raise DTypeError(f"requires_grad_: only floating-point tensors can require grad, "
                             f"got {self.dtype}")
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in the GradStore and in .grad."""
        self._retains_grad = True

    # -- host --------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        return self._backend.to_numpy(self._data)

    def item(self) -> int | float | bool:
        if numel(self.shape) != 1:
            raise ShapeError(f"item: needs a tensor with one element, got shape {fmt(self.shape)}")
        return self.numpy().reshape(()).item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None,
                  ) -> np.ndarray:
        if self.device != "cpu":
            raise DeviceError(f"numpy.asarray: tensor is on {self.device}; call .numpy() "
                              f"or .to('cpu') first")
        arr = self._data
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ShrewError(f"numpy.asarray: converting {self.dtype} to {np.dtype(dtype)} "
                                 f"needs a copy, but copy=False")
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """Export through DLPack (numpy/torch/cupy .from_dlpack(t)), sharing memory where
        the device allows."""
        return self._dlpack_backend("__dlpack__").to_dlpack(
            self._data, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        """(DLPack device type, device index), e.g. (1, 0) for the CPU."""
        return self._dlpack_backend("__dlpack_device__").dlpack_device(self._data)

    def _dlpack_backend(self, op: str) -> Any:
        if not hasattr(self._backend, "to_dlpack"):
            raise DeviceError(f"{op}: device {self.device} does not support DLPack; move the "
                              f"tensor with .to('cpu') first")
        return self._backend

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if numel(self.shape) != 1:
            raise ShrewError(f"bool: the truth value of a tensor of shape {fmt(self.shape)} "
                             f"is ambiguous")
        return bool(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        """As PyTorch: values (summarised when large), then the shape when summarised or
        empty, the device unless cpu, the dtype unless a default one, and grad_fn (the op
        that made it, e.g. <Binary.mul>) or requires_grad=True for a leaf."""
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(", threshold=200)
        count = numel(self.shape)
        extras = [f"shape={self.shape}"] if count > 200 or (count == 0 and self.ndim > 1) else []
        if self.device != "cpu":
            extras.append(f"device='{self.device}'")
        if self.dtype not in (float32, int64, bool_):
            extras.append(f"dtype={self.dtype}")
        if self._op is not None:
            extras.append(f"grad_fn=<{_diagnostics.op_name(self._op)}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body, *extras]) + ")"

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """A leaf with its own storage and a fresh id: ids key gradients and optimizer
        state, so a copied model must not share them with the original."""
        out = object.__new__(type(self))
        for name, value in ((n, getattr(self, n)) for n in Tensor.__slots__[:-1]):
            setattr(out, name, value)
        out._data = self._backend.contiguous(self._data)
        out._op = None
        out.id = next(_ids)
        out.grad = None if self.grad is None else self.grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out

    def detach(self) -> Tensor:
        return _wrap(self._data, self._backend)

    def to(self, device: str | DTypeLike | None = None,
           dtype: DTypeLike | None = None) -> Tensor:
        if isinstance(device, DType) or (dtype is None and device in (float, int, bool)):
            device, dtype = None, device
        out = self
        if dtype is not None:
            out = out.to_dtype(dtype)
        if device is not None:
            backend = get_backend(device)
            if backend is not out._backend:
                _check_device_dtype(backend, out.dtype, "to")
                data = backend.from_numpy(out.numpy())
                out = _record(data, backend, O.ToDevice(out), out)
        return out

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def to_dtype(self, dtype: DTypeLike) -> Tensor:
        dtype = as_dtype(dtype)
        if dtype is self.dtype:
            return self
        _check_device_dtype(self._backend, dtype, "to_dtype")
        data = self._backend.cast(self._data, dtype.np)
        if not dtype.is_floating_point:
            return _wrap(data, self._backend)
        return _record(data, self._backend, O.ToDtype(self), self)

    def float(self) -> Tensor:
        return self.to_dtype(float32)

    def long(self) -> Tensor:
        return self.to_dtype(int64)

    def contiguous(self) -> Tensor:
        return _record(self._backend.contiguous(self._data), self._backend, O.Contiguous(self),
                       self)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False) -> GradStore:
        from .backprop import backward
        return backward(self, gradient, retain_graph, create_graph)

    # -- elementwise -----------------------------------------------------------------------
    def _unary(self, fn: str) -> Tensor:
        x = self
        if x.dtype.category != FLOAT:
            if fn in _FLOAT_UNARY:
                x = x.to_dtype(float32)
            elif x.dtype is bool_ and fn != "abs":
                raise DTypeError(f"{fn}: not supported for bool tensors")
        data = x._backend.unary(fn, x._data)
        if x.requires_grad and is_grad_enabled():
            return _wrap(data, x._backend, O.Unary(fn, x))
        return _wrap(data, x._backend)

    def neg(self) -> Tensor: return self._unary("neg")
    def abs(self) -> Tensor: return self._unary("abs")
    def exp(self) -> Tensor: return self._unary("exp")
    def log(self) -> Tensor: return self._unary("log")
    def sqrt(self) -> Tensor: return self._unary("sqrt")
    def square(self) -> Tensor: return self._unary("square")
    def relu(self) -> Tensor: return self._unary("relu")
    def sigmoid(self) -> Tensor: return self._unary("sigmoid")
    def tanh(self) -> Tensor: return self._unary("tanh")
    def silu(self) -> Tensor: return self._unary("silu")
    def sin(self) -> Tensor: return self._unary("sin")
    def cos(self) -> Tensor: return self._unary("cos")
    def floor(self) -> Tensor: return self._unary("floor")
    def ceil(self) -> Tensor: return self._unary("ceil")
    def round(self) -> Tensor: return self._unary("round")
    def erf(self) -> Tensor: return self._unary("erf")
    def sign(self) -> Tensor: return self._unary("sign")

    def gelu(self, approximate: str = "none") -> Tensor:
        if approximate not in ("none", "tanh"):
            raise ShrewError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        return self._unary("gelu" if approximate == "none" else "gelu_tanh")

    def softmax(self, dim: int) -> Tensor:
        """exp(x) normalised to sum to 1 along dim, computed stably for any magnitude."""
        return self._softmax(dim, False)

    def log_softmax(self, dim: int) -> Tensor:
        """log(softmax(x, dim)), computed stably."""
        return self._softmax(dim, True)

    def _softmax(self, dim: int, log: bool) -> Tensor:
        name = "log_softmax" if log else "softmax"
        d = normalize_dim(dim, self.ndim, name)
        x = self if self.dtype.category == FLOAT else self.to_dtype(float32)
        if x.ndim == 0:  # one element along its only "dim"
            return x.reshape(1)._softmax(0, log).reshape()
        if 0 in x.shape:  # nothing to normalise, and no max to subtract
            data = x._backend.full(x.shape, 0, x.dtype.np)
        else:
            data = x._backend.softmax(x._data, d, log)
        return _record(data, x._backend, O.Softmax(x, d, log), x)

    def __neg__(self) -> Tensor:
        return self._unary("neg")

    def __abs__(self) -> Tensor:
        return self._unary("abs")

    def _binary(self, fn: str, other: object, reflected: bool = False) -> Tensor:
        if type(other) is not Tensor:
            if type(other) is float and self.dtype.category == FLOAT and fn != "div":
                return self._float_scalar_affine(fn, other, reflected)  # the hot case: x * 1.5
            if not isinstance(other, Tensor):
                if not isinstance(other, numbers.Number):
                    return NotImplemented
                fast = self._scalar_affine(fn, other, reflected)
                if fast is not None:
                    return fast
                other = _scalar_like(other, self)
        a, b = (other, self) if reflected else (self, other)
        if a._backend is not b._backend:
            _same_device(fn, a, b)
        if a.shape != b.shape:
            broadcast_shapes(fn, a.shape, b.shape)  # raises for shapes that do not broadcast
        if a.dtype is not b.dtype or a.dtype.category != FLOAT:
            dtype = result_type((a.dtype, a.ndim), (b.dtype, b.ndim))
            if fn == "div" and not dtype.is_floating_point:
                dtype = float32
            if dtype is bool_ and fn != "mul" and fn != "add":
                raise DTypeError(f"{fn}: not supported for bool tensors")
            a, b = a.to_dtype(dtype), b.to_dtype(dtype)
        data = a._backend.binary(fn, a._data, b._data)
        if (a.requires_grad or b.requires_grad) and is_grad_enabled():
            return _wrap(data, a._backend, O.Binary(fn, a, b))
        return _wrap(data, a._backend)

    def _float_scalar_affine(self, fn: str, value: builtins.float, reflected: bool) -> Tensor:
        """The hot path of x + s, x - s, s - x, x * s for a float tensor and a Python float:
        one Affine, with no checks (the caller made them)."""
        mul, add = _affine_params(fn, value, reflected)
        data = self._backend.affine(self._data, mul, add)
        if self.requires_grad and is_grad_enabled():
            return _wrap(data, self._backend, O.Affine(self, mul, add))
        return _wrap(data, self._backend)

    def _scalar_affine(self, fn: str, value: Any, reflected: bool) -> Tensor | None:
        """x + s, x - s, s - x, x * s on a tensor whose dtype holds s: one Affine."""
        kind = scalar_dtype(value)
        if fn not in ("add", "sub", "mul") or kind is bool_ or self.dtype is bool_:
            return None
        if kind.is_floating_point and not self.dtype.is_floating_point:
            return self.to_dtype(float32)._scalar_affine(fn, value, reflected)
        if isinstance(value, complex):
            return None
        return self.affine(*_affine_params(fn, value, reflected))

    def __add__(self, o: Tensor | Scalar) -> Tensor: return self._binary("add", o)
    def __radd__(self, o: Tensor | Scalar) -> Tensor: return self._binary("add", o, True)
    def __sub__(self, o: Tensor | Scalar) -> Tensor: return self._binary("sub", o)
    def __rsub__(self, o: Tensor | Scalar) -> Tensor: return self._binary("sub", o, True)
    def __mul__(self, o: Tensor | Scalar) -> Tensor: return self._binary("mul", o)
    def __rmul__(self, o: Tensor | Scalar) -> Tensor: return self._binary("mul", o, True)
    def __truediv__(self, o: Tensor | Scalar) -> Tensor: return self._binary("div", o)
    def __rtruediv__(self, o: Tensor | Scalar) -> Tensor: return self._binary("div", o, True)

    def add(self, o: Tensor | Scalar) -> Tensor: return self._binary("add", o)
    def sub(self, o: Tensor | Scalar) -> Tensor: return self._binary("sub", o)
    def mul(self, o: Tensor | Scalar) -> Tensor: return self._binary("mul", o)
    def div(self, o: Tensor | Scalar) -> Tensor: return self._binary("div", o)

    def __pow__(self, exponent: Scalar) -> Tensor:
        if isinstance(exponent, Tensor):
            raise DTypeError("pow: the exponent must be a Python number (tensor ** tensor is "
                             "not supported; use (b * a.log()).exp())")
        return self.powf(exponent)

    def __rpow__(self, base: Scalar) -> Tensor:
        if not isinstance(base, numbers.Real) or base <= 0:
            raise ShrewError(f"pow: number ** tensor needs a positive base, got {base!r}")
        return (self * math.log(base)).exp()

    def powf(self, exponent: Scalar) -> Tensor:
        if not isinstance(exponent, numbers.Real) or isinstance(exponent, bool):
            raise ShrewError(f"powf: exponent must be a real number, got {exponent!r}")
        x = self if self.dtype.is_floating_point else self.to_dtype(float32)
        exponent = float(exponent)
        return _record(x._backend.powf(x._data, exponent), x._backend, O.Powf(x, exponent), x)

    def affine(self, mul: Scalar, add: Scalar) -> Tensor:
        """self * mul + add, in one kernel."""
        if self.dtype is bool_:
            raise DTypeError("affine: not supported for bool tensors")
        if not self.dtype.is_floating_point and (scalar_dtype(mul).is_floating_point or
                                                 scalar_dtype(add).is_floating_point):
            return self.to_dtype(float32).affine(mul, add)
        mul, add = _number(mul), _number(add)
        return _record(self._backend.affine(self._data, mul, add), self._backend,
                       O.Affine(self, mul, add), self)

    def clamp(self, min: Scalar | None = None, max: Scalar | None = None) -> Tensor:
        if min is None and max is None:
            raise ShrewError("clamp: give at least one of min and max")
        for name, v in (("min", min), ("max", max)):
            if v is not None and not isinstance(v, numbers.Real):
                raise ShrewError(f"clamp: {name} must be a number, got {v!r}")
        if self.dtype is bool_:
            raise DTypeError("clamp: not supported for bool tensors")
        x = self
        if not x.dtype.is_floating_point and any(v is not None and scalar_dtype(v).is_floating_point
                                                 for v in (min, max)):
            x = x.to_dtype(float32)
        min, max = _number(min), _number(max)
        return _record(x._backend.clamp(x._data, min, max), x._backend, O.Clamp(x, min, max), x)

    def clip(self, min: Scalar | None = None, max: Scalar | None = None) -> Tensor:
        return self.clamp(min, max)

    # -- comparisons (bool results, never differentiable) ---------------------------------
    def _compare(self, fn: str, other: object) -> Tensor:
        if not isinstance(other, Tensor):
            if not isinstance(other, numbers.Number):
                return NotImplemented
            other = _scalar_like(other, self)
        _same_device(fn, self, other)
        broadcast_shapes(fn, self.shape, other.shape)
        dtype = result_type((self.dtype, self.ndim), (other.dtype, other.ndim))
        a, b = self.to_dtype(dtype), other.to_dtype(dtype)
        return _wrap(a._backend.compare(fn, a._data, b._data), a._backend)

    def __eq__(self, o: object) -> Tensor:  # type: ignore[override]  # elementwise
        return self._compare("eq", o)

    def __ne__(self, o: object) -> Tensor:  # type: ignore[override]  # elementwise
        return self._compare("ne", o)

    def __lt__(self, o: Tensor | Scalar) -> Tensor: return self._compare("lt", o)
    def __le__(self, o: Tensor | Scalar) -> Tensor: return self._compare("le", o)
    def __gt__(self, o: Tensor | Scalar) -> Tensor: return self._compare("gt", o)
    def __ge__(self, o: Tensor | Scalar) -> Tensor: return self._compare("ge", o)

    def eq(self, o: Tensor | Scalar) -> Tensor: return self._compare("eq", o)
    def ne(self, o: Tensor | Scalar) -> Tensor: return self._compare("ne", o)
    def lt(self, o: Tensor | Scalar) -> Tensor: return self._compare("lt", o)
    def le(self, o: Tensor | Scalar) -> Tensor: return self._compare("le", o)
    def gt(self, o: Tensor | Scalar) -> Tensor: return self._compare("gt", o)
    def ge(self, o: Tensor | Scalar) -> Tensor: return self._compare("ge", o)

    # -- reductions ------------------------------------------------------------------------
    def _reduce(self, fn: str, dim: Dims, keepdim: bool) -> Tensor:
        dims = normalize_dims(dim, self.ndim, fn)
        x = self
        if fn == "mean":
            check_float(x.dtype, "mean")
        if fn in ("max", "min") and any(x.shape[d] == 0 for d in dims):
            raise ShapeError(f"{fn}: cannot reduce over a zero-size dim (shape "
                             f"{fmt(x.shape)}, dim {dim})")
        if fn == "sum" and x.dtype is bool_:
            x = x.to_dtype(int64)
        if not dims:  # a 0-d tensor: nothing to reduce
            return x if fn != "sum" or x.dtype.is_floating_point else x.to_dtype(int64)
        data = x._backend.reduce(fn, x._data, dims, bool(keepdim))
        return _record(data, x._backend, O.Reduce(fn, x, dims, bool(keepdim)), x)

    def sum(self, dim: Dims = None, keepdim: bool = False) -> Tensor:
        return self._reduce("sum", dim, keepdim)

    def mean(self, dim: Dims = None, keepdim: bool = False) -> Tensor:
        return self._reduce("mean", dim, keepdim)

    def max(self, dim: Dims = None, keepdim: bool = False) -> Tensor:
        return self._reduce("max", dim, keepdim)

    def min(self, dim: Dims = None, keepdim: bool = False) -> Tensor:
        return self._reduce("min", dim, keepdim)


    def _arg_reduce(self, fn: str, dim: int | None, keepdim: bool) -> Tensor:
        if dim is None:
            return self.reshape(-1)._arg_reduce(fn, 0, False) if not keepdim else \
                self.reshape(-1)._arg_reduce(fn, 0, False).reshape(*[1] * self.ndim)
        d = normalize_dim(dim, self.ndim, fn)
        if self.ndim == 0:
            return _constant((), 0, int64, self._backend)
        if self.shape[d] == 0:
            raise ShapeError(f"{fn}: cannot reduce over a zero-size dim (shape {fmt(self.shape)})")
        return _wrap(self._backend.arg_reduce(fn, self._data, d, bool(keepdim)), self._backend)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        return self._arg_reduce("argmax", dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        return self._arg_reduce("argmin", dim, keepdim)


    # -- matmul ------------------------------------------------------------------------------
    def matmul(self, other: Tensor) -> Tensor:
        if not isinstance(other, Tensor):
            raise ShrewError(f"matmul: both operands must be tensors, got {type(other).__name__}")
        _same_device("matmul", self, other)
        a, b = self, other
        if a.ndim == 0 or b.ndim == 0:
            raise ShapeError(f"matmul: both operands need at least one dim, got "
                             f"{fmt(a.shape)} @ {fmt(b.shape)}")
        if a.dtype is not b.dtype:
            raise DTypeError(f"matmul: operands must share a dtype, got {a.dtype} @ {b.dtype}")
        check_float(a.dtype, "matmul")
        if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
            raise ShapeError(f"matmul: inner dimensions differ: {fmt(a.shape)} @ {fmt(b.shape)} "
                             f"({a.shape[-1]} != {b.shape[-2 if b.ndim > 1 else 0]})")
        squeeze = []
        if a.ndim == 1:
            a = a.reshape(1, a.shape[0])
            squeeze.append(-2)
        if b.ndim == 1:
            b = b.reshape(b.shape[0], 1)
            squeeze.append(-1)
        try:
            batch = broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])
        except ShapeError:
            raise ShapeError(f"matmul: batch dims of {fmt(self.shape)} @ {fmt(other.shape)} "
                             f"do not broadcast") from None
        out = _record(a._backend.matmul(a._data, b._data), a._backend, O.Matmul(a, b), a, b)
        if squeeze:
            keep = batch + tuple(s for i, s in zip((-2, -1), out.shape[-2:]) if i not in squeeze)
            out = out.reshape(*keep)
        return out

    __matmul__ = matmul

    def __rmatmul__(self, other: object) -> Tensor:
        return NotImplemented

    # -- shape ---------------------------------------------------------------------------
    def reshape(self, *shape: ShapeLike) -> Tensor:
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        new = infer_reshape("reshape", self.shape, shape)
        if new == self.shape:
            return self
        return _record(self._backend.reshape(self._data, new), self._backend, O.Reshape(self), self)

    view = reshape

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        d0 = normalize_dim(dim0, self.ndim, "transpose")
        d1 = normalize_dim(dim1, self.ndim, "transpose")
        if d0 == d1:
            return self
        return _record(self._backend.transpose(self._data, d0, d1), self._backend,
                       O.Transpose(self, d0, d1), self)

    def permute(self, *dims: int | Sequence[int]) -> Tensor:
        """Reorder dims; recorded as a sequence of Transpose ops."""
        if len(dims) == 1 and not isinstance(dims[0], int):
            dims = tuple(dims[0])
        perm = [normalize_dim(d, self.ndim, "permute") for d in dims]
        if sorted(perm) != list(range(self.ndim)):
            raise ShapeError(f"permute: {tuple(dims)} is not a permutation of the "
                             f"{self.ndim} dims of {fmt(self.shape)}")
        out, current = self, list(range(self.ndim))
        for target, src in enumerate(perm):
            at = current.index(src)
            if at != target:
                out = out.transpose(target, at)
                current[target], current[at] = current[at], current[target]
        return out

    @property
    def T(self) -> Tensor:
        return self.permute(*reversed(range(self.ndim)))

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        if self.ndim == 0:
            raise ShapeError("narrow: cannot narrow a 0-d tensor")
        d = normalize_dim(dim, self.ndim, "narrow")
        size = self.shape[d]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, length)):
            raise ShrewError(f"narrow: start and length must be ints, got {start!r}, {length!r}")
        if start < 0:
            start += size
        if start < 0 or length < 0 or start + length > size:
            raise ShapeError(f"narrow: [{start}, {start + length}) is out of range for dim {d} "
                             f"of size {size} (shape {fmt(self.shape)})")
        if start == 0 and length == size:
            return self
        return _record(self._backend.narrow(self._data, d, start, length), self._backend,
                       O.Narrow(self, d, start, length), self)

    def unsqueeze(self, dim: int) -> Tensor:
        d = normalize_dim(dim, self.ndim, "unsqueeze", extra=1)
        return self.reshape(*self.shape[:d], 1, *self.shape[d:])

    def squeeze(self, dim: Dims = None) -> Tensor:
        if dim is None:
            return self.reshape(*[s for s in self.shape if s != 1])
        dims = normalize_dims(dim, self.ndim, "squeeze")
        return self.reshape(*[s for i, s in enumerate(self.shape) if not (i in dims and s == 1)])

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        s = normalize_dim(start_dim, self.ndim, "flatten")
        e = normalize_dim(end_dim, self.ndim, "flatten")
        if s > e:
            raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
        return self.reshape(*self.shape[:s], numel(self.shape[s:e + 1]), *self.shape[e + 1:])

    def expand(self, *shape: ShapeLike) -> Tensor:
        """Broadcast to `shape` (-1 keeps a dim); recorded as an add of zeros so that the
        gradient sums back over the broadcast dims through the Binary rule."""
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        lead = len(shape) - self.ndim
        if lead < 0:
            raise ShapeError(f"expand: cannot expand {fmt(self.shape)} to fewer dims {fmt(shape)}")
        shape = tuple(self.shape[i - lead] if s == -1 and i >= lead else s
                      for i, s in enumerate(shape))
        # (mypy cannot follow `shape` from ints-or-one-sequence to a tuple of ints)
        if any(s < 0 for s in shape) or broadcast_shapes("expand", self.shape, shape) != shape:  # type: ignore[operator, arg-type]
            raise ShapeError(f"expand: cannot expand {fmt(self.shape)} to {fmt(shape)}")
        if shape == self.shape:
            return self
        if not self.requires_grad or not is_grad_enabled():
            view = self._backend.reshape(self._data, (1,) * lead + self.shape)
            return _wrap(self._backend.expand(view, shape), self._backend)
        return self + _constant(shape, 0, self.dtype, self._backend)  # type: ignore[arg-type]

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def __getitem__(self, key: Index) -> Tensor:
        """Basic indexing: ints, slices with step 1, None and Ellipsis."""
        if not isinstance(key, tuple):
            key = (key,)
        if sum(k is Ellipsis for k in key) > 1:
            raise ShapeError("index: only one Ellipsis is allowed")
        used = sum(1 for k in key if k is not None and k is not Ellipsis)
        if used > self.ndim:
            raise ShapeError(f"index: too many indices ({used}) for a {self.ndim}-d tensor")
        if Ellipsis in key:
            at = key.index(Ellipsis)
            key = key[:at] + (slice(None),) * (self.ndim - used) + key[at + 1:]
        out, dim, new_shape = self, 0, []
        for k in key:
            if k is None:
                new_shape.append(1)
                continue
            size = self.shape[dim]
            if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
                i = int(k) + size if k < 0 else int(k)
                if not 0 <= i < size:
                    raise ShapeError(f"index: {k} is out of range for dim {dim} of size {size}")
                out = out.narrow(dim, i, 1)
            elif isinstance(k, slice):
                start, stop, step = k.indices(size)
                if step != 1:
                    raise ShapeError(f"index: slice steps other than 1 are not supported ({k})")
                out = out.narrow(dim, start, max(stop - start, 0))
                new_shape.append(out.shape[dim])
            else:
                raise ShrewError(f"index: unsupported index {k!r} (use ints, slices with step "
                                 f"1, None, Ellipsis; or .gather for tensor indices)")
            dim += 1
        new_shape.extend(self.shape[dim:])
        return out.reshape(*new_shape)

    # -- indexing ops ---------------------------------------------------------------------
    def gather(self, dim: int, index: Tensor) -> Tensor:
        d = normalize_dim(dim, self.ndim, "gather")
        index = _checked_index("gather", index, self, d)
        if index.ndim != self.ndim:
            raise ShapeError(f"gather: index must have as many dims as the input, got index "
                             f"{fmt(index.shape)} for input {fmt(self.shape)}")
        for i, (si, sx) in enumerate(zip(index.shape, self.shape)):
            if i != d and si > sx:
                raise ShapeError(f"gather: index {fmt(index.shape)} is larger than input "
                                 f"{fmt(self.shape)} in dim {i}")
        _check_index_range("gather", index, self.shape[d], d)
        data = self._backend.gather(self._data, d, index._data)
        return _record(data, self._backend, O.Gather(self, d, index), self)

    def pad(self, pads: Sequence[int], value: Scalar = 0.0) -> Tensor:
        """Constant padding; `pads` as torch.nn.functional.pad (last dim first, negative crops)."""
        pads = tuple(pads)
        if len(pads) % 2 or len(pads) // 2 > self.ndim or \
                not all(isinstance(p, int) and not isinstance(p, bool) for p in pads):
            raise ShapeError(f"pad: pads must be an even number (at most {2 * self.ndim}) of "
                             f"ints, got {pads}")
        per_dim = [(0, 0)] * self.ndim
        for i in range(len(pads) // 2):
            per_dim[self.ndim - 1 - i] = (pads[2 * i], pads[2 * i + 1])
        for d, (lo, hi) in enumerate(per_dim):
            if self.shape[d] + lo + hi < 0:
                raise ShapeError(f"pad: pads {pads} leave dim {d} of {fmt(self.shape)} negative")
        out = self
        grow = tuple((max(lo, 0), max(hi, 0)) for lo, hi in per_dim)
        if any(lo or hi for lo, hi in grow):
            if self.dtype is bool_ or not isinstance(value, numbers.Real):
                raise ShrewError(f"pad: needs a numeric tensor and value, got {self.dtype}, "
                                 f"{value!r}")
            out = _record(self._backend.pad(self._data, grow, value), self._backend,
                          O.Pad(self, grow), self)
        for d, (lo, hi) in enumerate(per_dim):
            if lo < 0 or hi < 0:
                start = -min(lo, 0)
                out = out.narrow(d, start, out.shape[d] - start + min(hi, 0))
        return out


def _check_device_dtype(backend: Backend, dtype: DType, op: str) -> None:
    if dtype.np not in backend.dtypes:
        supported = ", ".join(sorted(str(d) for d in backend.dtypes))
        raise DTypeError(f"{op}: device {backend.device} does not support {dtype} "
                         f"(it supports {supported})")


def _affine_params(fn: str, value: Any, reflected: bool) -> tuple[Any, Any]:
    """(mul, add) such that x * mul + add is x + s, x - s, s - x or x * s."""
    if fn == "mul":
        return value, 0
    if fn == "add":
        return 1, value
    return (-1, value) if reflected else (1, -value)


def _number(value: Any) -> Any:
    """A numpy scalar as the Python number backends expect (numpy scalars would widen)."""
    return value.item() if isinstance(value, np.generic) else value


def _scalar_like(value: Any, like: Tensor) -> Tensor:
    """A Python number as a 0-d tensor on `like`'s device, in the promoted dtype."""
    dtype = result_type((like.dtype, like.ndim), value)
    return _constant((), value, dtype, like._backend)


def _constant(shape: Iterable[int], value: Any, dtype: DType, backend: Backend) -> Tensor:
    """A tensor of `shape` filled with `value` on `backend`, recording nothing."""
    return _wrap(backend.full(tuple(shape), value, dtype.np), backend)


def _checked_index(op: str, index: object, x: Tensor, dim: int) -> Tensor:
    if not isinstance(index, Tensor):
        raise ShrewError(f"{op}: index must be an int64 tensor, got {type(index).__name__}")
    _same_device(op, x, index)
    if index.dtype.category != 1:
        raise DTypeError(f"{op}: index must be an integer tensor, got {index.dtype}")
    return index.to_dtype(int64)


def _check_index_range(op: str, index: Tensor, size: int, dim: int) -> None:
    """Indices must lie in [0, size): checked before any kernel reads with them."""
    if numel(index.shape) == 0:
        return
    be = index._backend
    dims = tuple(range(index.ndim))
    lo = int(be.to_numpy(be.reduce("min", index._data, dims, False)))
    hi = int(be.to_numpy(be.reduce("max", index._data, dims, False)))
    if lo < 0 or hi >= size:
        bad = lo if lo < 0 else hi
        raise ShapeError(f"{op}: index {bad} is out of range for dim {dim} of size {size} "
                         f"(indices must lie in [0, {size}))")
