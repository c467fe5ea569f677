"""The fft primitive on fft.cl: a direct DFT per dim, for OpenCL, which has no FFT library
in shrew (pyvkfft needs OpenCL headers and a compiler at install time; docs/backend-guide.md)."""
from __future__ import annotations

import math

import numpy as np

from ..base import Storage
from . import KernelLaunches


class FFTLaunches(KernelLaunches):
    """fft on fft.cl: one pass of the `dft` kernel per transformed dim."""

    def fft(self, x: Storage, dims: tuple, inverse: bool) -> Storage:
        out = self.contiguous(x)
        shape = x.shape
        for d in dims:
            n, inner = shape[d], math.prod(shape[d + 1:-1])
            total = math.prod(shape[:-1])
            result = self._empty(shape, x.dtype)
            if total:
                self._launch_1d("fft", x.dtype, "dft", total, np.int64(total), np.int64(n),
                                np.int64(inner), np.int32(inverse), self._arg(out),
                                self._arg(result))
            out = result
        return out
