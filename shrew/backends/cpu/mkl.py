"""Intel MKL's GEMMs (libmkl_rt, the ``mkl`` wheel of ``shrew[cpu-fast]``) for the cpu
backend's float32 and float64 matrix products, by ctypes.

Why not numpy's own (OpenBLAS): PyTorch's CPU build runs its products on MKL and its
convolutions on oneDNN, both on one pool of OpenMP threads.  shrew's convolutions run on
oneDNN's OpenMP threads too; with OpenBLAS's GEMMs beside them, two pools of busy-waiting
threads took turns on the same cores, and a convolution or a GEMM often waited for the
other pool's threads to give a core back (cnn_step 16 ms a step against 10 with MKL on
the OpenMP threads; benchmarks/README.md).  So MKL is loaded with its GNU OpenMP threading
layer, which is libgomp, the runtime oneDNN's gomp build uses: one pool for both.  numpy's
OpenBLAS is then kept to one thread (threadpoolctl), so that its idle workers do not spin
on the cores that pool needs; numpy's BLAS serves nothing of shrew's on the hot path then.

``matmul(a, b)`` takes numpy's matmul semantics (batch dims broadcast, 1-d operands
promoted) for float32 and float64 operands and returns ``NotImplemented`` where it does not
serve (switched off, MKL not loadable, another dtype, an empty or too large dimension):
the caller then runs numpy.  Operands are read in place wherever BLAS can address them
(row- or column-major matrices, any batch strides: one ``cblas_?gemm_batch_strided`` call
where the matrices are evenly spaced, else one ``cblas_?gemm_batch`` call over their
addresses); anything else is copied first.  MKL runs with
``MKL_DYNAMIC`` off on a fixed thread count, so the same inputs give the same bits.

The switch: ``SHREW_CPU_MKL=0`` (read at import), ``set_enabled``.  The library is looked
up next to the Python environment, then on the loader's path; SHREW_MKL_LIBRARY names it.
"""
from __future__ import annotations

import ctypes
import math
import os
from typing import Any

import numpy as np

from .native import LoadOnce, Switch, library_path

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112     # CBLAS_LAYOUT, CBLAS_TRANSPOSE
_THREADING_GNU = 3                                # MKL_THREADING_GNU (mkl_service.h)
_INT_MAX = 2**31 - 1                              # MKL_INT of the LP64 interface


