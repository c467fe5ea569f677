"""The OpenCL backend's fuser: a program's fused runs as one OpenCL program.

Each operation is written with the very expression kernels/elementwise.cl computes it by
(its UNARY and BINARY lines, read from the source), after the same prelude and defines, so
that a fused kernel rounds as the eager kernels do (FP_CONTRACT is off in both).  Inputs
must be contiguous (others are copied first); outputs are fresh buffers from the backend's
pool.
"""
from __future__ import annotations

import re
from functools import cache
from typing import Any

import numpy as np
import pyopencl as cl

from ..backends.kernels import dtype_defines, source
from ..backends.opencl.programs import quiet_compiler
from .capture import Call
from .fuse import DialectFuser, Run

_F32 = np.dtype(np.float32)


@cache
def _expressions() -> dict[tuple[str, str], str]:
    """(UNARY or BINARY, name) -> its float expression in elementwise.cl (in v, or x and
    y), the floating-point section's where a name has two."""
    text = re.sub(r"/\*.*?\*/", "", source("elementwise"), flags=re.S)
    found: dict[tuple[str, str], str] = {}
    for match in re.finditer(r"^(UNARY|BINARY)\((\w+),", text, flags=re.M):
        depth, start = 1, match.end()
        i = start
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        found.setdefault((match.group(1), match.group(2)), " ".join(text[start:i - 1].split()))
    return found


class CLFuser(DialectFuser):
    stride_unit = 1  # (CLStorage counts strides in elements)

    def expression(self, call: Call, operands: list[str]) -> str | None:
        table = _expressions()
        if call.name == "unary" and ("UNARY", call.args[0]) in table:
            return re.sub(r"\bv\b", f"({operands[0]})", table["UNARY", call.args[0]])
        if call.name == "binary" and ("BINARY", call.args[0]) in table:
            named = {"x": f"({operands[0]})", "y": f"({operands[1]})"}  # in one pass
            return re.sub(r"\b[xy]\b", lambda m: named[m.group(0)],
                          table["BINARY", call.args[0]])
        if call.name == "affine":  # affine's kernel: v * mul + add, mul and add as CT
            mul, add = (float(self.backend._scalar(v, _F32)) for v in call.args[1:])
            return f"({operands[0]}) * {mul!r}f + {add!r}f"
        return None

    def build(self) -> dict[str, Any] | None:
        if not self.kernels:
            return {}
        if self.missing:
            return None
        defines = {**self.backend._programs._device_defines, **dtype_defines(_F32)}
        text = source("elementwise") + self.text()
        try:
            with quiet_compiler():
                program = cl.Program(self.backend.context, text).build(
                    options=[f"-D{k}={v}" for k, v in defines.items()])
        except cl.Error as exc:
            self.missing.append(f"building the fused OpenCL kernels failed: {exc}"[:500])
            return None
        return {name: _launcher(self.backend, cl.Kernel(program, name), self.runs[name])
                for name in self.kernels.values()}


def _launcher(backend: Any, kernel: Any, run: Run) -> Any:
    n = int(np.prod(run.shape))
    wg = backend.wg
    size = (-(-max(n, 1) // wg) * wg,)
    kernel.set_scalar_arg_dtypes([np.int64] + [None, np.int64] * len(run.inputs)
                                 + [None] * len(run.outputs))

    def launch(*arrays: Any) -> tuple:
        args: list[Any] = []
        for a, single in zip(arrays, run.scalar):
            if not single and not a.is_contiguous:  # (a run's operands are contiguous
                a = backend.contiguous(a)             # when captured)
            args += [a.buffer, a.offset]
        outs = [backend._empty(run.shape, _F32) for _ in run.outputs]
        if n:
            with backend._lock:
                kernel(backend.queue, size, (wg,), n, *args, *(o.buffer for o in outs))
        return tuple(outs)
    return launch
