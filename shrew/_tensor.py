"""Tensor: backend-agnostic.  Its methods are one-line calls into shrew/ops, one module per
op family, which check the arguments and record the Op variant; shrew/core/fields.py lays
out and fills the fields."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .core.dtype import DType, bool_, get_default_dtype, int64
from ._device import device as _device
from .core.errors import (ArgumentError, DeviceError, DTypeError, ShapeError,
                          ShrewTypeError, ShrewValueError)
from .core.fields import (TensorFields, alias, copy_leaf, init_leaf, is_stand_in, own_array,
                          retain_grad, set_grad, with_inputs_resolved, wrap)
from .methods.cast import CastMethods
from .methods.elementwise import ElementwiseMethods
from .methods.indexing import IndexingMethods
from .methods.inplace import InplaceMethods
from .methods.legacy import LegacyMethods
from .methods.complex import ComplexMethods
from .ops.legacy import check_format, legacy_sizes
from .core.printing import PRINT_OPTIONS, format_values
from .methods.random import RandomMethods
from .ops import creation as _creation
from .ops.index import recorded as _index
from .ops import inplace as _inplace
from .ops.linalg import matmul as _linalg
from .ops import norm as _norm
from .ops.shape import recorded as _shape
from .methods.reduce import ReductionMethods
from .core.shape import Size, fmt, normalize_dim, numel
from .methods.linalg import LinalgMethods
from .methods.shape import ShapeMethods
from .methods.sparse import SparseMethods
from .methods.special import SpecialMethods

if TYPE_CHECKING:
    import numpy.typing as npt

    from .core import op as O
    from .backends.base import Backend, Storage
    from .autograd.graph import Node
    from .autograd.engine import GradStore
    from .autograd.hooks import HookHandle
    from .typing import DTypeLike, Dims, Scalar, ShapeLike, TensorData


class Tensor(ElementwiseMethods, CastMethods, TensorFields, LegacyMethods, ShapeMethods,
             LinalgMethods, ReductionMethods, InplaceMethods, IndexingMethods, RandomMethods,
             SparseMethods, SpecialMethods, ComplexMethods):
    """An n-dimensional array on a device, recording how it was made for backward."""

    __slots__ = ()

    shape: tuple[int, ...]
    """The size of each dim."""
    dtype: DType
    """The element type, e.g. ``shrew.float32``."""
    requires_grad: bool
    """Whether backward computes a gradient for this tensor (floating-point tensors only)."""
    id: int
    """Unique in the process: it keys gradients (GradStore) and optimizer state."""
    _data: Storage
    _backend: Backend
    _op: O.Op | None
    _retains_grad: bool

    def __init__(self, *args: Any, dtype: DTypeLike | None = None, device: str | None = None,
                 requires_grad: bool = False) -> None:
        """``Tensor(data, dtype=None, device=None, requires_grad=False)``: as
        ``shrew.tensor``.  Also PyTorch's legacy sizes: ``Tensor()`` an empty 1-d tensor,
        ``Tensor(*ints)`` or ``Tensor(Size)`` an uninitialised one (zeros in shrew) of the
        default float dtype (``nn.Parameter(torch.Tensor(n_out, n_in))``)."""
        sizes = legacy_sizes(args)
        if sizes is not None:
            made = _creation.empty(sizes, dtype=dtype, device=device,
                                   requires_grad=requires_grad)
            init_leaf(self, made._data, made._backend, made.dtype, requires_grad)
            return
        data, *rest = args
        if len(rest) > 3:
            raise ShrewTypeError(f"Tensor: takes data and up to 3 more positional arguments "
                                 f"(dtype, device, requires_grad), got {len(args)}")
        given = dict(zip(("dtype", "device", "requires_grad"), rest))
        dtype, device = given.get("dtype", dtype), given.get("device", device)
        requires_grad = given.get("requires_grad", requires_grad)
        _creation.init_tensor(self, data, dtype, device, requires_grad)

    # -- attributes ----------------------------------------------------------------------
    @property
    def device(self) -> _device:
        """A shrew.device: a str ("cpu", "opencl:0") with PyTorch's .type and .index."""
        return _device(self._backend.device)

    @property
    def is_cuda(self) -> bool:
        return self._backend.device.startswith("cuda")

    @property
    def is_cpu(self) -> bool:
        return self._backend.device == "cpu"

    # PyTorch's other device kinds, which shrew never runs on (programs test them)
    is_xpu = is_mps = is_meta = property(lambda self: False)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def op(self) -> O.Op | None:
        """The Op variant that made this tensor, its inputs the tensors themselves (the
        graph itself may hold an input graph_only: core/fields.py)."""
        return with_inputs_resolved(self._op)

    @property
    def is_leaf(self) -> bool:
        return self._op is None

    def numel(self) -> int:
        return numel(self.shape)

    @overload
    def size(self, dim: None = None) -> Size: ...
    @overload
    def size(self, dim: int) -> int: ...
    def size(self, dim: int | None = None) -> Size | int:
        if dim is None:
            return Size(self.shape)
        return self.shape[normalize_dim(dim, self.ndim, "size")]

    def dim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise ShrewTypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        """The sub-tensors along dim 0 (differentiable views), as PyTorch."""
        return (_shape.select(self, 0, i) for i in range(len(self)))

    def __contains__(self, element: object) -> bool:
        """Whether any element equals `element` (a number or a broadcastable tensor)."""
        return bool((self == element)._host().any())

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if not self.is_leaf:
            raise ArgumentError("requires_grad_: only leaf tensors can change requires_grad")
        if requires_grad and not self.dtype.is_floating_point:
            raise DTypeError(f"requires_grad_: only floating-point tensors can require grad, "
                             f"got {self.dtype}")
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in the GradStore and in .grad."""
        retain_grad(self)

    # -- host --------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a numpy array.  On the CPU it shares this tensor's memory, as
        PyTorch's: a write through either is seen by the other, and a non-contiguous tensor
        gives a strided array.  Elsewhere it is a copy (PyTorch refuses; docs/porting.md).
        Unlike PyTorch's, it also reads a tensor that requires grad (PyTorch asks for
        t.detach().numpy(), which works here too), so `force` changes nothing."""
        return self._host()

    def _host(self) -> np.ndarray:
        """shrew's own read of the values, grad or not (repr, item, saving): on the CPU this
        tensor's memory, not to be written (take a .copy() to keep or change); else a copy."""
        if _index.deferred:  # a read-back: first the index checks waiting for one
            _index.raise_deferred()
        if self._backend.device != "cpu":
            return self._backend.to_numpy(self._data)
        own_array(self)  # a 0-d result held as a numpy scalar: no memory to share
        return self._data.view()  # a new array object: reshaping it leaves the tensor alone

    def item(self) -> int | float | bool:
        if numel(self.shape) != 1:
            raise ShapeError(f"item: needs a tensor with one element, got shape {fmt(self.shape)}")
        return self._host().reshape(()).item()

    def tolist(self) -> Any:
        return self._host().tolist()

    __array_priority__ = 1000  # numpy's operators defer to ours (np.float32(2) * t), as torch's

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None,
                  ) -> np.ndarray:
        """numpy.asarray(t), numpy.array(t): .numpy() (shared unless a copy or another
        dtype is asked for), so a tensor that requires grad refuses, as PyTorch's."""
        if self.device != "cpu":
            raise DeviceError(f"numpy.asarray: tensor is on {self.device}; call .numpy() "
                              f"or .to('cpu') first")
        arr = self.numpy()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ShrewValueError(f"numpy.asarray: converting {self.dtype} to "
                                      f"{np.dtype(dtype)} needs a copy, but copy=False")
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __array_wrap__(self, array: np.ndarray, context: Any = None,
                       return_scalar: bool = False) -> Tensor:
        """A numpy ufunc's result (np.exp(t), and t + ndarray, which numpy computes) as a
        tensor sharing its memory, as PyTorch's; a bool result stays bool (PyTorch makes it
        uint8, a workaround from before it had bool tensors), so t[np.isfinite(t)] masks."""
        return _creation.from_numpy(np.asarray(array))

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """Export through DLPack (numpy/torch/cupy .from_dlpack(t)), sharing memory where
        the device allows.  Unlike PyTorch's, a tensor that requires grad is exported too
        (outside the graph, as detach()): torch.tensor(loss) reads a shrew loss so."""
        own_array(self)
        return self._dlpack_backend("__dlpack__").to_dlpack(
            self._data, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        """(DLPack device type, device index), e.g. (1, 0) for the CPU."""
        own_array(self)
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

    def __index__(self) -> int:
        """An integer tensor of one element as a Python index (range(t), list[t])."""
        if self.dtype.is_floating_point or self.dtype is bool_ or numel(self.shape) != 1:
            raise ShrewTypeError(f"__index__: only integer tensors of a single element can be "
                                 f"converted to an index, got {self.dtype} of shape "
                                 f"{fmt(self.shape)}")
        return int(self.item())

    def __bool__(self) -> bool:
        if numel(self.shape) != 1:
            raise ArgumentError(f"bool: the truth value of a tensor of shape {fmt(self.shape)} "
                                f"is ambiguous")
        return bool(self.item())

    __hash__ = object.__hash__

    def __format__(self, spec: str) -> str:
        """f"{t:.4f}" formats a one-element tensor's value, as PyTorch; an empty spec is
        str(t)."""
        if not spec:
            return str(self)
        if self.numel() != 1:
            raise ShrewTypeError(f"format: a format spec ({spec!r}) needs a one-element "
                                 f"tensor, got shape {fmt(self.shape)}")
        return format(self.item(), spec)

    def __repr__(self) -> str:
        """As PyTorch: values (summarised when large), then the shape when summarised or
        empty, the device unless cpu, the dtype unless a default one, and grad_fn (the op
        that made it, PyTorch's name: <MulBackward0>) or requires_grad=True for a leaf."""
        if is_stand_in(self):  # a graph_only stand-in whose tensor is gone (Tensor.op)
            return (f"tensor(<values freed: the node that held this input saves nothing>, "
                    f"shape={tuple(self.shape)}, dtype={self.dtype})")
        body = format_values(self._host())
        count = numel(self.shape)
        summarised = count > PRINT_OPTIONS.threshold or (count == 0 and self.ndim > 1)
        extras = [f"shape={tuple(self.shape)}"] if summarised else []
        if self.device != "cpu":
            extras.append(f"device='{self.device}'")
        if self.dtype not in (get_default_dtype(), get_default_dtype().to_complex(), int64,
                              bool_):
            extras.append(f"dtype={self.dtype}")
        node = self.grad_fn
        if node is not None:
            extras.append(f"grad_fn=<{node.name()}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body, *extras]) + ")"

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """A leaf with its own storage and a fresh id: ids key gradients and optimizer
        state, so a copied model must not share them with the original."""
        return copy_leaf(self, memo)

    def detach(self) -> Tensor:
        """A tensor sharing this one's memory and version counter, outside the graph."""
        return alias(self)

    # -- creation (ops/creation.py) ---------------------------------------------------------
    def clone(self, *, memory_format: Any = None) -> Tensor:
        return _creation.clone(self, memory_format=memory_format)

    def new_zeros(self, *size: ShapeLike, dtype: DTypeLike | None = None,
                  device: str | None = None, requires_grad: bool = False) -> Tensor:
        return _creation.new_full_like(self, size, 0, dtype, device, requires_grad, "new_zeros")

    def new_ones(self, *size: ShapeLike, dtype: DTypeLike | None = None,
                 device: str | None = None, requires_grad: bool = False) -> Tensor:
        return _creation.new_full_like(self, size, 1, dtype, device, requires_grad, "new_ones")

    def new_empty(self, *size: ShapeLike, dtype: DTypeLike | None = None,
                  device: str | None = None, requires_grad: bool = False) -> Tensor:
        return _creation.new_full_like(self, size, 0, dtype, device, requires_grad, "new_empty")

    def new_empty_strided(self, size: Sequence[int], stride: Sequence[int], *,
                          dtype: DTypeLike | None = None, device: str | None = None,
                          requires_grad: bool = False, layout: Any = None,
                          pin_memory: bool = False) -> Tensor:
        """empty_strided in this tensor's dtype and device unless others are given."""
        return _creation.empty_strided(size, stride, dtype=dtype or self.dtype,
                                       device=device or self.device,
                                       requires_grad=requires_grad)

    def new_full(self, size: ShapeLike, fill_value: Scalar, *, dtype: DTypeLike | None = None,
                 device: str | None = None, requires_grad: bool = False) -> Tensor:
        return _creation.new_full_like(self, (size,), fill_value, dtype, device, requires_grad,
                                       "new_full")

    def new_tensor(self, data: TensorData, *, dtype: DTypeLike | None = None,
                   device: str | None = None, requires_grad: bool = False) -> Tensor:
        return _creation.new_tensor(self, data, dtype, device, requires_grad)

    def contiguous(self, memory_format: Any = None) -> Tensor:
        check_format("contiguous", memory_format)  # a layout hint: shrew is row-major
        return _shape.contiguous(self)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Tensor | Sequence[Tensor] | None = None,
                 ) -> GradStore:
        from .autograd.engine import backward  # backprop builds on Tensor: the one allowed cycle
        return backward(self, gradient, retain_graph, create_graph, inputs)

    # -- the autograd API (shrew/autograd) ------------------------------------------------
    @property
    def grad_fn(self) -> Node | None:
        """The node that made this tensor (e.g. <MulBackward0>), None for a leaf."""
        from .autograd.graph import grad_fn  # autograd builds on Tensor
        return grad_fn(self)

    @property
    def grad(self) -> Tensor | None:
        """A leaf's accumulated gradient (each backward adds to it), else None; assignable
        (a tensor of this one's shape, dtype and device, or None)."""
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        set_grad(self, value)

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def data(self) -> Tensor:
        """This tensor's values outside the graph, sharing its memory (not its version)."""
        return wrap(self._data, self._backend)

    @data.setter
    def data(self, value: Tensor) -> None:
        _inplace.set_data(self, value)

    def detach_(self) -> Tensor:
        return _inplace.detach_(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> HookHandle:
        """Call hook(grad) whenever this tensor's gradient is computed; a returned tensor
        replaces it.  Returns a handle whose remove() unregisters the hook."""
        from .autograd.hooks import register_hook
        return register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]
                                           ) -> HookHandle:
        """Call hook(self) once this leaf's .grad holds this backward's gradient."""
        from .autograd.hooks import register_post_accumulate_grad_hook
        return register_post_accumulate_grad_hook(self, lambda leaf, _grads: hook(leaf))

    # -- in place (ops/inplace.py): InplaceMethods (methods/inplace.py) ------------------

    # -- normalisations (ops/norm.py) -------------------------------------------------------
    def softmax(self, dim: int, dtype: DTypeLike | None = None) -> Tensor:
        """exp(x) normalised to sum to 1 along dim, computed stably for any magnitude."""
        return _norm.softmax(self, dim, False, dtype)

    def log_softmax(self, dim: int, dtype: DTypeLike | None = None) -> Tensor:
        """log(softmax(x, dim)), computed stably."""
        return _norm.softmax(self, dim, True, dtype)

    # -- reductions, scans, sorting: ReductionMethods (methods/reduce.py) ------------------

    # -- linear algebra (ops/linalg/matmul.py) ----------------------------------------------------
    def matmul(self, other: Tensor) -> Tensor:
        return _linalg.matmul(self, other)

    def __matmul__(self, other: Any) -> Tensor:
        """self @ other; an ndarray is left to numpy (its result wrapped), as PyTorch's."""
        return NotImplemented if isinstance(other, np.ndarray) else _linalg.matmul(self, other)

    def __rmatmul__(self, other: object) -> Tensor:
        """other @ self, called directly (as torch's OpInfo does) or by Python for a
        left operand that is not a Tensor: only tensors multiply."""
        return _linalg.matmul(other, self) if isinstance(other, Tensor) else NotImplemented

    # -- shape (ops/shape/recorded.py) ------------------------------------------------------------
    def reshape(self, *shape: ShapeLike) -> Tensor:
        return _shape.reshape(self, shape)

    view = reshape

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return _shape.transpose(self, dim0, dim1)

    def permute(self, *dims: int | Sequence[int]) -> Tensor:
        """Reorder dims; recorded as a sequence of Transpose ops."""
        return _shape.permute(self, dims)

    @property
    def T(self) -> Tensor:
        return _shape.permute(self, tuple(reversed(range(self.ndim))))

    def narrow(self, dim: int, start: int | Tensor, length: int) -> Tensor:
        return _shape.narrow(self, dim, start, length)

    def select(self, dim: int, index: int) -> Tensor:
        return _shape.select(self, dim, index)

    def unsqueeze(self, dim: int) -> Tensor:
        return _shape.unsqueeze(self, dim)

    def squeeze(self, dim: Dims = None) -> Tensor:
        return _shape.squeeze(self, dim)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return _shape.flatten(self, start_dim, end_dim)

    def expand(self, *shape: ShapeLike) -> Tensor:
        """Broadcast to `shape` (-1 keeps a dim), differentiably."""
        return _shape.expand(self, shape)

    def expand_as(self, other: Tensor) -> Tensor:  # (broadcast_to etc. in methods/shape.py)
        return _shape.expand(self, (other.shape,))

    def pad(self, pads: Sequence[int], value: Scalar = 0.0) -> Tensor:
        """Constant padding; `pads` as torch.nn.functional.pad (last dim first, negative crops)."""
        return _shape.pad(self, pads, value)

    # -- indexing (ops/index/): IndexingMethods (methods/indexing.py)
