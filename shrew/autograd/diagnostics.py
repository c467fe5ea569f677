"""Diagnostics: anomaly detection in backward, and views of a recorded graph.

    with shrew.detect_anomaly():
        loss = model(x).sum()
        loss.backward()   # ShrewError naming the first op whose gradient holds NaN or inf

    print(shrew.graph_summary(loss))   # a table of the graph: ops, shapes, bytes held
    text = shrew.to_dot(loss)          # the same graph in Graphviz DOT

While a detect_anomaly() block is open, factory.wrap calls ``record_site`` for every
recorded op.
"""
from __future__ import annotations

import dataclasses
import math
import os
import sys
import threading
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from ..core import op as O
from ..core.errors import type_name
from ..core.errors import ShrewTypeError, StateError
from ..core.fields import AnyTensor, set_site_recorder
from ..core.grad_mode import no_grad
from ..core.shape import fmt, numel

if TYPE_CHECKING:
    from types import FrameType

    from .._tensor import Tensor

# -- anomaly mode ------------------------------------------------------------------------
# shrew's own frames are skipped when naming where a tensor was made (this file is in
# shrew/autograd/: the package is two levels up)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_local = threading.local()  # .on: anomaly mode in this thread
_lock = threading.Lock()
# tensor id -> (file, line, function) of the user code that created it
_sites: dict[int, tuple[str, int, str]] = {}

active = 0
"""How many detect_anomaly() blocks are open in any thread: while it is 0, creating a tensor
costs one test (factory's site recorder) and nothing else."""


def anomaly_enabled() -> bool:
    """Whether this thread is inside detect_anomaly()."""
    return active > 0 and getattr(_local, "on", False)


class detect_anomaly:
    """Context manager: inside it, operations remember the file and line that created them,
    and backward checks every gradient it computes.  The first operation whose gradient
    holds NaN or inf raises a ShrewError naming the operation and that place.  Per thread,
    like no_grad; it slows recording and backward down, so use it to debug."""

    _prev: bool

    def __enter__(self) -> detect_anomaly:
        global active
        self._prev = getattr(_local, "on", False)
        _local.on = True
        with _lock:
            active += 1
            set_site_recorder(record_site)
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        global active
        _local.on = self._prev
        with _lock:
            active -= 1
            if not active:
                set_site_recorder(None)
        return False


def record_site(t: Tensor) -> None:
    """Remember where user code created `t` (called for recorded ops while `active`)."""
    if not getattr(_local, "on", False):
        return
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return
    _sites[t.id] = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
    weakref.finalize(t, _sites.pop, t.id, None)


def creation_site(t: Tensor) -> str | None:
    """"file:line in function" where `t` was created in anomaly mode, else None."""
    site = _sites.get(t.id)
    return None if site is None else f"{site[0]}:{site[1]} in {site[2]}"


def check_gradients(node: Tensor, op: O.Op,
                    pairs: Iterable[tuple[Tensor, Tensor | None]]) -> None:
    """Raise if a gradient that `op`'s rule computed (input, gradient) holds NaN or inf."""
    with no_grad():
        for i, (x, g) in enumerate(pairs):
            # |g| < inf holds for every finite value and fails for NaN and +-inf.
            if g is not None and (g.abs() < math.inf).sum().item() != numel(g.shape):
                where = creation_site(node)
                made = (f"it was created at {where}" if where else
                        "it was created outside detect_anomaly(), so its place is unknown")
                raise StateError(
                    f"backward (detect_anomaly): {op_name(op)} produced NaN or inf in the "
                    f"gradient of its input {i} (shape {fmt(x.shape)}, {x.dtype.name}); {made}")


# -- describing a graph --------------------------------------------------------------------
NAMED_BY_FN = (O.Unary, O.Binary, O.Reduce)
"""The variants whose name includes their fn ("Unary.exp")."""


def op_name(op: O.Op) -> str:
    """"Binary.mul", "Unary.exp", "Reduce.sum", "Matmul", ...; a released op keeps its
    variant's name."""
    if type(op) is O.Released:
        return op.variant
    if isinstance(op, NAMED_BY_FN):
        return f"{type(op).__name__}.{op.fn}"
    return type(op).__name__


def _saved(op: O.Op | None) -> list[Tensor]:
    """Every tensor `op` keeps alive: its inputs and what its rule needs (indices, masks);
    none for a leaf (None) or a released op."""
    if op is None:
        return []
    out: dict[int, Tensor] = {}
    for field in dataclasses.fields(op):
        value = getattr(op, field.name)
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, AnyTensor):
                out[v.id] = v
    return list(out.values())


def _graph(root: Tensor) -> list[Tensor]:
    """Every tensor that `root`'s graph holds, newest first (an iterative walk)."""
    if not isinstance(root, AnyTensor):
        raise ShrewTypeError(f"graph: expected a shrew.Tensor, got {type_name(root)}")
    seen = {root.id: root}
    stack = [root]
    while stack:
        for x in _saved(stack.pop()._op):
            if x.id not in seen:
                seen[x.id] = x
                stack.append(x)
    return [seen[i] for i in sorted(seen, reverse=True)]


def _nbytes(t: Tensor) -> int:
    return numel(t.shape) * t.dtype.itemsize


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _kind(t: Tensor) -> str:
    if t._op is not None:
        return op_name(t._op)
    return "leaf" if t.requires_grad else "constant"


def graph_summary(root: Tensor) -> str:
    """A table of the graph that produced `root`: one row per tensor in it (newest first)
    with its op, shape, dtype, device, the bytes of its data and the ids of the tensors its
    op saved; then the totals, with the bytes that the graph's ops hold for backward.
    Bytes are logical (elements x item size): a view may share memory with its base."""
    nodes = _graph(root)
    rows = [("id", "op", "shape", "dtype", "device", "bytes", "saved")]
    for t in nodes:
        rows.append((str(t.id), _kind(t), fmt(t.shape), t.dtype.name, t.device,
                     str(_nbytes(t)), ", ".join(str(x.id) for x in _saved(t._op))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.rjust(w) if i in (0, 5) else c.ljust(w)
                       for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
    ops = sum(t._op is not None for t in nodes)
    leaves = sum(t._op is None and t.requires_grad for t in nodes)
    saved = sum(_nbytes(t) for t in nodes if t is not root)
    devices = ", ".join(sorted({t.device for t in nodes}))
    lines.append(f"{len(nodes)} tensors (ops: {ops}, leaves requiring grad: {leaves}, "
                 f"constants: {len(nodes) - ops - leaves}); {_size(saved)} saved for backward "
                 f"on {devices}")
    return "\n".join(lines)


def to_dot(root: Tensor) -> str:
    """The graph that produced `root` as Graphviz DOT text (render it with `dot -Tsvg`):
    one node per tensor, an edge from each saved tensor to the op that saved it."""
    nodes = _graph(root)
    lines = ["digraph shrew {", '  node [shape=box, fontname="monospace"];']
    for t in reversed(nodes):
        label = f"{_kind(t)} #{t.id}\\n{fmt(t.shape)} {t.dtype.name} {t.device}"
        style = ""
        if t._op is None:
            style = ", style=filled, fillcolor=lightblue" if t.requires_grad else ", shape=ellipse"
        lines.append(f'  t{t.id} [label="{label}"{style}];')
    for t in reversed(nodes):
        lines.extend(f"  t{x.id} -> t{t.id};" for x in _saved(t._op))
    lines.append("}")
    return "\n".join(lines)
