"""The CUDA backend's fuser: a program's fused runs as one CUDA module, built by NVRTC.

Eager CUDA computes elementwise functions with CuPy, one kernel per operation, so a fused
kernel writes each operation as CuPy's kernel does: the IEEE operations in the same order,
built with --fmad=false (no fused multiply-adds: one rounding per operation, as separate
kernels round), and the functions CuPy calls by the same CUDA math function (`tanh(x)` on a
float is CUDA's tanhf in both).  The kernels are written against the shared kernel macros
(kernels/prelude_cuda.h), so the tests run the very same text on OpenCL where no GPU is.
Inputs are read in the run's layout (others are copied into it first); outputs are fresh
arrays of CuPy's pool, laid out as eager's results.
"""
from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from ..backends.cuda.launch import grid_1d
from .capture import Call
from .fuse import DialectFuser, Run
from .fuse_c import array_module_expression

_F32 = np.dtype(np.float32)
_AT_FIRST = np.int64(0)   # each input's element offset

UNARY = {"neg": "-v", "square": "v * v", "exp": "exp(v)", "log": "log(v)", "sqrt": "sqrt(v)",
         "tanh": "tanh(v)", "sin": "sin(v)", "cos": "cos(v)"}
"""The unary functions fused on CUDA, as CuPy computes them (float overloads: expf, ...).
abs, relu, sign and the roundings are left to CuPy: its signed-zero and NaN rules for them
were never compared with a kernel's on a GPU."""


class CUDAFuser(DialectFuser):
    stride_unit = 4  # (CuPy counts strides in bytes)

    def expression(self, call: Call, operands: list[str]) -> str | None:
        if call.name == "unary" and call.args[0] in UNARY:
            return re.sub(r"\bv\b", f"({operands[0]})", UNARY[call.args[0]])
        return array_module_expression(call, operands)

    def build(self) -> dict[str, Any] | None:
        if not self.kernels:
            return {}
        if self.missing:
            return None
        text = self.text()
        try:
            return {name: _launcher(self.backend, self.backend._launch.generated(text, name),
                                    self.runs[name])
                    for name in self.kernels.values()}
        except Exception as exc:  # NVRTC's CompileException, or a driver error
            self.missing.append(f"building the fused CUDA kernels failed: {exc}"[:500])
            return None


def _launcher(backend: Any, function: Any, run: Run) -> Any:
    xp = backend.xp
    n = int(np.prod(run.shape))
    grid, block = grid_1d(max(n, 1))

    row_major = tuple(_F32.itemsize * math.prod(run.shape[d + 1:])
                      for d in range(len(run.shape)))
    contiguous = run.strides == row_major

    def laid_out() -> Any:
        """A new float32 array of the run's shape and strides (a dense order of its dims)."""
        if contiguous:
            return xp.empty(run.shape, _F32)
        return xp.lib.stride_tricks.as_strided(xp.empty(n, _F32), run.shape, run.strides)

    def launch(*arrays: Any) -> tuple:
        with xp.cuda.Device(backend._index):
            args: list[Any] = [np.int64(n)]
            for a, single in zip(arrays, run.scalar):
                if not single and (a.shape, a.strides) != (run.shape, run.strides):
                    copy = laid_out()  # (a run's operands are laid out so when captured)
                    copy[...] = a
                    a = copy
                args += [a, _AT_FIRST]   # (a CuPy array passes its first element's address)
            outs = tuple(laid_out() for _ in run.outputs)
            if n:
                function(grid, block, (*args, *outs))
        return outs
    return launch
