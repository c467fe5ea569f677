"""The Backend protocol on a numpy-compatible array module, shared by the cpu backend
(numpy) and the cuda backend (CuPy): ``ArrayModuleBackend`` (backend.py), with the
batch-folded convolution (folded_conv.py) and the matrix routines (linalg.py).
"""
from __future__ import annotations

from .backend import ArrayModuleBackend

__all__ = ["ArrayModuleBackend"]
