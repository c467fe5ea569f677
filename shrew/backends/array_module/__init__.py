"""The Backend protocol on a numpy-compatible array module, shared by the cpu backend
(numpy) and the cuda backend (CuPy): ``ArrayModuleBackend`` (backend.py) and the mixins,
one per op family, that it is made of (elementwise.py, conv.py, pool.py, index.py), with
the batch-folded convolution (folded_conv.py) and the matrix routines (linalg.py).
"""
from __future__ import annotations

import warnings

from .backend import ArrayModuleBackend

__all__ = ["ArrayModuleBackend"]

# NaN and inf are data in shrew, as in PyTorch: numpy's floating-point warnings from these
# kernels (log(0), 0/0, ...) would only be noise.  Filtered for this package's modules
# alone (the pattern matches the start of a module's name).
warnings.filterwarnings("ignore", category=RuntimeWarning, module=__name__)
