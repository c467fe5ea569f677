"""The cpu backend's switches: whether oneDNN and MKL serve calls, and the OpenMP threads
both run on.

- the environment variables ``SHREW_CPU_ONEDNN=0`` and ``SHREW_CPU_MKL=0`` (read at
  import) turn a library off;
- ``set_onednn(flag)`` / ``set_mkl(flag)`` change it for the whole process, and
  ``use_onednn(flag)`` / ``use_mkl(flag)`` are context managers that set it for a block;
- ``onednn_active()`` / ``mkl_active()`` say whether it serves calls now (installed,
  loaded, switched on).

``set_num_threads(n)`` sets the OpenMP threads both run on (OMP_NUM_THREADS is read when
libgomp loads; threadpoolctl's limits apply too).  numpy's OpenBLAS keeps its own setting
(OPENBLAS_NUM_THREADS, threadpoolctl), except that loading MKL keeps it to one thread.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from .mkl import library as mkl
from .onednn import binding as onednn


def set_onednn(enabled: bool) -> bool:
    """Let the cpu backend use oneDNN where it serves a call (True) or keep its work on
    numpy (False), for the whole process; returns the previous setting."""
    return onednn.set_enabled(enabled)


def set_mkl(enabled: bool) -> bool:
    """Let the cpu backend run its matrix products on MKL (True) or on numpy (False), for
    the whole process; returns the previous setting."""
    return mkl.set_enabled(enabled)


@contextmanager
def _switched(set_enabled: Callable[[bool], bool], enabled: bool) -> Iterator[None]:
    old = set_enabled(enabled)
    try:
        yield
    finally:
        set_enabled(old)


def use_onednn(enabled: bool = True) -> AbstractContextManager[None]:
    """``with use_onednn(False): ...`` runs the block with the oneDNN path switched off
    (or on), then restores the previous setting."""
    return _switched(onednn.set_enabled, enabled)


def use_mkl(enabled: bool = True) -> AbstractContextManager[None]:
    """``with use_mkl(False): ...`` runs the block with its products on numpy (or MKL),
    then restores the previous setting."""
    return _switched(mkl.set_enabled, enabled)


def onednn_active() -> bool:
    """Whether oneDNN serves calls now: installed, loadable and switched on."""
    return onednn.available()


def mkl_active() -> bool:
    """Whether MKL serves the matrix products now: installed, loadable and switched on."""
    return mkl.available()


def set_num_threads(n: int) -> None:
    """Compute on n OpenMP threads: oneDNN's (an OpenMP setting of the calling thread: call
    it from the thread that runs the model) and MKL's."""
    onednn.set_num_threads(n)   # checks n
    mkl.set_num_threads(n)


def get_num_threads() -> int | None:
    """The OpenMP thread count of oneDNN (else MKL), or None where neither is loaded."""
    found = onednn.get_num_threads()
    return mkl.get_num_threads() if found is None else found
