"""Which library runs the cpu backend's float32 matrix products, chosen by CPU vendor.

MKL picks its kernels by vendor as well as by instruction set; oneDNN by instruction set
alone. On Intel CPUs the two are at par and MKL serves (PyTorch's own choice, and its
bits); on the others oneDNN's matmul is the faster: on an AMD EPYC of family 25 (Zen 4,
AVX-512) it took 0.84-0.93x MKL's time on every product of the benchmarks' training steps
from about 2M multiply-adds (mlp_step's five GEMMs 11.2 against 13.1 ms).  Below that
size, and for any product oneDNN declines, MKL serves everywhere.

``SHREW_CPU_F32_PRODUCTS=onednn`` or ``=mkl`` (read at import) overrides the choice;
``f32_products_on_onednn`` is the switch the backend reads.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from .onednn import matmul as onednn_matmul

CPUINFO = Path("/proc/cpuinfo")


def vendor(cpuinfo: Path = CPUINFO) -> str:
    """The CPU's vendor string ("GenuineIntel", "AuthenticAMD", ...), or "" where the
    system does not say (no /proc/cpuinfo: not Linux, or not x86)."""
    try:
        with cpuinfo.open() as lines:
            for line in lines:
                if line.startswith("vendor_id"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return ""


def _choice() -> bool:
    forced = os.environ.get("SHREW_CPU_F32_PRODUCTS", "").strip().lower()
    if forced in ("onednn", "mkl"):
        return forced == "onednn"
    return vendor() not in ("GenuineIntel", "")


f32_products_on_onednn: bool = _choice()
"""Whether float32 products large enough for oneDNN go to it rather than to MKL."""


def onednn_f32_product(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None,
                       out: np.ndarray | None = None, alpha: float = 1.0) -> Any:
    """alpha * (a @ b) (+ bias), into `out` where given, on oneDNN for float32 operands
    where this CPU's vendor makes it the faster library; else, or where oneDNN declines,
    NotImplemented (MKL then serves)."""
    if not (f32_products_on_onednn and a.dtype == np.float32 == b.dtype):
        return NotImplemented
    return onednn_matmul.matmul(a, b, bias, out, alpha)
