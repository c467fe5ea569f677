"""Fusing runs of elementwise primitives into one generated kernel each.

A run of consecutive elementwise calls (unary functions, binary arithmetic, affine, the
tanh and sigmoid gradients) on float32 arrays of one shape, on one backend, becomes one
kernel: it reads each input once, keeps every intermediate in a register, and writes only
the values that something after the run reads.  An input that is a single value broadcast
(a scalar's gradient expanded) is read once.  Each backend's fuser writes every operation
exactly as that backend's own kernel computes it, in the same order and without fused
multiply-adds, so a fused program computes eager's bits:

- cpu (fuse_c.py): exact IEEE arithmetic only (+ - * /, affine, neg, abs, square, relu,
  sign, rounding); exp, tanh and the other transcendental functions stay numpy's calls,
  whose vectorised kernels the C library's neither match nor beat.
- OpenCL (fuse_cl.py): every elementwise function of kernels/elementwise.cl, whose own
  expressions the fused kernels are built from.
- CUDA (fuse_cuda.py): the IEEE operations and the CUDA math functions CuPy's own kernels
  call (exp, log, sqrt, tanh, sin, cos), in CuPy's order, built by NVRTC without fused
  multiply-adds.

Other backends replay their primitives unfused.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from .capture import Call, Ref

MIN_RUN = 2
"""The shortest run worth a kernel."""
MAX_RUN = 128
"""The longest: a longer chain is cut into several kernels (identical ones are built once),
so that a 20,000-operation chain does not become one function a C compiler chews on for
minutes."""

_F32 = np.dtype(np.float32)


@dataclasses.dataclass
class Run:
    """A run to fuse: its calls, the slots it reads (`scalar`: read as one value) and the
    slots it must write, all of `shape` and laid out with `strides` (eager's: numpy lays a
    result out as its inputs, and a later reduction sums in memory order)."""

    calls: Sequence[Call]
    inputs: list[int]
    scalar: list[bool]
    outputs: list[int]
    shape: tuple
    strides: tuple


class Fuser(Protocol):
    """One backend's kernel writer for one program."""

    stride_unit: int  # the stride of consecutive float32 elements (bytes or elements)

    def expression(self, call: Call, operands: list[str]) -> str | None:
        """The call's value from its operands' (named) values, or None if not fusable."""

    def add(self, run: Run, lines: list[str], names: dict[int, str]) -> str:
        """Add the kernel computing `lines` (`const float tK = ...;`) and writing the
        outputs (`names`: slot -> its value's name); its name."""

    def build(self) -> dict[str, Any] | None:
        """Each added kernel's callable by name (arrays in, a tuple of new arrays out), or
        None (with the reason in missing()) if the kernels cannot be built."""


class DialectFuser:
    """The kernel writing shared by the OpenCL and CUDA fusers: kernels in the dialect of
    backends/kernels (prelude_*.h, common.h), one work-item per element, each input read
    once at its element offset (its first element where it is a single value), each kept
    value written; identical kernels made once.  `missing` collects why a build failed
    (fuse._missing's list for the backend's kind)."""

    def __init__(self, backend: Any, missing: list[str]) -> None:
        self.backend = backend
        self.missing = missing
        self.kernels: dict[str, str] = {}  # body -> name
        self.runs: dict[str, Run] = {}

    def add(self, run: Run, lines: list[str], names: dict[int, str]) -> str:
        params = [f"const GLOBAL T* p{k}, const i64 f{k}" for k in range(len(run.inputs))]
        params += [f"GLOBAL T* o{k}" for k in range(len(run.outputs))]
        loads = [f"    const CT a{k} = LOAD(p{k}, f{k}{'' if single else ' + i'});"
                 for k, single in enumerate(run.scalar)]
        stores = [f"    o{k}[i] = TO_T({names[s]});" for k, s in enumerate(run.outputs)]
        body = "\n".join([f"(const i64 n, {', '.join(params)})", "{", "    const i64 i = GID0;",
                          "    if (i >= n) return;", *loads,
                          *(f"    {line}" for line in lines), *stores, "}"])
        name = self.kernels.setdefault(body, f"fused{len(self.kernels)}")
        self.runs[name] = run
        return name

    def text(self) -> str:
        """The added kernels, one program's worth (after a prelude and common.h)."""
        return "".join(f"\nKERNEL void {name}{body}\n" for body, name in self.kernels.items())


_missing: dict[str, list[str]] = {"cpu": [], "opencl": [], "cuda": []}


def compiler_missing(kind: str = "cpu") -> str | None:
    """Why runs on this kind of device ("cpu", "opencl", "cuda") are not fused here, or
    None."""
    return _missing[kind][0] if _missing[kind] else None


