"""One pass over whole vectors on MKL's threads, where numpy's runs on one: BLAS's axpy
(an in-place add), asum (the NaN test before a oneDNN call) and iamin (the smallest
magnitude), VML's add, sub, mul and fdim (relu).  Each declines (False, None or
NotImplemented) where it does not serve: MKL off or not loaded, other dtypes or layouts,
arrays below the size in the cpu backend's table (cpu/backend.py)."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import thresholds
from .library import INT_MAX, VML_BINARY, load, switch


def axpy(dst: np.ndarray, src: np.ndarray, alpha: float) -> bool:
    """dst += alpha * src in one pass (an optimizer's update), on MKL's threads; False where
    it does not serve: other dtypes, layouts or shapes, small or overlapping arrays."""
    if not (switch.on and dst.dtype == src.dtype and dst.shape == src.shape
            and thresholds.AXPY_MIN_SIZE <= dst.size <= INT_MAX and dst.flags.c_contiguous
            and src.flags.c_contiguous and dst.flags.aligned and src.flags.aligned
            and dst.flags.writeable and not np.may_share_memory(dst, src)):
        return False
    runtime = load()
    if runtime is None or dst.dtype not in runtime.axpy:
        return False
    runtime.axpy[dst.dtype](dst.size, alpha, src.ctypes.data, 1, dst.ctypes.data, 1)
    return True


def _vml_takes(x: np.ndarray) -> bool:
    """Whether VML serves x: switched on, C-contiguous and aligned, large enough."""
    return (thresholds.VML_MIN_SIZE <= x.size <= INT_MAX and switch.on and x.flags.c_contiguous
            and x.flags.aligned)


def binary(fn: str, a: np.ndarray, b: np.ndarray) -> Any:
    """a + b, a - b or a * b of same-shaped C-contiguous float32 or float64 arrays on MKL's
    threads (a residual connection, a gradient summed), or NotImplemented: numpy's own
    pass runs on one thread, about 3.5x slower on 1 MB."""
    if not (fn in VML_BINARY and a.shape == b.shape and a.dtype == b.dtype
            and _vml_takes(a) and _vml_takes(b)):
        return NotImplemented
    runtime = load()
    if runtime is None or (fn, a.dtype) not in runtime.vml:
        return NotImplemented
    out = np.empty(a.shape, a.dtype)
    runtime.vml[fn, a.dtype](a.size, a.ctypes.data, b.ctypes.data, out.ctypes.data)
    return out


def relu(x: np.ndarray) -> Any:
    """max(x, 0) as numpy's (+0 for every x <= 0, -0 too; NaN kept) for a C-contiguous
    float32 or float64 x, on MKL's threads (1 MB: 27 us against numpy's 66), or
    NotImplemented: VML's fdim(x, 0) (x where x > 0, else +0; NaN where x is NaN: C99's),
    its strided form reading the 0 as a vector of stride 0."""
    if not _vml_takes(x):
        return NotImplemented
    runtime = load()
    fdim = None if runtime is None else runtime.fdim.get(x.dtype)
    if fdim is None:
        return NotImplemented
    out = np.empty(x.shape, x.dtype)
    fdim(x.size, x.ctypes.data, 1, np.zeros(1, x.dtype).ctypes.data, 0, out.ctypes.data, 1)
    return out


def _whole_vector(x: np.ndarray, routines: str) -> Callable | None:
    """MKL's level-1 routine from the runtime's table `routines` ("asum", "iamin") for x's
    dtype, where it can take x whole: switched on and loaded, x C-contiguous, 1 to INT_MAX
    elements; else None."""
    runtime = load() if switch.on else None
    if runtime is None or not x.flags.c_contiguous or not 0 < x.size <= INT_MAX:
        return None
    return getattr(runtime, routines).get(x.dtype)


def abs_sum(x: np.ndarray) -> float | None:
    """sum(|x|) on MKL's threads (NaN exactly where x holds a NaN; inf where it holds an inf
    or the sum overflows), or None where MKL does not serve."""
    asum = _whole_vector(x, "asum")
    return None if asum is None else asum(x.size, x.ctypes.data, 1)


def smallest_magnitude(x: np.ndarray) -> float | None:
    """min(|x|) over a C-contiguous float32 or float64 x, on MKL's threads (BLAS's iamin;
    x must hold no NaN: where it does, the answer is any element's), or None where MKL
    does not serve."""
    iamin = _whole_vector(x, "iamin")
    return None if iamin is None else abs(float(x.reshape(-1)[iamin(x.size, x.ctypes.data, 1)]))


def has_nan(x: np.ndarray) -> bool:
    """Whether x holds a NaN: by abs_sum, else numpy's isnan pass."""
    total = abs_sum(x)
    return bool(np.isnan(x).any()) if total is None else math.isnan(total)
