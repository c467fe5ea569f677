"""The fft primitive on fft.cl: a direct DFT per dim, for OpenCL, which has no FFT library
in shrew (pyvkfft needs OpenCL headers and a compiler at install time; docs/backend-guide.md)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..base import Storage
from . import KernelLaunches

_TWIDDLES_KEPT = 64  # (n, dtype) tables kept per backend; past that the cache starts again


class FFTLaunches(KernelLaunches):
    """fft on fft.cl: one pass of the `dft` kernel per transformed dim."""

    from_numpy: Any

    def fft(self, x: Storage, dims: tuple, inverse: bool) -> Storage:
        out = self.contiguous(x)
        shape = x.shape
        total = math.prod(shape[:-1])
        for d in dims:
            n, inner = shape[d], math.prod(shape[d + 1:-1])
            result = self._empty(shape, x.dtype)
            if total:
                self._launch_1d("fft", x.dtype, "dft", total, np.int64(total), np.int64(n),
                                np.int64(inner), np.int32(inverse),
                                self._arg(self._twiddles(n, x.dtype)), self._arg(out),
                                self._arg(result))
            out = result
        return out

    def _twiddles(self, n: int, dtype: np.dtype) -> Storage:
        """exp(-2 pi i m / n) for m < n as (cos, sin) pairs in dtype, on the device, made
        once per (n, dtype) in double precision."""
        cache = self.__dict__.setdefault("_twiddle_tables", {})
        table = cache.get((n, dtype))
        if table is None:
            if len(cache) >= _TWIDDLES_KEPT:
                cache.clear()
            w = np.exp(-2j * np.pi * (np.arange(n) / n))
            table = cache[(n, dtype)] = self.from_numpy(
                np.stack([w.real, w.imag], -1).astype(dtype))
        return table
