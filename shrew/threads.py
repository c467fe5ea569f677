"""shrew.set_num_threads / get_num_threads: the threads the cpu backend computes on, as
torch's intra-op setting.  They are oneDNN's OpenMP threads (backends/cpu/onednn) and,
where threadpoolctl is installed, OpenBLAS's (numpy's GEMMs), set together so that the
two pools are the same size and take turns on the same cores."""
from __future__ import annotations

import os

from .backends import cpu


def set_num_threads(n: int) -> None:
    """Compute on n threads: oneDNN's OpenMP threads (of the calling thread) and numpy's
    BLAS threads (through threadpoolctl, where installed)."""
    cpu.set_num_threads(n)   # checks n
    try:
        import threadpoolctl
    except ImportError:   # numpy's BLAS keeps OPENBLAS_NUM_THREADS
        return
    threadpoolctl.threadpool_limits(n, user_api="blas")


def get_num_threads() -> int:
    """The threads the cpu backend computes on: oneDNN's OpenMP setting where oneDNN is
    loaded, else numpy's BLAS's (threadpoolctl), else the cores."""
    onednn_threads = cpu.get_num_threads()
    if onednn_threads is not None:
        return onednn_threads
    try:
        import threadpoolctl
    except ImportError:
        return os.cpu_count() or 1
    blas = threadpoolctl.threadpool_info()
    return max((pool["num_threads"] for pool in blas if pool["user_api"] == "blas"),
               default=os.cpu_count() or 1)
