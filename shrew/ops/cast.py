"""Moving a tensor to another device or dtype (cast.cl on OpenCL and CUDA)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import op as O
from ..backends.registry import get_backend
from ..core.dtype import DType, as_dtype
from ..core.errors import ArgumentError
from ..core.fields import AnyTensor, graph_only, record, wrap
from .common import check_device_dtype
from .shape.recorded import contiguous
from .index.recorded import note_host_range

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import DTypeLike


def to(x: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Tensor.to in each of PyTorch's forms: to(dtype), to(device=None, dtype=None),
    to(other) (other's device and dtype), each with non_blocking= and copy= (a new
    tensor even when nothing changes) and memory_format= (accepted: shrew's tensors are
    always row-major), as keywords or (non_blocking, copy) positionally after them."""
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    kwargs.pop("memory_format", None)
    flags = [a for a in args if isinstance(a, bool)]  # positional non_blocking, copy
    copy = kwargs.pop("copy", flags[1] if len(flags) > 1 else False)
    kwargs.pop("non_blocking", None)  # transfers complete before .to returns
    if kwargs:
        raise ArgumentError(f"to: unexpected keyword argument {next(iter(kwargs))!r}")
    for arg in args:
        if isinstance(arg, bool):
            continue
        if isinstance(arg, AnyTensor):
            device, dtype = arg.device, arg.dtype
        elif _is_dtype(arg):
            dtype = arg
        elif arg is not None:
            device = arg if isinstance(arg, str) else str(arg)
    out = x
    if dtype is not None:
        out = to_dtype(out, dtype)
    if device is not None:
        out = to_device(out, device)
    if copy and out is x:
        out = contiguous(x)
    return out


def _is_dtype(value: Any) -> bool:
    return isinstance(value, (DType, np.dtype)) or value in (float, int, bool) or (
        isinstance(value, type) and issubclass(value, np.generic))


def to_device(x: Tensor, device: str) -> Tensor:
    backend = get_backend(device)
    if backend is x._backend:
        return x
    if x.dtype.is_complex:
        from .complex import pair
        return pair.make(to_device(pair.view_as_real(x), device))
    check_device_dtype(backend, x.dtype, "to")
    host = x._host()
    data = backend.from_numpy(host)
    out = record(data, backend, O.ToDevice(x), x)
    if not isinstance(data, np.ndarray):  # on a device: gather may use it as an index
        note_host_range(out, host)
    return out


_TENSOR_TYPES = {"float32": "Float", "float64": "Double", "float16": "Half",
                 "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                 "int8": "Char", "uint8": "Byte", "bool": "Bool"}
_BY_TENSOR_TYPE = {f"torch.{v}Tensor": k for k, v in _TENSOR_TYPES.items()}


def type_(x: Tensor, dtype: DTypeLike | str | type | None = None,
          non_blocking: bool = False) -> Tensor | str:
    """Tensor.type: with no dtype its type name as PyTorch spells it ('torch.FloatTensor',
    'torch.cuda.FloatTensor'), else the tensor cast to dtype: a dtype, or a legacy tensor
    type (torch.FloatTensor, torch.cuda.FloatTensor) or its name, which as in PyTorch also
    names the device: CUDA for torch.cuda's types, the CPU for the others."""
    if dtype is None:
        cuda = "cuda." if x.is_cuda else ""
        return f"torch.{cuda}{_TENSOR_TYPES[x.dtype.name]}Tensor"
    legacy = _legacy_type(dtype)
    if legacy is None:
        return to_dtype(x, dtype)
    out = to_dtype(x, legacy[0])
    on_cuda = legacy[1]
    if on_cuda != x.is_cuda or not (on_cuda or x.device.type == "cpu"):
        out = to_device(out, "cuda" if on_cuda else "cpu")
    return out


def _legacy_type(value: object) -> tuple[DType, bool] | None:
    """(dtype, is it CUDA's) of a legacy tensor type or its name; None for anything else."""
    if isinstance(value, str):
        name = value.replace("torch.cuda.", "torch.", 1)
        if name not in _BY_TENSOR_TYPE:
            return None
        return as_dtype(_BY_TENSOR_TYPE[name]), value.startswith("torch.cuda.")
    found = getattr(value, "dtype", None) if isinstance(value, type) else None
    if not isinstance(found, DType):
        return None
    return found, bool(value.is_cuda)  # type: ignore[attr-defined]


def to_dtype(x: Tensor, dtype: DTypeLike) -> Tensor:
    dtype = as_dtype(dtype)
    if dtype is x.dtype:
        return x
    if dtype.is_complex or x.dtype.is_complex:
        from .complex import arith  # complex tensors are pairs of reals
        return arith.to_dtype(x, dtype)
    check_device_dtype(x._backend, dtype, "to_dtype")
    data = x._backend.cast(x._data, dtype.np)
    if not dtype.is_floating_point:
        return wrap(data, x._backend)
    return record(data, x._backend, O.ToDtype(graph_only(x)), x)
