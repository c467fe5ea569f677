"""Scans on scan.cl for OpenCL and CUDA: the scan and arg_scan primitives (one work-item
walks each line along dim, in order)."""
from __future__ import annotations

import numpy as np

from ..base import Storage
from . import KernelLaunches


class ScanLaunches(KernelLaunches):
    """scan and arg_scan on scan.cl."""

    def scan(self, fn: str, x: Storage, dim: int) -> Storage:
        lines = x.size // x.shape[dim] if x.size else 0
        return self._along("scan", f"scan_{fn}", x, dim, x.dtype, lines)

    def arg_scan(self, fn: str, x: Storage, dim: int) -> Storage:
        lines = x.size // x.shape[dim] if x.size else 0
        return self._along("scan", f"arg_scan_{fn}", x, dim, np.dtype(np.int64), lines)
