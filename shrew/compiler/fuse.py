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

Other backends (CUDA) replay their primitives unfused.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from .capture import Call, Ref

MIN_RUN = 2
"""The shortest run worth a kernel."""

_F32 = np.dtype(np.float32)


@dataclasses.dataclass
class Run:
    """A run to fuse: its calls, the slots it reads (`scalar`: read as one value) and the
    slots it must write, all of `shape`."""

    calls: Sequence[Call]
    inputs: list[int]
    scalar: list[bool]
    outputs: list[int]
    shape: tuple


class Fuser(Protocol):
    """One backend's kernel writer for one program."""

    def expression(self, call: Call, operands: list[str]) -> str | None:
        """The call's value from its operands' (named) values, or None if not fusable."""

    def add(self, run: Run, lines: list[str], names: dict[int, str]) -> str:
        """Add the kernel computing `lines` (`const float tK = ...;`) and writing the
        outputs (`names`: slot -> its value's name); its name."""

    def build(self) -> dict[str, Any] | None:
        """Each added kernel's callable by name (arrays in, a tuple of new arrays out), or
        None (with the reason in missing()) if the kernels cannot be built."""


_missing: dict[str, list[str]] = {"cpu": [], "opencl": []}


def compiler_missing(kind: str = "cpu") -> str | None:
    """Why runs on this kind of device ("cpu", "opencl") are not fused here, or None."""
    return _missing[kind][0] if _missing[kind] else None


def _fuser(backend: Any) -> Fuser | None:
    kind = type(backend).__name__
    if kind == "CPUBackend":
        from .fuse_c import CFuser
        return CFuser(_missing["cpu"])
    if kind == "OpenCLBackend":
        from .fuse_cl import CLFuser
        return CLFuser(backend, _missing["opencl"])
    return None


def _slots(call: Call) -> list[int]:
    return [a.slot for a in call.args if isinstance(a, Ref)]


def fuse(calls: Sequence[Call], values: Sequence[Any], keep: set[int]) -> list[Call]:
    """`calls` with each run of fusable elementwise calls replaced by one fused call."""
    last_read: dict[int, int] = {}
    for i, call in enumerate(calls):
        for slot in _slots(call):
            last_read[slot] = i
    fusers: dict[int, Fuser | None] = {}
    out: list[Call] = []
    i = 0
    while i < len(calls):
        backend = calls[i].backend
        if id(backend) not in fusers:
            fusers[id(backend)] = _fuser(backend)
        fuser = fusers[id(backend)]
        shape = _run_shape(fuser, calls[i], values)
        j = i
        while j < len(calls) and shape is not None and calls[j].backend is backend \
                and _run_shape(fuser, calls[j], values) == shape:
            j += 1
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


def _run_shape(fuser: Fuser | None, call: Call, values: Sequence[Any]) -> tuple | None:
    """The shape of a fusable call's output (all its storage operands float32, of that
    shape or a single value), else None."""
    if fuser is None or len(call.outputs) != 1:
        return None
    if fuser.expression(call, ["x"] * len(_slots(call))) is None:
        return None
    out = values[call.outputs[0]]
    if out.dtype != _F32:
        return None
    for slot in _slots(call):
        v = values[slot]
        if v.dtype != _F32 or (v.shape != out.shape and not _single(v)):
            return None
    return tuple(out.shape)


def _single(v: Any) -> bool:
    """One value, broadcast or not."""
    strides = getattr(v, "strides", ())
    return bool(v.size == 1 or (v.size and not any(strides)))


def _fused(fuser: Fuser, calls: Sequence[Call], values: Sequence[Any], keep: set[int],
           last_read: dict[int, int], end: int, shape: tuple) -> Call | None:
    """One call for the run, its method the name of its kernel until they are built."""
    made = {s for call in calls for s in call.outputs}
    inputs: list[int] = []
    for call in calls:
        for slot in _slots(call):
            if slot not in made and slot not in inputs:
                inputs.append(slot)
    outputs = [s for call in calls for s in call.outputs
               if s in keep or last_read.get(s, -1) >= end]
    if not outputs:
        return None
    scalar = [bool(values[s].shape != shape and _single(values[s])) for s in inputs]
    run = Run(calls, inputs, scalar, outputs, shape)
    names = {s: f"a{k}" for k, s in enumerate(inputs)}
    lines = []
    for n, call in enumerate(calls):
        lines.append(f"const float t{n} = "
                     f"{fuser.expression(call, [names[s] for s in _slots(call)])};")
        names[call.outputs[0]] = f"t{n}"
    name = fuser.add(run, lines, names)
    return Call("fused", name, tuple(Ref(s) for s in inputs), tuple(outputs), True,
                calls[0].backend)
