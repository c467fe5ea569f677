"""C for each node of the graph: the kernels it needs and the call that runs it."""
from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import ArgumentError, UnsupportedError
from ..core.shape import window_counts
from . import kernels as K
from .graph import DTYPES, ELEMENTWISE, Node, Value
from .symbolic import Size, at, c_float, c_int

CTYPE_SHORT = {"float": "f32", "int64_t": "i64", "unsigned char": "b8"}


class Emitter:
    """Collects the kernels the step uses (each once) and writes one call per node.
    `pointer(value)` gives the C expression of a value's first element."""

    def __init__(self, pointer: Callable[[Value], str], traced_batch: int) -> None:
        self.pointer = pointer
        self.batch = traced_batch
        self.kernels: dict[str, str] = {}  # name -> source, in first-use order
        self.helpers: dict[str, str] = {}

    def kernel(self, name: str, source: str) -> str:
        self.kernels.setdefault(name, source)
        return name

    def call(self, node: Node) -> str:
        if node.kind in ELEMENTWISE:
            return self._elementwise(node)
        method = getattr(self, "_" + node.kind, None)
        if method is None:
            raise ArgumentError(f"export: no C emitter for the primitive {node.kind!r}")
        return method(node)

    # -- helpers -------------------------------------------------------------------------
    def _longs(self, sizes: tuple[Size, ...]) -> str:
        return "(const long[]){" + ", ".join(c_int(s) for s in sizes) + "}"

    def _ptr(self, v: Value) -> str:
        return self.pointer(v)

    def _out_shape(self, v: Value) -> tuple[Size, ...]:
        return v.shape if v.shape else (1,)

    def _broadcast_strides(self, v: Value, shape: tuple[Size, ...]) -> tuple[Size, ...]:
        if not v.shape:
            return (0,) * max(len(shape), 1)
        lead = len(shape) - len(v.shape)
        out: list[Size] = [0] * lead
        for s, st, t in zip(v.shape, v.strides, shape[lead:]):
            out.append(0 if at(s, self.batch) == 1 and at(t, self.batch) != 1 else st)
        return tuple(out)

    # -- elementwise ---------------------------------------------------------------------
    def _elementwise(self, node: Node) -> str:
        out = node.outputs[0]
        inputs = node.inputs
        if node.kind == "add_":
            inputs = (out, node.inputs[1])
        elif node.kind == "copy_":
            inputs = (node.inputs[1],)
        expr, tag = self._expression(node, out, inputs)
        in_ts = [v.ctype for v in inputs]
        name = "ew_" + tag + "_" + "_".join(CTYPE_SHORT[t] for t in (out.ctype, *in_ts))
        self.kernel(name, K.elementwise(name, out.ctype, in_ts, expr))
        shape = self._out_shape(out)
        args = [str(len(shape)), self._longs(shape), self._ptr(out)]
        for v in inputs:
            args += [self._ptr(v), self._longs(self._broadcast_strides(v, out.shape))]
        return f"{name}({', '.join(args)});"

    def _expression(self, node: Node, out: Value, inputs: tuple[Value, ...]
                    ) -> tuple[str, str]:
        """The C expression of the element (of a0, a1, ...) and a tag naming the kernel;
        float parameters are baked into the expression."""
        p = node.params
        kind = node.kind
        if kind in ("contiguous", "cast", "copy_"):
            return ("a0 != 0" if out.ctype == "unsigned char" and inputs[0].ctype != out.ctype
                    else "a0"), kind
        if kind == "unary":
            if out.ctype != "float" or p["fn"] not in K.UNARY_FLOAT:
                raise ArgumentError(f"export: unary {p['fn']!r} on {out.dtype} has no C emitter")
            for helper, source in K.HELPERS.items():
                if "shrew_" + helper + "(" in K.UNARY_FLOAT[p["fn"]]:
                    self.helpers[helper] = source
            return K.UNARY_FLOAT[p["fn"]], "unary_" + p["fn"]
        if kind == "binary":
            if p["fn"] not in K.BINARY:  # pow, atan2, maximum, ...: no emitter yet
                raise ArgumentError(f"export: binary {p['fn']!r} has no C emitter")
            if out.ctype == "unsigned char":
                return ("a0 || a1" if p["fn"] == "add" else "a0 && a1"), "binary_" + p["fn"]
            return K.BINARY[p["fn"]], "binary_" + p["fn"]
        if kind == "compare":
            return f"a0 {K.COMPARE[p['fn']]} a1", "compare_" + p["fn"]
        if kind == "where":
            return "a0 ? a1 : a2", "where"
        ct = out.ctype
        const: Callable[[Any], str] = (c_float if ct == "float"
                                       else lambda x: f"({ct}){int(x)}")
        expr = self._parametrised(kind, p, const)
        return expr, f"{kind}_{zlib.crc32(expr.encode()):08x}"  # one kernel per parameters

    def _parametrised(self, kind: str, p: dict[str, Any], const: Callable[[Any], str]) -> str:
        if kind == "affine":
            mul, add = p["mul"], p["add"]
            if isinstance(add, (int, float)) and add == 0:
                return f"a0 * {const(mul)}"
            if isinstance(mul, (int, float)) and mul == 1:
                return f"a0 + {const(add)}"
            return f"a0 * {const(mul)} + {const(add)}"
        if kind == "powf":
            return f"powf(a0, {c_float(p['exponent'])})"
        if kind == "clamp":
            expr = "a0"
            if p["lo"] is not None:
                expr = f"({expr}) < {const(p['lo'])} ? {const(p['lo'])} : ({expr})"
            if p["hi"] is not None:
                expr = f"({expr}) > {const(p['hi'])} ? {const(p['hi'])} : ({expr})"
            return expr
        if kind == "add_":
            alpha = p["alpha"]
            return "a0 + a1" if alpha == 1 else f"a0 + a1 * {c_float(alpha)}"
        raise ArgumentError(f"export: no C emitter for the primitive {kind!r}")

    # -- the rest ------------------------------------------------------------------------
    def _full(self, node: Node) -> str:
        out = node.outputs[0]
        self.kernel("shrew_fill", K.FIXED["full"])
        value = node.params["value"]
        literal = c_float(value) if out.ctype == "float" else f"({out.ctype}){int(value)}"
        return (f"{{ const {out.ctype} v = {literal}; shrew_fill({self._ptr(out)}, &v, "
                f"sizeof v, {c_int(out.numel())}); }}")

    def _arange(self, node: Node) -> str:
        out = node.outputs[0]
        return (f"{{ long k; for (k = 0; k < {c_int(out.numel())}; ++k) "
                f"{self._ptr(out)}[k] = ({out.ctype})k; }}")

    def _rand(self, node: Node) -> str:
        out = node.outputs[0]
        if out.ctype != "float":
            raise ArgumentError(f"export: rand of {out.dtype} has no C emitter")
        self.kernel("shrew_rand", K.FIXED["rand"])
        return f"shrew_rand({self._ptr(out)}, {c_int(out.numel())});"

    def _reduce(self, node: Node) -> str:
        x, out = node.inputs[0], node.outputs[0]
        fn = node.params["fn"]
        name = f"reduce_{fn}_{CTYPE_SHORT[x.ctype]}_{CTYPE_SHORT[out.ctype]}"
        self.kernel(name, K.reduce(name, fn, x.ctype, out.ctype))
        shape = x.shape if x.shape else (1,)
        strides = x.strides if x.shape else (0,)
        mask = [1 if d in node.params["dims"] else 0 for d in range(len(shape))]
        return (f"{name}({len(shape)}, {self._longs(shape)}, {self._ptr(x)}, "
                f"{self._longs(strides)}, (const unsigned char[]){{{', '.join(map(str, mask))}}}, "
                f"{self._ptr(out)});")

    def _matmul(self, node: Node) -> str:
        a, b = node.inputs
        out = node.outputs[0]
        self._need_float(node)
        self.kernel("shrew_matmul", K.FIXED["matmul"])
        batch = out.shape[:-2]
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        sa = self._batch_strides(a, batch)
        sb = self._batch_strides(b, batch)
        nb = len(batch)
        if nb == 0:
            batch, sa, sb = (1,), (0,), (0,)
        return (f"shrew_matmul({max(nb, 1)}, {self._longs(batch)}, {self._longs(sa)}, "
                f"{self._longs(sb)}, {c_int(m)}, {c_int(k)}, {c_int(n)}, {self._ptr(a)}, "
                f"{self._ptr(b)}, {self._ptr(out)});")

    def _batch_strides(self, v: Value, batch: tuple[Size, ...]) -> tuple[Size, ...]:
        own = Value(v.buffer, v.dtype, v.shape[:-2], v.strides[:-2], v.offset)
        return self._broadcast_strides(own, batch) if batch else ()

    def _softmax(self, node: Node) -> str:
        x, out = node.inputs[0], node.outputs[0]
        self._need_float(node)
        dim = node.params["dim"]
        self.kernel("shrew_softmax", K.FIXED["softmax"])
        outer, inner = _prod(x.shape[:dim]), _prod(x.shape[dim + 1:])
        return (f"shrew_softmax({c_int(outer)}, {c_int(x.shape[dim])}, {c_int(inner)}, "
                f"{int(bool(node.params['log']))}, {self._ptr(x)}, {self._ptr(out)});")

    def _log_softmax_backward(self, node: Node) -> str:
        y, g = node.inputs
        out = node.outputs[0]
        dim = node.params["dim"]
        self.kernel("shrew_log_softmax_backward", K.FIXED["log_softmax_backward"])
        outer, inner = _prod(y.shape[:dim]), _prod(y.shape[dim + 1:])
        return (f"shrew_log_softmax_backward({c_int(outer)}, {c_int(y.shape[dim])}, "
                f"{c_int(inner)}, {self._ptr(y)}, {self._ptr(g)}, {self._ptr(out)});")

    def _standardize(self, node: Node) -> str:
        x = node.inputs[0]
        y, rstd = node.outputs
        self._need_float(node)
        k = len(node.params["dims"])
        self.kernel("shrew_standardize", K.FIXED["standardize"])
        rows, cols = _prod(x.shape[:len(x.shape) - k]), _prod(x.shape[len(x.shape) - k:])
        return (f"shrew_standardize({c_int(rows)}, {c_int(cols)}, "
                f"{c_float(node.params['eps'])}, {self._ptr(x)}, {self._ptr(y)}, "
                f"{self._ptr(rstd)});")

    @staticmethod
    def _planar(node: Node) -> None:
        """The exported C windows are 2-d: a 3-d convolution or pool is refused."""
        if len(node.params["kernel"]) != 2:
            raise UnsupportedError(f"export: {node.kind} over 3 spatial dims (a 3-d "
                                   f"convolution or pool) is not supported")

    def _geometry(self, image: tuple[Size, ...], node: Node, out_hw: tuple[Size, ...]) -> str:
        self._planar(node)
        p = node.params
        (kh, kw), (sh, sw), (ph, pw) = p["kernel"], p["stride"], p["padding"]
        return ", ".join(c_int(s) for s in (image[2], image[3], kh, kw, sh, sw, ph, pw,
                                             *out_hw))

    def _im2col(self, node: Node) -> str:
        x, cols = node.inputs[0], node.outputs[0]
        self._need_float(node)
        self.kernel("shrew_im2col", K.FIXED["im2col"])
        ho, wo = self._out_hw(x.shape, node)
        return (f"shrew_im2col({c_int(x.shape[0])}, {c_int(x.shape[1])}, "
                f"{self._geometry(x.shape, node, (ho, wo))}, {self._ptr(x)}, "
                f"{self._ptr(cols)});")

    def _col2im(self, node: Node) -> str:
        cols, x = node.inputs[0], node.outputs[0]
        self._need_float(node)
        self.kernel("shrew_col2im", K.FIXED["col2im"])
        ho, wo = self._out_hw(x.shape, node)
        return (f"shrew_col2im({c_int(x.shape[0])}, {c_int(x.shape[1])}, "
                f"{self._geometry(x.shape, node, (ho, wo))}, {self._ptr(cols)}, "
                f"{self._ptr(x)});")

    def _out_hw(self, shape: tuple[Size, ...], node: Node) -> tuple[int, int]:
        self._planar(node)
        p = node.params
        h, w = at(shape[2], self.batch), at(shape[3], self.batch)
        if not isinstance(shape[2], int) or not isinstance(shape[3], int):
            raise ArgumentError("export: image height and width must not follow the batch")
        ho, wo = window_counts((h, w), p["kernel"], p["stride"], p["padding"])
        return ho, wo

    @staticmethod
    def _plain_pool(node: Node, **defaults: object) -> None:
        """The exported C pools take PyTorch's default window arguments only."""
        odd = {k: node.params[k] for k, v in defaults.items() if node.params.get(k, v) != v}
        if odd:
            raise UnsupportedError(f"export: {node.kind} with {odd} is not supported")

    def _max_pool2d(self, node: Node) -> str:
        x = node.inputs[0]
        y, arg = node.outputs
        self._need_float(node)
        self._plain_pool(node, dilation=(1, 1), ceil_mode=False)
        self.kernel("shrew_max_pool2d", K.FIXED["max_pool2d"])
        return (f"shrew_max_pool2d({c_int(x.shape[0] * x.shape[1])}, "
                f"{self._geometry(x.shape, node, y.shape[2:])}, {self._ptr(x)}, "
                f"{self._ptr(y)}, {self._ptr(arg)});")

    def _avg_pool2d(self, node: Node) -> str:
        x, y = node.inputs[0], node.outputs[0]
        self._need_float(node)
        self._plain_pool(node, ceil_mode=False, count_include_pad=True, divisor_override=None)
        self.kernel("shrew_avg_pool2d", K.FIXED["avg_pool2d"])
        return (f"shrew_avg_pool2d({c_int(x.shape[0] * x.shape[1])}, "
                f"{self._geometry(x.shape, node, y.shape[2:])}, {self._ptr(x)}, "
                f"{self._ptr(y)});")

    def _gather(self, node: Node) -> str:
        x, index = node.inputs
        out = node.outputs[0]
        self._need_float(node)
        self.kernel("shrew_gather", K.FIXED["gather"])
        return (f"shrew_gather({len(x.shape)}, {node.params['dim']}, {self._longs(x.shape)}, "
                f"{self._longs(index.shape)}, {self._ptr(x)}, {self._ptr(index)}, "
                f"{self._ptr(out)});")

    def _scatter_add(self, node: Node) -> str:
        index, src = node.inputs
        out = node.outputs[0]
        self._need_float(node)
        self.kernel("shrew_scatter_add", K.FIXED["scatter_add"])
        return (f"shrew_scatter_add({len(out.shape)}, {node.params['dim']}, "
                f"{self._longs(out.shape)}, {self._longs(index.shape)}, "
                f"{self._longs(src.shape)}, {self._ptr(index)}, {self._ptr(src)}, "
                f"{self._ptr(out)});")

    def _pad(self, node: Node) -> str:
        x, out = node.inputs[0], node.outputs[0]
        self._need_float(node)
        self.kernel("shrew_pad", K.FIXED["pad"])
        before = tuple(lo for lo, _ in node.params["pads"])
        return (f"shrew_pad({len(x.shape)}, {self._longs(x.shape)}, {self._longs(before)}, "
                f"{self._longs(out.shape)}, {c_float(node.params['value'])}, {self._ptr(x)}, "
                f"{self._ptr(out)});")

    def _need_float(self, node: Node) -> None:
        for v in (*node.inputs, *node.outputs):
            if v.dtype not in (np.dtype("float32"), np.dtype("int64")):
                raise ArgumentError(f"export: {node.kind} on {v.dtype} has no C emitter")
        if node.outputs[0].ctype != "float":
            raise ArgumentError(f"export: {node.kind} on {node.outputs[0].dtype} has no C emitter")


def _prod(sizes: tuple[Size, ...]) -> Size:
    total: Size = 1
    for s in sizes:
        total = total * s
    return total


assert set(CTYPE_SHORT) == set(DTYPES.values())
