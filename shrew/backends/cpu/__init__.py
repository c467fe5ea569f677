"""The CPU backend: numpy, the reference every other backend is tested against, with
optional fast paths on two of the libraries PyTorch's CPU build uses, where they are
installed (shrew's dependencies on x86-64 Linux):

- backend.py: the CPUBackend class, and at its top the table of which call goes to oneDNN,
  MKL or numpy (order, dtypes, sizes, files);
- onednn/: oneDNN, for float32 convolutions, pooling and recurrent layers (RNN, LSTM,
  GRU), and on large arrays softmax, standardize, layer norm, GELU and relu's gradient;
- mkl/: MKL, for float32 and float64 matrix products, and on large arrays a bias's sums and
  adds, same-shaped add, sub and mul, relu, and attention's products;
- thresholds.py: the sizes from which each library call serves;
- switches.py: turning either off (``SHREW_CPU_ONEDNN=0``, ``SHREW_CPU_MKL=0``,
  ``set_onednn``, ``use_mkl``, ...) and the threads they run on;
- native.py: what loading the two libraries shares.
"""
from __future__ import annotations

from .backend import CPUBackend, factory
from .switches import (get_num_threads, mkl_active, onednn_active, set_mkl, set_num_threads,
                       set_onednn, use_mkl, use_onednn)
from . import mkl, onednn

__all__ = ["CPUBackend", "factory", "set_onednn", "use_onednn", "onednn_active", "set_mkl",
           "use_mkl", "mkl_active", "set_num_threads", "get_num_threads", "mkl", "onednn"]