class Runtime:
    """libmkl_rt with its GNU OpenMP threading layer, and its GEMMs declared."""

    def __init__(self, lib: ctypes.CDLL):
        lib.MKL_Set_Threading_Layer.argtypes = [ctypes.c_int]
        layer = lib.MKL_Set_Threading_Layer(_THREADING_GNU)
        if layer != _THREADING_GNU:   # MKL already ran in this process with another layer
            raise OSError(f"MKL's threading layer is {layer}, not GNU OpenMP (libgomp)")
        # Numerical reproducibility: MKL may not change the thread count of a call.
        lib.MKL_Set_Dynamic.argtypes = [ctypes.c_int]
        lib.MKL_Set_Dynamic(0)
        lib.MKL_Set_Num_Threads.argtypes = [ctypes.c_int]
        lib.MKL_Set_Num_Threads_Local.argtypes = [ctypes.c_int]
        lib.MKL_Get_Max_Threads.restype = ctypes.c_int
        if "MKL_NUM_THREADS" not in os.environ:   # else MKL has read the user's
            omp = ctypes.CDLL("libgomp.so.1")
            omp.omp_get_max_threads.restype = ctypes.c_int
            lib.MKL_Set_Num_Threads(omp.omp_get_max_threads())
        i, p = ctypes.c_int, ctypes.c_void_p
        self.gemm: dict = {}
        self.gemm_batch: dict = {}
        self.axpy: dict = {}
        self.asum: dict = {}
        self.gemv: dict = {}
        self.ger: dict = {}
        self.vml: dict = {}
        self.fdim: dict = {}
        for char, scalar in (("s", ctypes.c_float), ("d", ctypes.c_double)):
            gemm = getattr(lib, f"cblas_{char}gemm")
            gemm.restype = None
            gemm.argtypes = [i] * 6 + [scalar, p, i, p, i, scalar, p, i]
            batch = getattr(lib, f"cblas_{char}gemm_batch_strided")
            batch.restype = None
            batch.argtypes = [i] * 6 + [scalar, p, i, i, p, i, i, scalar, p, i, i, i]
            axpy = getattr(lib, f"cblas_{char}axpy")
            axpy.restype = None
            axpy.argtypes = [i, scalar, p, i, p, i]
            asum = getattr(lib, f"cblas_{char}asum")
            asum.restype, asum.argtypes = scalar, [i, p, i]
            gemv = getattr(lib, f"cblas_{char}gemv")
            gemv.restype = None
            gemv.argtypes = [i] * 4 + [scalar, p, i, p, i, scalar, p, i]
            ger = getattr(lib, f"cblas_{char}ger")
            ger.restype = None
            ger.argtypes = [i] * 3 + [scalar, p, i, p, i, p, i]
            dtype = np.dtype(f"float{32 if char == 's' else 64}")
            self.gemm[dtype], self.gemm_batch[dtype], self.axpy[dtype] = gemm, batch, axpy
            self.asum[dtype], self.gemv[dtype], self.ger[dtype] = asum, gemv, ger
            for fn, name in _VML_BINARY.items():
                vml = getattr(lib, f"v{char}{name}")
                vml.restype, vml.argtypes = None, [i, p, p, p]
                self.vml[fn, dtype] = vml
            fdim = getattr(lib, f"v{char}FdimI")   # the strided form, for a stride-0 b
            fdim.restype, fdim.argtypes = None, [i, p, i, p, i, p, i]
            self.fdim[dtype] = fdim
        self.lib = lib
        for char in "sd":
            batch = getattr(lib, f"cblas_{char}gemm_batch")
            batch.restype = None
            batch.argtypes = [i] + [p] * 13 + [i, p]
        self._pointer_batch = {np.dtype(np.float32): (lib.cblas_sgemm_batch, ctypes.c_float),
                               np.dtype(np.float64): (lib.cblas_dgemm_batch, ctypes.c_double)}

    def gemm_pointers(self, dtype: np.dtype, trans_a: int, trans_b: int, m: int, n: int,
                      k: int, alpha: float, a: np.ndarray, b: np.ndarray, c: np.ndarray,
                      lda: int, ldb: int, ldc: int, count: int) -> None:
        """C_i = alpha A_i B_i for the matrices at the addresses a[i], b[i], c[i]: one
        cblas_?gemm_batch call (one group), so that MKL spreads them over its threads."""
        fn, scalar = self._pointer_batch[dtype]
        ints = [(ctypes.c_int * 1)(v) for v in (trans_a, trans_b, m, n, k, lda, ldb, ldc,
                                                 count)]
        ta, tb, m_, n_, k_, lda_, ldb_, ldc_, size = ints
        fn(_ROW_MAJOR, ta, tb, m_, n_, k_, (scalar * 1)(alpha), a.ctypes.data, lda_,
           b.ctypes.data, ldb_, (scalar * 1)(0.0), c.ctypes.data, ldc_, 1, size)


def _load() -> Runtime:
    path = library_path("SHREW_MKL_LIBRARY", ("libmkl_rt.so.3", "libmkl_rt.so.2"), "mkl_rt")
    if path is None:
        raise OSError("libmkl_rt not found (pip install shrew[cpu-fast])")
    try:
        import threadpoolctl
    except ImportError as exc:   # without it OpenBLAS's threads would compete (above)
        raise OSError("shrew's MKL path needs threadpoolctl (pip install shrew[cpu-fast])"
                      ) from exc
    runtime = Runtime(ctypes.CDLL(path))
    _quiet_openblas(threadpoolctl)
    return runtime


