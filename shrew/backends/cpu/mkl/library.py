"""libmkl_rt loaded once by ctypes with its GNU OpenMP threading layer, its BLAS and VML
functions declared; the on/off switch and MKL's thread count (see the package docstring)."""
from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np

from ..native import LoadOnce, Switch, library_path

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112        # CBLAS_LAYOUT, CBLAS_TRANSPOSE
_THREADING_GNU = 3                                # MKL_THREADING_GNU (mkl_service.h)
INT_MAX = 2**31 - 1                               # MKL_INT of the LP64 interface

# The elementwise functions taken from MKL's vector library (VML): IEEE operations, so
# their results are numpy's bit for bit (checked, subnormals, infinities and NaNs too).
VML_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul"}


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
        self.iamin: dict = {}
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
            iamin = getattr(lib, f"cblas_i{char}amin")
            iamin.restype, iamin.argtypes = ctypes.c_size_t, [i, p, i]
            gemv = getattr(lib, f"cblas_{char}gemv")
            gemv.restype = None
            gemv.argtypes = [i] * 4 + [scalar, p, i, p, i, scalar, p, i]
            ger = getattr(lib, f"cblas_{char}ger")
            ger.restype = None
            ger.argtypes = [i] * 3 + [scalar, p, i, p, i, p, i]
            dtype = np.dtype(f"float{32 if char == 's' else 64}")
            self.gemm[dtype], self.gemm_batch[dtype], self.axpy[dtype] = gemm, batch, axpy
            self.asum[dtype], self.gemv[dtype], self.ger[dtype] = asum, gemv, ger
            self.iamin[dtype] = iamin
            for fn, name in VML_BINARY.items():
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
        fn(ROW_MAJOR, ta, tb, m_, n_, k_, (scalar * 1)(alpha), a.ctypes.data, lda_,
           b.ctypes.data, ldb_, (scalar * 1)(0.0), c.ctypes.data, ldc_, 1, size)


def _load() -> Runtime:
    path = library_path("SHREW_MKL_LIBRARY", ("libmkl_rt.so.3", "libmkl_rt.so.2"), "mkl_rt")
    if path is None:
        raise OSError("libmkl_rt not found (pip install mkl; shrew installs it on x86-64 Linux)")
    try:
        import threadpoolctl
    except ImportError as exc:   # without it OpenBLAS's threads would compete (package doc)
        raise OSError("shrew's MKL path needs threadpoolctl (pip install threadpoolctl)"
                      ) from exc
    runtime = Runtime(ctypes.CDLL(path))
    _quiet_openblas(threadpoolctl)
    return runtime


def _quiet_openblas(threadpoolctl: Any) -> None:
    """Every OpenBLAS loaded now (numpy's, scipy's) to one thread."""
    threadpoolctl.ThreadpoolController().select(internal_api="openblas").limit(limits=1)


_library = LoadOnce(_load)
load = _library.load
switch = Switch("SHREW_CPU_MKL")


def load_error() -> str | None:
    """Why MKL could not be loaded (it is tried on the first call), or None."""
    load()
    return _library.error


def available() -> bool:
    """Whether MKL serves the cpu backend's products now: loaded and switched on."""
    return switch.on and load() is not None


def set_enabled(flag: bool) -> bool:
    """Switch the MKL path on or off for the whole process; returns the old setting."""
    return switch.set(flag)


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
        if switch.on:
            import threadpoolctl
            _quiet_openblas(threadpoolctl)


def get_num_threads() -> int | None:
    runtime = load()
    return None if runtime is None else runtime.lib.MKL_Get_Max_Threads()
