"""Sorting on sort.cl for OpenCL and CUDA: the argsort primitive (one work-item per
element counts its rank along dim)."""
from __future__ import annotations

import numpy as np

from ..base import Storage
from . import KernelLaunches


class SortLaunches(KernelLaunches):
    """argsort on sort.cl."""

    def argsort(self, x: Storage, dim: int, descending: bool) -> Storage:
        return self._along("sort", "argsort", x, dim, np.dtype(np.int64), x.size,
                           np.int32(descending))