def _quiet_openblas(threadpoolctl: Any) -> None:
    """Every OpenBLAS loaded now (numpy's, scipy's) to one thread."""
    threadpoolctl.ThreadpoolController().select(internal_api="openblas").limit(limits=1)


_library = LoadOnce(_load)
load = _library.load
_switch = Switch("SHREW_CPU_MKL")


def load_error() -> str | None:
    """Why MKL could not be loaded (it is tried on the first call), or None."""
    load()
    return _library.error


def available() -> bool:
    """Whether MKL serves the cpu backend's products now: loaded and switched on."""
    return _switch.on and load() is not None


def set_enabled(flag: bool) -> bool:
    """Switch the MKL path on or off for the whole process; returns the old setting."""
    return _switch.set(flag)


def set_num_threads(n: int) -> None:
    """MKL's thread count (checked by the caller, cpu.set_num_threads); OpenBLAS's pools,
    those loaded since MKL too, stay at one thread while MKL serves."""
    runtime = load()
    if runtime is not None:
        # The calling thread's own setting, where one was made (threadpoolctl makes one),
        # would override the process-wide one: both, as omp_set_num_threads is the
        # calling thread's.
        runtime.lib.MKL_Set_Num_Threads(n)
        runtime.lib.MKL_Set_Num_Threads_Local(n)
        if _switch.on:
            import threadpoolctl
            _quiet_openblas(threadpoolctl)


def get_num_threads() -> int | None:
    runtime = load()
    return None if runtime is None else runtime.lib.MKL_Get_Max_Threads()


# -- the product ---------------------------------------------------------------------------
def _layout(x: np.ndarray) -> tuple | None:
    """(transpose flag, leading dimension) under which BLAS reads x's last two dims where
    they lie, or None.  A dimension of size 1 may have any stride."""
    r, c = x.shape[-2:]
    s0, s1 = x.strides[-2:]
    size = x.itemsize
    if (c == 1 or s1 == size) and (r == 1 or (s0 % size == 0 and s0 >= c * size)):
        return _NO_TRANS, s0 // size if r > 1 else c
    if (r == 1 or s0 == size) and (c == 1 or (s1 % size == 0 and s1 >= r * size)):
        return _TRANS, s1 // size if c > 1 else r
    return None


def _addressable(x: np.ndarray) -> tuple:
    """(x, its layout) where BLAS can read x in place (its batch strides too: whole
    elements, not negative), else (a C-contiguous copy, its layout)."""
    layout = _layout(x)
    if (layout is not None and x.flags.aligned and layout[1] <= _INT_MAX
            and all(s >= 0 and s % x.itemsize == 0 for s in x.strides[:-2])):
        return x, layout
    x = np.ascontiguousarray(x)
    return x, _layout(x)


def _row_major(out: np.ndarray) -> int | None:
    """The leading dimension under which BLAS writes out's last two dims, row-major, in
    place, or None (its batch strides must be whole elements, not negative, too)."""
    layout = _layout(out)
    if (layout is None or layout[0] != _NO_TRANS or not out.flags.aligned
            or not out.flags.writeable or layout[1] > _INT_MAX
            or any(s < 0 or s % out.itemsize for s in out.strides[:-2])):
        return None
    return layout[1]


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None,
           alpha: float = 1.0) -> np.ndarray:
    """alpha * (a @ b) on MKL (numpy's matmul semantics), or NotImplemented; `out`, where
    given, is an array of the result's shape and dtype whose matrices are row-major (any
    leading dimension and batch strides: a transposed view of a buffer laid out for the
    caller's next step), and receives it."""
    if not _switch.on or a.dtype != b.dtype:
        return NotImplemented
    runtime = load()
    if runtime is None or a.ndim == 0 or b.ndim == 0 or a.dtype not in runtime.gemm:
        return NotImplemented
    if a.ndim == b.ndim == 2:   # most products: without the batch bookkeeping below
        (m, k), (k_b, n) = a.shape, b.shape
        ldc = n if out is None else _row_major(out)
        if k != k_b or not m * n * k or max(m, n, k) > _INT_MAX or ldc is None:
            return NotImplemented
        (a, (trans_a, lda)), (b, (trans_b, ldb)) = _addressable(a), _addressable(b)
        result = np.empty((m, n), a.dtype) if out is None else out
        runtime.gemm[a.dtype](_ROW_MAJOR, trans_a, trans_b, m, n, k, alpha, a.ctypes.data,
                              lda, b.ctypes.data, ldb, 0.0, result.ctypes.data, ldc)
        return result
    return _batched(runtime, a, b, out, alpha)


