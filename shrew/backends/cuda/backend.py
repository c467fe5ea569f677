"""The CUDA backend: CuPy arrays as storage, the array-module code path of the CPU backend,
and the shared kernels of ../kernels compiled for CUDA.

What runs where, and what checks it without a GPU:
- Every primitive inherited from ArrayModuleBackend (layout, elementwise, comparisons,
  reductions, cast, cat, pad, copy_, and matmul, which CuPy hands to cuBLAS), and the
  optional conv2d, conv2d_backward (array_module/folded_conv.py: copies and cuBLAS GEMMs)
  and max_pool2d_backward (a store where windows do not overlap), is the code the CPU
  tests run with numpy; here the same lines call CuPy.
- The mixins of ../kernels, shared with the OpenCL backend, launch the sources it runs
  (no atomics: one thread per output, or per line): ConvLaunches (kernels/conv.py: im2col,
  col2im on conv.cl), PoolLaunches (kernels/pool.py: max_pool2d, avg_pool2d on pool.cl),
  IndexLaunches (kernels/index.py: gather, scatter_add, scatter on index.cl),
  ScanLaunches and SortLaunches (kernels/scan.py, sort.py: scan, arg_scan, argsort on
  scan.cl, sort.cl), RnnLaunches (kernels/rnn.py: rnn_cell and its backward on rnn.cl) and
  PhiloxRNG (kernels/random.py: the generator, on random.cl).
  The special functions of unary and binary (base.SPECIAL_UNARY_FNS, SPECIAL_BINARY_FNS)
  run special.cl, as on OpenCL, on contiguous operands (_special_kernel).
  tests/test_cuda_nvrtc.py compiles them for CUDA with NVRTC, and
  tests/test_cuda_backend.py runs this very class, numpy arrays standing in for CuPy's and
  each launch executed through OpenCL, through the conformance suite.
- Only a GPU runs: CuPy's side of every ``self.xp`` call (allocation from CuPy's memory
  pool, cuBLAS, CuPy's elementwise and reduction kernels, the host copies of from_numpy
  and to_numpy), ``erf`` (cupyx.scipy.special), the cupy.cuda.Device scope of each
  primitive, launch.Launcher.function (cupy.RawModule compiling, then the launch), and the
  custom kernels in float16 (POCL has no half, so the tests only compile those).
  CuPy builds every kernel with -ftz=true: float32 subnormals flush to zero on CUDA.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from ..base import FAST_PATHS, PRIMITIVES, SPECIAL_BINARY_FNS, SPECIAL_UNARY_FNS, Storage
from ..array_module import ArrayModuleBackend
from ..kernels.conv import ConvLaunches
from ..kernels.index import IndexLaunches
from ..kernels.pool import PoolLaunches
from ..kernels.random import PhiloxRNG
from ..kernels.rnn import RnnLaunches
from ..kernels.scan import ScanLaunches
from ..kernels.sort import SortLaunches

_META_CACHE_SIZE = 4096


class CUDABackend(PhiloxRNG, ConvLaunches, PoolLaunches, IndexLaunches, ScanLaunches,
                  SortLaunches, RnnLaunches, ArrayModuleBackend):
    """The primitive kernel set on one CUDA device, through CuPy.

    `xp` is cupy, `special` cupyx.scipy.special and `launch` a launch.Launcher; the tests
    pass numpy, scipy.special and a launcher that runs the kernels on OpenCL.  bfloat16
    needs CuPy 14 or later (ml_dtypes' type); an older CuPy leaves it out of `dtypes`.
    """

    dtypes = ArrayModuleBackend.dtypes  # the kernels' dtypes (a device may have fewer)

    def __init__(self, index: int, xp: Any, special: Any, launch: Any,
                 description: str = "") -> None:
        super().__init__(f"cuda:{index}")
        self.xp = xp
        self._special = special
        self.description = description
        self._index = index
        self._launch = launch
        self._metas: dict = {}
        if not _stores_bfloat16(xp):
            self.dtypes = self.dtypes - {_BFLOAT16}

    def __repr__(self) -> str:
        return f"CUDABackend({self.device}: {self.description})"

    def special(self, name: str) -> Any:
        return getattr(self._special, name)

    # -- the special functions (special.cl) ---------------------------------------------
    def unary(self, fn: str, x: Storage) -> Storage:
        if fn in SPECIAL_UNARY_FNS:
            return self._special_kernel(f"unary_{fn}", x)
        return ArrayModuleBackend.unary(self, fn, x)

    def binary(self, fn: str, a: Storage, b: Storage) -> Storage:
        if fn in SPECIAL_BINARY_FNS:
            return self._special_kernel(f"binary_{fn}", a, b)
        return ArrayModuleBackend.binary(self, fn, a, b)

    def _special_kernel(self, name: str, *inputs: Storage) -> Storage:
        """special.cl's kernel `name` over the broadcast inputs, made contiguous first (these
        are rare ops: one layout, a flat run, serves them), one thread per element."""
        xp = self.xp
        shape = np.broadcast_shapes(*(x.shape for x in inputs))
        flat = [xp.ascontiguousarray(xp.broadcast_to(x, shape)) for x in inputs]
        out = xp.empty(shape, inputs[0].dtype)
        n = out.size
        if n:
            meta = self._meta((n,) + (1, 0) * len(flat))  # one dim; each operand stride 1
            self._launch("special", out.dtype, name, n, np.int64(n), np.int64(1), np.int32(1),
                         meta, *flat, out)
        return out

    # -- plumbing ------------------------------------------------------------------------
    def _meta(self, values: tuple) -> Storage:
        """A device int64 array of `values` (geometry, shapes, strides), cached by value, so
        a layout seen before costs no upload."""
        meta = self._metas.get(values)
        if meta is None:
            if len(self._metas) >= _META_CACHE_SIZE:
                self._metas.clear()
            meta = self.xp.asarray(np.array(values or (0,), dtype=np.int64))
            self._metas[values] = meta
        return meta

    def _layout(self, x: Storage) -> tuple:
        """x's strides in elements, then offset 0: a kernel gets a pointer to x's first
        element."""
        return tuple(s // x.itemsize for s in x.strides) + (0,)

    # -- host transfer -------------------------------------------------------------------
    def from_numpy(self, a: np.ndarray) -> Storage:
        # CuPy stores native byte order only.
        native = a.astype(a.dtype.newbyteorder("="), copy=False)
        return self.xp.array(native, copy=True, order="C")

    def to_numpy(self, x: Storage) -> np.ndarray:
        return self.xp.asnumpy(x)  # C order

    # -- random numbers: PhiloxRNG keeps the state; random.cl makes the numbers ----------
    def _empty(self, shape: tuple, dtype: np.dtype) -> Storage:
        return self.xp.empty(shape, dtype)

    def _arg(self, x: Storage) -> Storage:
        return x  # a CuPy array passes as a pointer to its first element

    def allocation(self, x: Storage
                   ) -> Any:  # base.Allocation: a view's MemoryPointer shares its Memory
        return x.data.mem

    def _launch_1d(self, family: str, dtype: np.dtype, name: str, n: int, *args: Any) -> None:
        self._launch(family, dtype, name, n, *args)

    def _launch_random(self, name: str, dtype: np.dtype, blocks: int, args: tuple,
                       out: Storage) -> None:
        self._launch("random", dtype, name, blocks, *args, out)


_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


def _stores_bfloat16(xp: Any) -> bool:
    """Whether the array module makes bfloat16 arrays (CuPy 14 on: earlier ones refuse the
    dtype)."""
    try:
        xp.zeros(1, dtype=_BFLOAT16)
    except Exception:  # CuPy's ValueError or TypeError for a dtype it does not know
        return False
    return True


def _on_device(primitive: Callable[..., Any]) -> Callable[..., Any]:
    def on_device(self: CUDABackend, *args: Any, **kwargs: Any) -> Any:
        with self.xp.cuda.Device(self._index):
            return primitive(self, *args, **kwargs)
    return functools.wraps(primitive)(on_device)


# Each primitive allocates and launches on this backend's GPU, whichever device is current
# in the calling thread (CuPy works on the current one).
for _name in PRIMITIVES + FAST_PATHS:
    if hasattr(CUDABackend, _name):   # the optional fast paths it has
        setattr(CUDABackend, _name, _on_device(getattr(CUDABackend, _name)))
