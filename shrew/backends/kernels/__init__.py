"""Kernel sources shared by the OpenCL and CUDA backends, and the launches of those both run.

Each family (``elementwise``, ``cast``, ``reduce``, ``matmul``, ``conv``, ``pool``,
``norm``, ``index``, ``scan``, ``sort``, ``random``, ``special``) is one ``.cl`` file
written against a few macros; ``source`` prefixes it with the dialect's prelude and
``common.h``, and ``dtype_defines`` gives the -D values that specialise it to one element
type.

The families both backends launch the same way have a Python module of the same name
beside their ``.cl`` file, a mixin that allocates the outputs and sets up the launch
arguments once: conv.py (im2col, col2im), pool.py (max_pool2d, avg_pool2d), index.py
(gather, scatter_add, scatter), scan.py (scan, arg_scan), sort.py (argsort) and random.py
(the Philox generator's state).  Each is a ``KernelLaunches``, whose hooks the backend
supplies.  fft.py (fft.cl, a direct DFT) is launched by the OpenCL backend only: CUDA
has cuFFT (through CuPy).
"""
from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from ...core.shape import pool_window_counts, window_counts
from ..base import Storage

KERNEL_DIR = Path(__file__).resolve().parent
DIALECTS = ("opencl", "cuda")

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

# storage type, compute type, accumulator, type of a sum
_TYPES = {
    np.dtype(np.float16): ("half", "float", "float", "half"),
    np.dtype(ml_dtypes.bfloat16): ("bf16", "float", "float", "bf16"),  # 16 bits, widened
    np.dtype(np.float32): ("float", "float", "float", "float"),
    np.dtype(np.float64): ("double", "double", "double", "double"),
    np.dtype(np.uint8): ("u8", "int", "i64", "i64"),
    np.dtype(np.int8): ("i8", "int", "i64", "i64"),
    np.dtype(np.int16): ("i16", "int", "i64", "i64"),
    np.dtype(np.int32): ("int", "int", "i64", "i64"),
    np.dtype(np.int64): ("i64", "i64", "i64", "i64"),
    np.dtype(np.bool_): ("u8", "int", "i64", "i64"),
}

# numpy dtype of CT where it differs from the storage dtype
_COMPUTE: dict[np.dtype, np.dtype] = {
    np.dtype(np.float16): np.dtype(np.float32),
    np.dtype(ml_dtypes.bfloat16): np.dtype(np.float32),
    **{np.dtype(t): np.dtype(np.int32) for t in (np.bool_, np.uint8, np.int8, np.int16)}}


@cache
def source(family: str, dialect: str = "opencl") -> str:
    """The full text of one kernel family in one dialect."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown kernel dialect {dialect!r}; expected one of {DIALECTS}")
    return with_prelude((KERNEL_DIR / f"{family}.cl").read_text(), dialect)


def with_prelude(kernels: str, dialect: str) -> str:
    """Kernels written against the shared macros (a family, or generated ones), after the
    dialect's prelude and common.h."""
    parts = (f"prelude_{dialect}.h", "common.h")
    return "\n".join([*((KERNEL_DIR / name).read_text() for name in parts), kernels])