def _batched(runtime: Runtime, a: np.ndarray, b: np.ndarray, out: np.ndarray | None,
             alpha: float) -> Any:
    """matmul of operands with batch dims or a 1-d operand."""
    squeeze = [d for d, x in ((-2, a), (-1, b)) if x.ndim == 1]
    a = a[None, :] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    (m, k), (k_b, n) = a.shape[-2:], b.shape[-2:]
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return NotImplemented   # numpy raises its error
    count = math.prod(batch)
    if k != k_b or not m * n * k * count or max(m, n, k, count) > _INT_MAX:
        return NotImplemented
    (a, (trans_a, lda)), (b, (trans_b, ldb)) = _addressable(a), _addressable(b)
    if out is None:
        result = np.empty(batch + (m, n), a.dtype)
    else:   # a view with a 1-d operand's squeezed dims restored
        result = out[(Ellipsis,) + tuple(None if d in squeeze else slice(None)
                                         for d in (-2, -1))]
    ldc = _row_major(result)
    if ldc is None:
        return NotImplemented
    operands = (np.broadcast_to(a, batch + (m, k)), np.broadcast_to(b, batch + (k, n)), result)
    if count == 1:
        runtime.gemm[a.dtype](_ROW_MAJOR, trans_a, trans_b, m, n, k, alpha, a.ctypes.data,
                              lda, b.ctypes.data, ldb, 0.0, result.ctypes.data, ldc)
    elif (steps := _even_steps(batch, operands)) is not None:   # evenly spaced matrices
        sa, sb, sc = steps
        runtime.gemm_batch[a.dtype](_ROW_MAJOR, trans_a, trans_b, m, n, k, alpha,
                                    a.ctypes.data, lda, sa, b.ctypes.data, ldb, sb, 0.0,
                                    result.ctypes.data, ldc, sc, count)
    else:   # one call over a list of each operand's matrices
        pa, pb, pc = (_matrix_addresses(x, batch) for x in operands)
        runtime.gemm_pointers(a.dtype, trans_a, trans_b, m, n, k, alpha, pa, pb, pc,
                              lda, ldb, ldc, count)
    for d in squeeze:
        result = result.squeeze(d)
    return result if out is None else out


def _even_steps(batch: tuple, operands: tuple) -> tuple | None:
    """Each operand's step in elements from one matrix to the next, where every operand's
    matrices over the batch dims are evenly spaced in row-major order of those dims
    (contiguous batches, broadcast ones: step 0); else None."""
    dims = [d for d in range(len(batch)) if batch[d] > 1]
    steps = []
    for x in operands:
        strides = [x.strides[d] for d in dims]
        if any(outer != inner * batch[d] for outer, inner, d in
               zip(strides, strides[1:], dims[1:])):
            return None
        step = strides[-1] // x.itemsize if strides else 0
        if step > _INT_MAX:
            return None
        steps.append(step)
    return tuple(steps)


