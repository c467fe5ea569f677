"""shrew.set_num_threads / get_num_threads: the threads the cpu backend computes on, as
torch's intra-op setting.  They are the OpenMP threads of oneDNN and MKL (backends/cpu)
and, where MKL does not serve the products and threadpoolctl is installed, OpenBLAS's
(numpy's GEMMs), set together so that the pools are the same size and take turns on the
same cores.  Where MKL serves them, OpenBLAS stays on the one thread MKL's loading left
it (backends/cpu/mkl/)."""
from __future__ import annotations

import os

from . import cpu


def set_num_threads(n: int) -> None:
    """Compute on n threads: the OpenMP threads of oneDNN (of the calling thread) and MKL,
    else numpy's BLAS threads (through threadpoolctl, where installed)."""
    cpu.set_num_threads(n)   # checks n
    if cpu.mkl_active():
        return
    try:
        import threadpoolctl
    except ImportError:   # numpy's BLAS keeps OPENBLAS_NUM_THREADS
        return
    threadpoolctl.threadpool_limits(n, user_api="blas")


def get_num_threads() -> int:
    """The threads the cpu backend computes on: the OpenMP setting of oneDNN or MKL where
    one is loaded, else numpy's BLAS's (threadpoolctl), else the cores."""
    openmp_threads = cpu.get_num_threads()
    if openmp_threads is not None:
        return openmp_threads
    try:
        import threadpoolctl
    except ImportError:
        return os.cpu_count() or 1
    blas = threadpoolctl.threadpool_info()
    return max((pool["num_threads"] for pool in blas if pool["user_api"] == "blas"),
               default=os.cpu_count() or 1)