def dtype_defines(dtype: np.dtype) -> dict:
    """The -D values that specialise a family to elements of `dtype`."""
    dtype = np.dtype(dtype)
    t, ct, acc, sum_t = _TYPES[dtype]
    return {
        "ELEM_T": t, "CALC_T": ct, "ACC_T": acc, "SUM_T": sum_t,
        "IS_FLOAT": int(dtype.kind == "f" or dtype == _BFLOAT16), "IS_BOOL": int(dtype.kind == "b"),
        "IS_BF16": int(dtype == _BFLOAT16),
        "UNIFORM_BITS": 8 if dtype == _BFLOAT16 else {"e": 11, "f": 24, "d": 53}.get(dtype.char, 0),
    }


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The numpy dtype matching CT, for passing scalar kernel arguments."""
    return _COMPUTE.get(np.dtype(dtype), np.dtype(dtype))


# float16 and bfloat16 are summed, scanned, normalised and multiplied in float32 and
# rounded once at the end, as PyTorch's kernels accumulate (its acc_type) and as ACC_T is
# float for half here: numpy sums ml_dtypes' bfloat16, and accumulates every cumsum, in the
# element type (a thousand bfloat16 0.1s summed to 32.0), and its float16 product has no
# BLAS (5x slower than widening to float32).
LOW_PRECISION = frozenset({np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)})


def accumulator(dtype: np.dtype) -> np.dtype:
    """The dtype the array-module code accumulates `dtype` in: float32 for the 16-bit
    floats, else `dtype` itself."""
    return np.dtype(np.float32) if dtype in LOW_PRECISION else np.dtype(dtype)


def wrapped(value: Any, dtype: np.dtype) -> Any:
    """A Python int as `dtype` holds it, wrapping around as PyTorch's integers do (-2 is
    254 in uint8); numpy refuses out-of-range ints.  Other values pass unchanged."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" and isinstance(value, float) and value.is_integer():
        value = int(value)  # a whole float (a pad or fill value) wraps as that int
    if dtype.kind in "iu" and isinstance(value, int) and not isinstance(value, bool):
        return np.array(value).astype(dtype)[()]
    return value


def window_output(h: int, w: int, kernel: tuple, stride: tuple, padding: tuple) -> tuple:
    """(Ho, Wo): how many windows of `kernel` fit an h x w image, padded and strided."""
    return window_counts((h, w), kernel, stride, padding)


def avg_pool_divisor(sizes: tuple, kernel: tuple, stride: tuple, padding: tuple, out: tuple,
                     count_include_pad: bool, divisor_override: int | None) -> np.ndarray:
    """avg_pool2d's divisor per window, [Ho, Wo] (or [Do, Ho, Wo] for a 3-d pool), as
    PyTorch counts it (float64): the outer product of each dim's counts."""
    if divisor_override is not None:
        return np.full(out, float(divisor_override))
    divisor = np.ones(())
    for size, k, s, p, o in zip(sizes, kernel, stride, padding, out):
        divisor = np.multiply.outer(
            divisor, np.array(pool_window_counts(size, k, s, p, o, count_include_pad), float))
    return divisor


def max_pool_fill(dtype: np.dtype) -> float | int:
    """What max-pooling pads with, so padding never wins: -inf, or the dtype's lowest."""
    kind = dtype.kind
    if kind == "f" or dtype.name == "bfloat16":  # ml_dtypes' bfloat16 has kind "V"
        return -math.inf
    return int(np.iinfo(dtype).min) if kind in "iu" else 0


class KernelLaunches:
    """The base of the family mixins (conv.py, pool.py, index.py, scan.py, sort.py).  The
    backend supplies these hooks:
    - ``_empty(shape, dtype)`` and ``full(shape, value, dtype)``: new C-contiguous storage,
      and ``contiguous(x)``, a C-contiguous copy of x;
    - ``_layout(x)``: x's strides in elements, then the offset of its first element, as the
      kernels read them from meta;
    - ``_meta(values)``: a device int64 array holding `values` (the backends cache it by
      value);
    - ``_arg(x)``: what a kernel parameter gets for storage x (a buffer or a device array);
    - ``_launch_1d(family, dtype, name, n, *args)``: kernel `name` of `family` on n
      work-items."""

    _empty: Any
    full: Any
    contiguous: Any
    _layout: Any
    _meta: Any
    _arg: Any
    _launch_1d: Any

    def _along(self, family: str, name: str, x: Storage, dim: int, out_dtype: np.dtype,
               items: int, *scalars: Any) -> Storage:
        """out = kernel `name` over x along dim, one work-item per line or per element
        (scan.cl, sort.cl)."""
        out = self._empty(x.shape, out_dtype)
        if out.size:
            meta = self._meta(x.shape + self._layout(x) + self._layout(out))
            self._launch_1d(family, x.dtype, name, items, np.int64(items), np.int32(x.ndim),
                            np.int32(dim), *scalars, meta, self._arg(x), self._arg(out))
        return out