def _matrix_addresses(x: np.ndarray, batch: tuple) -> np.ndarray:
    """The address of each of x's matrices over the batch dims, in row-major order."""
    offsets = np.zeros((), np.int64)
    for size, stride in zip(batch, x.strides[:len(batch)]):
        offsets = (offsets[..., None] + np.arange(size, dtype=np.int64) * stride)
    return (offsets.reshape(-1) + x.ctypes.data).astype(np.uintp)


# Below this many elements numpy's own pass costs less than the call.
AXPY_MIN_SIZE = 1 << 14


def axpy(dst: np.ndarray, src: np.ndarray, alpha: float) -> bool:
    """dst += alpha * src in one pass (an optimizer's update), on MKL's threads; False where
    it does not serve: other dtypes, layouts or shapes, small or overlapping arrays."""
    if not (_switch.on and dst.dtype == src.dtype and dst.shape == src.shape
            and AXPY_MIN_SIZE <= dst.size <= _INT_MAX and dst.flags.c_contiguous
            and src.flags.c_contiguous and dst.flags.aligned and src.flags.aligned
            and dst.flags.writeable and not np.may_share_memory(dst, src)):
        return False
    runtime = load()
    if runtime is None or dst.dtype not in runtime.axpy:
        return False
    runtime.axpy[dst.dtype](dst.size, alpha, src.ctypes.data, 1, dst.ctypes.data, 1)
    return True


# The elementwise functions taken from MKL's vector library (VML): IEEE operations, so
# their results are numpy's bit for bit (checked, subnormals, infinities and NaNs too).
_VML_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul"}
# Below this many elements numpy's one-thread pass costs less than the call.
VML_MIN_SIZE = 1 << 15


def _vml_takes(x: np.ndarray) -> bool:
    """Whether VML serves x: switched on, C-contiguous and aligned, large enough."""
    return (VML_MIN_SIZE <= x.size <= _INT_MAX and _switch.on and x.flags.c_contiguous
            and x.flags.aligned)


