"""Moving a tensor to another device or dtype (cast.cl on OpenCL and CUDA)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import op as O
from ..backends.registry import get_backend
from ..dtype import DType, as_dtype
from ..factory import record, wrap
from .common import check_device_dtype
from .index import note_host_range

if TYPE_CHECKING:
    from ..tensor import Tensor
    from ..typing import DTypeLike


def to(x: Tensor, device: str | DTypeLike | None = None,
       dtype: DTypeLike | None = None) -> Tensor:
    if isinstance(device, DType) or (dtype is None and device in (float, int, bool)):
        device, dtype = None, device
    out = x
    if dtype is not None:
        out = to_dtype(out, dtype)
    if device is not None:
        backend = get_backend(device)
        if backend is not out._backend:
            check_device_dtype(backend, out.dtype, "to")
            host = out.numpy()
            data = backend.from_numpy(host)
            out = record(data, backend, O.ToDevice(out), out)
            if not isinstance(data, np.ndarray):  # on a device: gather may use it as an index
                note_host_range(out, host)
    return out


def to_dtype(x: Tensor, dtype: DTypeLike) -> Tensor:
    dtype = as_dtype(dtype)
    if dtype is x.dtype:
        return x
    check_device_dtype(x._backend, dtype, "to_dtype")
    data = x._backend.cast(x._data, dtype.np)
    if not dtype.is_floating_point:
        return wrap(data, x._backend)
    return record(data, x._backend, O.ToDtype(x), x)
