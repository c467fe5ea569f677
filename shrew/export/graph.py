"""The static graph: buffers, strided values viewing them, and kernel nodes in run order.

Built from a Recording (trace.py) whose sizes were generalised over the batch
(symbolic.py).  Layout primitives (reshape of contiguous data, transpose, narrow, expand)
make no node: they are views, a new (offset, shape, strides) on the same buffer, as in
numpy.  Every other primitive is a node writing a fresh C-contiguous buffer, except the
in-place updates (copy_, add_), which write into their destination's buffer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import ArgumentError, UnsupportedError
from .symbolic import Size, at
from .trace import Call, Recording, Ref

DTYPES = {np.dtype("float32"): "float", np.dtype("int64"): "int64_t",
          np.dtype("bool"): "unsigned char"}
"""The element types a step may use, as C types."""

VIEWS = ("reshape", "transpose", "narrow", "expand")
ELEMENTWISE = ("contiguous", "cast", "unary", "binary", "compare", "where", "affine", "powf",
               "clamp", "copy_", "add_")
CONTIGUOUS_INPUTS = ("softmax", "standardize", "matmul", "im2col", "col2im", "max_pool2d",
                     "avg_pool2d", "gather", "scatter_add", "pad")
"""Kernels that read their inputs as C-contiguous arrays (others take any strides)."""
MAKERS = ("full", "rand", "arange")
SUPPORTED = VIEWS + ELEMENTWISE + CONTIGUOUS_INPUTS + MAKERS + ("reduce", "from_numpy")


@dataclass(eq=False)
class Buffer:
    """Memory for values: kind is param, buffer (module buffers: running statistics),
    state (optimizer state), input, const (data known at export) or temp (planned)."""

    nbytes: Size
    kind: str
    name: str = ""
    data: np.ndarray | None = None


@dataclass(eq=False)
class Value:
    buffer: Buffer
    dtype: np.dtype
    shape: tuple[Size, ...]
    strides: tuple[Size, ...]  # in elements
    offset: Size = 0

    @property
    def ctype(self) -> str:
        return DTYPES[self.dtype]

    def is_contiguous(self) -> bool:
        return self.strides == contiguous_strides(self.shape)

    def numel(self) -> Size:
        return numel(self.shape)


@dataclass(eq=False)
class Node:
    kind: str  # the primitive's name, or "optimizer"
    params: dict[str, Any]
    inputs: tuple[Value, ...]
    outputs: tuple[Value, ...]


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    buffers: list[Buffer] = field(default_factory=list)

    def temp(self, dtype: np.dtype, shape: tuple[Size, ...]) -> Value:
        buf = Buffer(numel(shape) * dtype.itemsize, "temp")
        self.buffers.append(buf)
        return Value(buf, dtype, shape, contiguous_strides(shape))

    def contiguous(self, v: Value) -> Value:
        if v.is_contiguous():
            return v
        out = self.temp(v.dtype, v.shape)
        self.nodes.append(Node("contiguous", {}, (v,), (out,)))
        return out


def numel(shape: tuple[Size, ...]) -> Size:
    total: Size = 1
    for s in shape:
        total = total * s
    return total


def contiguous_strides(shape: tuple[Size, ...]) -> tuple[Size, ...]:
    strides: list[Size] = []
    step: Size = 1
    for s in reversed(shape):
        strides.append(step)
        step = step * s
    return tuple(reversed(strides))


def build(rec: Recording, calls: list[Call], shapes: list[tuple[Size, ...]],
          leaves: dict[str, Value], traced_batch: int) -> tuple[Graph, dict[int, Value]]:
    """The graph of a recording.  `calls` are its calls with generalised arguments,
    `shapes[v]` the generalised shape of value v, `leaves` the values of the named leaf
    storages.  Returns the graph and the value of every recorded value index."""
    g = Graph()
    g.buffers.extend({id(v.buffer): v.buffer for v in leaves.values()}.values())
    values: dict[int, Value] = {}
    for index, (kind, payload) in enumerate(rec.origin):
        if kind == "leaf":
            values[index] = leaves[payload]
        elif kind == "const":
            values[index] = _const(g, payload)

    def arg(ref: Ref) -> Value:
        return values[ref.value]

    for call in calls:
        name, a = call.name, call.args
        if name not in SUPPORTED:
            raise ArgumentError(f"export: the step uses the primitive {name!r}, which has no C "
                                f"emitter (supported: {', '.join(sorted(SUPPORTED))})")
        out_shapes = [shapes[o] for o in call.outputs]
        for o in call.outputs:
            dtype = rec.arrays[o].dtype
            if dtype not in DTYPES:
                raise ArgumentError(f"export: {name} makes a {dtype} tensor; the C step supports "
                                    f"float32, int64 and bool only")
        if name in VIEWS:
            made = [_view(g, name, arg(a["x"]), a, out_shapes[0], traced_batch)]
        elif name == "from_numpy":
            made = [_const(g, np.asarray(a["a"]))]
        elif name in ("copy_", "add_"):
            dst = arg(a["dst"])
            if dst.buffer.kind not in ("param", "buffer", "state") or not dst.is_contiguous():
                raise UnsupportedError(f"export: {name} into a tensor that is not a parameter or "
                                       f"buffer is not supported")
            params = {"alpha": a["alpha"]} if name == "add_" else {}
            g.nodes.append(Node(name, params, (dst, arg(a["src"])), (dst,)))
            made = [dst]
        else:
            inputs: list[Value] = []
            params = {}
            for key, value in a.items():
                if isinstance(value, Ref):
                    inputs.append(arg(value))
                elif key == "xs":
                    inputs.extend(arg(r) for r in value)
                else:
                    params[key] = value
            if name in CONTIGUOUS_INPUTS:
                inputs = [g.contiguous(v) for v in inputs]
            dtypes = [rec.arrays[o].dtype for o in call.outputs]
            made = [g.temp(d, s) for d, s in zip(dtypes, out_shapes)]
            g.nodes.append(Node(name, params, tuple(inputs), tuple(made)))
        for o, v in zip(call.outputs, made):
            values[o] = v
    return g, values


def _const(g: Graph, data: np.ndarray) -> Value:
    data = np.ascontiguousarray(data)
    if data.dtype not in DTYPES:
        raise ArgumentError(f"export: the step reads a constant {data.dtype} tensor of shape "
                            f"{data.shape}; the C step supports float32, int64 and bool only")
    buf = Buffer(data.nbytes, "const", data=data)
    g.buffers.append(buf)
    return Value(buf, data.dtype, tuple(data.shape), contiguous_strides(tuple(data.shape)))


def _view(g: Graph, name: str, x: Value, a: dict[str, Any], shape: tuple[Size, ...],
          traced_batch: int) -> Value:
    if name == "reshape":
        x = g.contiguous(x)
        return Value(x.buffer, x.dtype, shape, contiguous_strides(shape), x.offset)
    strides = list(x.strides)
    if name == "transpose":
        d0, d1 = a["d0"], a["d1"]
        strides[d0], strides[d1] = strides[d1], strides[d0]
        return Value(x.buffer, x.dtype, shape, tuple(strides), x.offset)
    if name == "narrow":
        offset = x.offset + a["start"] * strides[a["dim"]]
        return Value(x.buffer, x.dtype, shape, tuple(strides), offset)
    # expand: dims of size 1 stretched read the same element (stride 0)
    stretched = tuple(0 if at(s, traced_batch) == 1 and at(t, traced_batch) != 1 else st
                      for s, t, st in zip(x.shape, shape, strides))
    return Value(x.buffer, x.dtype, shape, stretched, x.offset)
