"""Keep freed host memory in the heap for reuse instead of handing it back to the OS.

numpy gives every operation a fresh output array.  glibc's malloc serves a block above its
mmap threshold (128 KiB at first, adjusted as the program runs) with a new mapping and
unmaps it on free, so every multi-megabyte temporary is paid for again in page faults while
the kernel zeroes its pages.  In a transformer training step on 2 cores that was about half
of the time.  Raising the mmap threshold to glibc's maximum (32 MiB) and the trim threshold
to 1 GiB lets a freed buffer serve the next allocation of its size.  The high-water mark is
unchanged; what differs is that up to 1 GiB of freed memory stays with the process.

It is a process-wide malloc setting, made once, on glibc only, when a host backend (cpu,
opencl) is first created.  SHREW_HOST_MALLOC=default leaves malloc as it is.
"""
from __future__ import annotations

import ctypes
import os
import platform

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20  # the largest glibc accepts on 64-bit machines
_TRIM_THRESHOLD = 1 << 30

_tuned: bool | None = None


def keep_freed_memory() -> bool:
    """Apply the malloc setting once; True when it is in effect."""
    global _tuned
    if _tuned is None:
        _tuned = _apply()
    return _tuned


def _apply() -> bool:
    if os.environ.get("SHREW_HOST_MALLOC", "").lower() == "default":
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    # mallopt returns 1 on success; both must hold, or freed blocks still go back.
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
                and mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))


def release_freed_memory() -> None:
    """Hand the freed memory the setting keeps back to the OS now (glibc's malloc_trim):
    for when a replay's arena takes over the arrays that memory served."""
    if _tuned:
        ctypes.CDLL(None).malloc_trim(0)