def binary(fn: str, a: np.ndarray, b: np.ndarray) -> Any:
    """a + b, a - b or a * b of same-shaped C-contiguous float32 or float64 arrays on MKL's
    threads (a residual connection, a gradient summed), or NotImplemented: numpy's own
    pass runs on one thread, about 3.5x slower on 1 MB."""
    if not (fn in _VML_BINARY and a.shape == b.shape and a.dtype == b.dtype
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


# Below this many elements numpy's column sums cost less than the call.
SUM_MIN_SIZE = 1 << 15


def sum_around(x: np.ndarray, dims: tuple, keepdim: bool) -> Any:
    """x summed over `dims`, all of its dims but one run of kept ones (a layer's bias
    gradient: [N, T, D] over N and T, [N, C, H, W] over N, H and W), as matrix-vector
    products with vectors of ones on MKL's threads: x viewed as [before, kept, after],
    one product sums `after` away, another `before`.  NotImplemented where it does not
    serve: x not C-contiguous and large, float32 or float64, or the kept dims not one run.
    numpy sums over the outer dims one row after another on one thread; the products'
    rounding is no worse."""
    if not (SUM_MIN_SIZE <= x.size <= _INT_MAX and dims and _switch.on
            and x.flags.c_contiguous and x.flags.aligned):
        return NotImplemented   # (every sum asks: the cheap tests first)
    kept = [d for d in range(x.ndim) if d not in dims]
    around = _around(x.shape, kept)
    if around is None:
        return NotImplemented
    runtime = load()
    if runtime is None or x.dtype not in runtime.gemv:
        return NotImplemented
    gemv = runtime.gemv[x.dtype]
    before, after = around
    middle = x.size // (before * after)
    partial = x
    if after > 1:   # each [before * middle] row summed over its `after` columns
        partial = np.empty(before * middle, x.dtype)
        gemv(_ROW_MAJOR, _NO_TRANS, before * middle, after, 1.0, x.ctypes.data, after,
             _ones(after, x.dtype).ctypes.data, 1, 0.0, partial.ctypes.data, 1)
    shape = tuple(n if d in kept else 1 for d, n in enumerate(x.shape)) if keepdim else \
        tuple(x.shape[d] for d in kept)
    if before == 1:
        return partial.reshape(shape)
    out = np.empty(shape, x.dtype)   # the [before, middle] rows summed
    gemv(_ROW_MAJOR, _TRANS, before, middle, 1.0, partial.ctypes.data, middle,
         _ones(before, x.dtype).ctypes.data, 1, 0.0, out.ctypes.data, 1)
    return out


def add_broadcast_(dst: np.ndarray, src: np.ndarray) -> bool:
    """dst += src in place, src broadcasting along dst's other dims (a layer's bias: [1, N]
    into [M, N], [1, C, 1, 1] into [N, C, H, W]), as one rank-1 update on MKL's threads:
    dst viewed as [rows, cols] += x y^T, the bias in x or y and ones in the other.  Each
    element gets bias * 1 added, one rounding: numpy's bits.  False where it does not
    serve: dst not C-contiguous and large, src's sized dims not one run, other dtypes."""
    if not (_switch.on and SUM_MIN_SIZE <= dst.size <= _INT_MAX and dst.dtype == src.dtype
            and dst.ndim == src.ndim and dst.flags.c_contiguous and dst.flags.writeable
            and dst.flags.aligned):
        return False
    sized = [d for d in range(src.ndim) if src.shape[d] != 1]
    around = _around(dst.shape, sized)
    if not around or any(src.shape[d] != dst.shape[d] for d in sized) \
            or np.may_share_memory(dst, src):
        return False
    runtime = load()
    if runtime is None or dst.dtype not in runtime.ger:
        return False
    bias = np.ascontiguousarray(src).reshape(-1)
    before, after = around
    if after == 1:    # the bias along the rows' last dims: ones (rows) x bias (cols)
        rows, cols, x, y = before, bias.size, _ones(before, dst.dtype), bias
    else:             # along a middle dim: the bias repeated (rows) x ones (cols)
        rows, cols = before * bias.size, after
        x, y = (np.tile(bias, before) if before > 1 else bias), _ones(after, dst.dtype)
    runtime.ger[dst.dtype](_ROW_MAJOR, rows, cols, 1.0, x.ctypes.data, 1, y.ctypes.data, 1,
                           dst.ctypes.data, cols)
    return True


def _around(shape: tuple, run: list) -> tuple[int, int] | None:
    """(the size of shape's dims before `run`, that of those after it) where `run` is one
    unbroken, non-empty run of dims; else None."""
    if not run or run[-1] - run[0] + 1 != len(run):
        return None
    return math.prod(shape[:run[0]]), math.prod(shape[run[-1] + 1:])


_ONES: dict = {}


def _ones(n: int, dtype: np.dtype) -> np.ndarray:
    """A read-only vector of n ones, kept per (n, dtype): a few sizes recur in training."""
    key = (n, dtype)
    ones = _ONES.get(key)
    if ones is None:
        if len(_ONES) >= 64:
            _ONES.clear()
        ones = _ONES[key] = np.ones(n, dtype)
        ones.flags.writeable = False
    return ones


def abs_sum(x: np.ndarray) -> float | None:
    """sum(|x|) on MKL's threads (NaN exactly where x holds a NaN; inf where it holds an inf
    or the sum overflows), or None where MKL does not serve."""
    runtime = load() if _switch.on else None
    if (runtime is None or x.dtype not in runtime.asum or not x.flags.c_contiguous
            or not 0 < x.size <= _INT_MAX):
        return None
    return runtime.asum[x.dtype](x.size, x.ctypes.data, 1)


def has_nan(x: np.ndarray) -> bool:
    """Whether x holds a NaN: by abs_sum, else numpy's isnan pass."""
    total = abs_sum(x)
    return bool(np.isnan(x).any()) if total is None else math.isnan(total)
