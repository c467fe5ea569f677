"""Builds the shared kernel families for CUDA (NVRTC, through cupy.RawModule) and launches them.

Only ``Launcher.function`` and ``Launcher.generated`` need a GPU.  The rest is checked without one:
tests/test_cuda_nvrtc.py compiles every program of ``programs`` with ``compile_options``
(plus what CuPy adds), and tests/test_cuda_backend.py drives ``Launcher.__call__`` with
``function`` replaced by the same kernel run through OpenCL.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..base import SPECIAL_BINARY_FNS, SPECIAL_UNARY_FNS
from ..kernels import dtype_defines, source, with_prelude

BLOCK = 256  # threads per block; these 1-D kernels use no shared memory

# The kernels the CUDA backend launches, by family (one .cl file each).
KERNELS = {
    "conv": ("im2col", "col2im", "im2col3d", "col2im3d"),
    "pool": ("max_pool2d", "avg_pool2d", "max_pool3d", "avg_pool3d"),
    "index": ("gather", "scatter"),
    "scan": ("scan_sum", "scan_prod", "scan_logsumexp", "arg_scan_max", "arg_scan_min"),
    "sort": ("argsort",),
    "random": ("rand_uniform", "rand_normal"),
    "rnn": ("rnn_tanh_cell", "rnn_relu_cell", "rnn_tanh_cell_backward",
            "rnn_relu_cell_backward", "lstm_cell", "lstm_cell_backward", "gru_cell",
            "gru_cell_backward"),
    "special": (*(f"unary_{fn}" for fn in SPECIAL_UNARY_FNS),
                *(f"binary_{fn}" for fn in SPECIAL_BINARY_FNS)),
}
# rand and randn, the recurrent cells and the special functions are asked for float dtypes
# only
FLOAT_ONLY = frozenset({"random", "rnn", "special"})
FLOAT_ONLY_KERNELS = frozenset({"scan_logsumexp"})  # built under `#if IS_FLOAT` only

# The device-level -D values every program gets (WG_SIZE and TILE only size the OpenCL
# reduce and matmul kernels, which CUDA leaves to CuPy; common.h documents all four).
DEVICE_DEFINES = {"HAS_F64": 1, "HAS_F16": 1, "HAS_BF16": 0, "WG_SIZE": BLOCK, "TILE": 16}


def programs(dtypes: Iterable[Any]) -> list:
    """Every (family, dtype) program the backend can build for a device with `dtypes`."""
    return [(family, dtype) for family in KERNELS
            for dtype in sorted(map(np.dtype, dtypes), key=str)
            if family not in FLOAT_ONLY or _is_float(dtype)]


def kernels(family: str, dtype: np.dtype) -> tuple:
    """The kernels of `family` that its program for `dtype` holds."""
    return tuple(name for name in KERNELS[family]
                 if _is_float(dtype) or name not in FLOAT_ONLY_KERNELS)


def _is_float(dtype: Any) -> bool:
    """The kernels' IS_FLOAT: bfloat16 (numpy kind "V") too."""
    return bool(dtype_defines(np.dtype(dtype))["IS_FLOAT"])


def compile_options(dtype: np.dtype) -> tuple:
    """NVRTC options for one family in `dtype` (CuPy adds the architecture and include paths)."""
    defines = {**DEVICE_DEFINES, **dtype_defines(dtype)}
    # --fmad=false: round a*b+c as written, as numpy does and the OpenCL build (FP_CONTRACT OFF).
    return ("--fmad=false", *(f"-D{name}={value}" for name, value in defines.items()))


def grid_1d(n: int) -> tuple:
    """(grid, block) covering n threads; kernels return early past n."""
    return (-(-n // BLOCK),), (BLOCK,)


class Launcher:
    """The compiled programs of one device, built on first use and kept."""

    def __init__(self, cupy: Any) -> None:
        self._cupy = cupy
        self._modules: dict = {}
        self._functions: dict = {}
        self._generated: dict = {}

    def __call__(self, family: str, dtype: np.dtype, name: str, n: int, *args: Any) -> None:
        """Run kernel `name` on n threads; args follow the kernel's parameters (device arrays
        pass as a pointer to their first element, numpy scalars by value, sized exactly)."""
        grid, block = grid_1d(n)
        self.function(family, dtype, name)(grid, block, args)

    def function(self, family: str, dtype: np.dtype, name: str) -> Any:
        """The kernel as a callable (grid, block, args).  Only a GPU runs this."""
        key = (family, dtype, name)
        function = self._functions.get(key)
        if function is None:
            module = self._modules.get((family, dtype))
            if module is None:
                module = self._modules[family, dtype] = self._cupy.RawModule(
                    code=source(family, "cuda"), options=compile_options(dtype))
            function = self._functions[key] = module.get_function(name)
        return function

    def generated(self, kernels: str, name: str) -> Any:
        """Kernel `name` of `kernels`, float32 kernels written against the shared macros (the
        compiler's fused runs), as a callable (grid, block, args); built once per text.  Only
        a GPU runs this."""
        module = self._generated.get(kernels)
        if module is None:
            module = self._generated[kernels] = self._cupy.RawModule(
                code=with_prelude(kernels, "cuda"), options=compile_options(np.dtype(np.float32)))
        return module.get_function(name)