def _fuser(backend: Any) -> Fuser | None:
    kind = type(backend).__name__
    if kind == "CPUBackend":
        from .fuse_c import CFuser
        return CFuser(_missing["cpu"])
    if kind == "OpenCLBackend":
        from .fuse_cl import CLFuser
        return CLFuser(backend, _missing["opencl"])
    if kind == "CUDABackend":
        from .fuse_cuda import CUDAFuser
        return CUDAFuser(backend, _missing["cuda"])
    return None


def fuse(calls: Sequence[Call], values: Sequence[Any], keep: set[int]) -> list[Call]:
    """`calls` with each run of fusable elementwise calls replaced by one fused call."""
    last_read: dict[int, int] = {}
    for i, call in enumerate(calls):
        for slot in call.reads():
            last_read[slot] = i
    fusers: dict[int, Fuser | None] = {}
    for call in calls:
        if id(call.backend) not in fusers:
            fusers[id(call.backend)] = _fuser(call.backend)
    shapes = [_run_layout(fusers[id(c.backend)], c, values) for c in calls]
    out: list[Call] = []
    i = 0
    while i < len(calls):
        backend, shape = calls[i].backend, shapes[i]
        j = i
        while j < len(calls) and j - i < MAX_RUN and shape is not None \
                and calls[j].backend is backend and shapes[j] == shape:
            j += 1
        fuser = fusers[id(backend)]
        if j - i >= MIN_RUN and fuser is not None and shape is not None:
            fused = _fused(fuser, calls[i:j], values, keep, last_read, j, shape)
            if fused is not None:
                out.append(fused)
                i = j
                continue
        out.append(calls[i])
        i += 1
    built: dict[int, dict[str, Any] | None] = {
        key: fuser.build() for key, fuser in fusers.items() if fuser is not None}
    if any(kernels is None for kernels in built.values()):
        return list(calls)  # (a build failed: replay unfused)
    return [dataclasses.replace(c, method=built[id(c.backend)][c.method])  # type: ignore[index]
            if c.name == "fused" else c for c in out]


def _run_layout(fuser: Fuser | None, call: Call, values: Sequence[Any]) -> tuple | None:
    """(shape, strides) of a fusable call's output, its storage operands all float32 and
    either laid out as it is or a single value; else None."""
    if fuser is None or len(call.outputs) != 1:
        return None
    if fuser.expression(call, ["x"] * len(call.reads())) is None:
        return None
    out = values[call.outputs[0]]
    if out.dtype != _F32 or not _dense(out, fuser.stride_unit):
        return None
    for slot in call.reads():
        v = values[slot]
        if v.dtype != _F32 or not (_single(v) or (v.shape, v.strides) == (out.shape,
                                                                           out.strides)):
            return None
    return tuple(out.shape), tuple(out.strides)


def _single(v: Any) -> bool:
    """One value, broadcast or not."""
    return bool(v.size == 1 or (v.size and not any(v.strides)))


def _dense(v: Any, unit: int) -> bool:
    """Every element once, in some order of the dims, without gaps (a fresh result);
    `unit`: the stride of consecutive elements."""
    dims = sorted((abs(st), n) for st, n in zip(v.strides, v.shape) if n != 1)
    step = unit
    for stride, n in dims:
        if stride != step:
            return False
        step *= n
    return all(st >= 0 for st in v.strides)


def _fused(fuser: Fuser, calls: Sequence[Call], values: Sequence[Any], keep: set[int],
           last_read: dict[int, int], end: int, layout: tuple) -> Call | None:
    """One call for the run, its method the name of its kernel until they are built."""
    made = {s for call in calls for s in call.outputs}
    inputs: list[int] = []
    for call in calls:
        for slot in call.reads():
            if slot not in made and slot not in inputs:
                inputs.append(slot)
    outputs = [s for call in calls for s in call.outputs
               if s in keep or last_read.get(s, -1) >= end]
    if not outputs:
        return None
    shape, strides = layout
    scalar = [_single(values[s]) and (values[s].shape != shape or not any(values[s].strides))
              for s in inputs]
    run = Run(calls, inputs, scalar, outputs, shape, strides)
    names = {s: f"a{k}" for k, s in enumerate(inputs)}
    lines = []
    for n, call in enumerate(calls):
        lines.append(f"const float t{n} = "
                     f"{fuser.expression(call, [names[s] for s in call.reads()])};")
        names[call.outputs[0]] = f"t{n}"
    name = fuser.add(run, lines, names)
    return Call("fused", name, tuple(Ref(s) for s in inputs), tuple(outputs), True,
                calls[0].backend)
