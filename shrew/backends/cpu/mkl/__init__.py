"""Intel MKL (libmkl_rt, the ``mkl`` wheel, a dependency on x86-64 Linux) for the cpu backend, by
ctypes: float32 and float64 matrix products, and on large arrays a bias's sums and adds,
same-shaped add, sub and mul, relu, and in-place adds.  Which call the backend hands to MKL
is cpu/backend.py's table.

Modules: library (loading, the switch, threads, the declarations), gemm (the products),
vector (axpy, asum, VML's add, sub, mul and fdim), bias (a bias's gradient and add),
attention (attention's products, around oneDNN's softmax).

Why not numpy's own BLAS (OpenBLAS): PyTorch's CPU build runs its products on MKL and its
convolutions on oneDNN, both on one pool of OpenMP threads.  shrew's convolutions run on
oneDNN's OpenMP threads too; with OpenBLAS's GEMMs beside them, two pools of busy-waiting
threads took turns on the same cores, and a convolution or a GEMM often waited for the
other pool's threads to give a core back (cnn_step 16 ms a step against 10 with MKL on
the OpenMP threads; benchmarks/README.md).  So MKL is loaded with its GNU OpenMP threading
layer, which is libgomp, the runtime oneDNN's gomp build uses: one pool for both.  numpy's
OpenBLAS is then kept to one thread (threadpoolctl), so that its idle workers do not spin
on the cores that pool needs; numpy's BLAS serves nothing of shrew's on the hot path then.

Every function returns ``NotImplemented`` (or False, None) where it does not serve, and
the caller then runs numpy.  The switch: ``SHREW_CPU_MKL=0`` (read at import),
``set_enabled``.  The library is looked up next to the Python environment, then on the
loader's path; SHREW_MKL_LIBRARY names it.
"""
from __future__ import annotations

from .bias import add_broadcast_, sum_around
from .gemm import matmul
from .library import (Runtime, available, get_num_threads, load, load_error, set_enabled,
                      set_num_threads)
from .vector import abs_sum, axpy, binary, has_nan, relu

__all__ = ["Runtime", "abs_sum", "add_broadcast_", "available", "axpy", "binary",
           "get_num_threads", "has_nan", "load", "load_error", "matmul", "relu",
           "set_enabled", "set_num_threads", "sum_around"]
