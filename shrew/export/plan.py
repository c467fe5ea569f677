"""The memory plan: every buffer gets a byte offset in one static arena.

Persistent buffers (parameters, module buffers, optimizer state, inputs, constants) come
first, one after another.  The step's temporaries follow: liveness analysis gives each the
span of nodes from its writer to its last reader; an elementwise node whose input dies
there writes in place over it; then the temporaries are placed largest first, each into
the best-fitting gap left by the ones already placed whose spans overlap its own (the
greedy-by-size strategy of TFLite's planner).  Sizes are taken at the traced (largest)
batch, so a smaller batch fits in the same offsets.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .graph import Buffer, Graph, Node, Value
from .symbolic import at

ALIGN = 64
IN_PLACE = ("unary", "binary", "affine", "powf", "clamp", "where", "compare", "cast")


@dataclass
class Plan:
    offsets: dict[int, int]  # id(buffer) -> byte offset
    alias: dict[int, Buffer]  # id(buffer) -> the buffer it was merged into (in place)
    persistent_bytes: int
    arena_bytes: int  # persistent + temporaries
    temp_bytes: int  # the temporaries' region after reuse
    temp_sum_bytes: int  # every temporary in its own memory
    temp_count: int
    in_place: int = 0
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)

    def resolve(self, buf: Buffer) -> Buffer:
        while id(buf) in self.alias:
            buf = self.alias[id(buf)]
        return buf

    def offset(self, v: Value) -> int:
        return self.offsets[id(self.resolve(v.buffer))]


def _round(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def make_plan(graph: Graph, live_out: list[Value], batch: int) -> Plan:
    """Place every buffer of `graph`; `live_out` stay readable after the last node."""
    persistent = [b for b in graph.buffers if b.kind != "temp"]
    temps = [b for b in graph.buffers if b.kind == "temp"]
    offsets: dict[int, int] = {}
    top = 0
    for b in persistent:
        offsets[id(b)] = top
        top += _round(at(b.nbytes, batch))
    plan = Plan(offsets, {}, top, 0, 0, sum(_round(at(b.nbytes, batch)) for b in temps),
                len(temps))
    spans = _spans(graph, live_out, plan)
    plan.spans = spans
    roots = [b for b in temps if id(b) not in plan.alias]
    placed, end = place([(_round(at(b.nbytes, batch)), *spans.get(id(b), (0, 0)))
                         for b in roots])
    for b, offset in zip(roots, placed):
        offsets[id(b)] = top + offset
    plan.temp_bytes = end
    plan.arena_bytes = top + end
    return plan


def place(blocks: list[tuple[int, int, int]]) -> tuple[list[int], int]:
    """Offsets for blocks of (size, first, last) that share no memory while their spans
    [first, last] overlap, and the end of the region they fill: the largest first, each
    into the best-fitting gap left by those already placed whose spans overlap its own
    (the sizes are taken as they are: round them to the alignment wanted).  Also the
    replay arenas' placement (compiler/arena.py)."""
    offsets = [0] * len(blocks)
    placed: list[tuple[int, int, int, int]] = []  # (offset, size, first, last)
    end = 0
    for i in sorted(range(len(blocks)), key=lambda i: -blocks[i][0]):
        size, first, last = blocks[i]
        busy = sorted((o, o + s) for o, s, f, l_ in placed if f <= last and first <= l_)
        best, best_gap, cursor = None, None, 0
        for lo, hi in busy + [(1 << 62, 1 << 62)]:
            gap = lo - cursor
            if gap >= size and (best_gap is None or gap < best_gap):
                best, best_gap = cursor, gap
            cursor = max(cursor, hi)
        assert best is not None
        placed.append((best, size, first, last))
        offsets[i] = best
        end = max(end, best + size)
    return offsets, end


def _spans(graph: Graph, live_out: list[Value], plan: Plan) -> dict[int, tuple[int, int]]:
    """(first, last) node index touching each temporary buffer, after in-place merges."""
    last_read: dict[int, int] = {}
    for i, node in enumerate(graph.nodes):
        for v in node.inputs:
            last_read[id(v.buffer)] = i
    for v in live_out:
        last_read[id(v.buffer)] = len(graph.nodes)
    members: dict[int, list[Buffer]] = {}  # a merged buffer's id -> the buffers it holds
    for i, node in enumerate(graph.nodes):
        if node.kind in IN_PLACE and node.outputs[0].buffer.kind == "temp":
            _try_in_place(node, i, last_read, members, plan)
    spans: dict[int, tuple[int, int]] = {}
    for i, node in enumerate(graph.nodes):
        for v in (*node.inputs, *node.outputs):
            b = plan.resolve(v.buffer)
            if b.kind == "temp":
                first, last = spans.get(id(b), (i, i))
                spans[id(b)] = (min(first, i), max(last, last_read.get(id(v.buffer), i)))
    return spans


def _try_in_place(node: Node, i: int, last_read: dict[int, int],
                  members: dict[int, list[Buffer]], plan: Plan) -> None:
    """Write node's output over an input that dies here, when both fill the same buffer
    with the same layout and no other input reads that buffer."""
    out = node.outputs[0]
    for v in node.inputs:
        b = plan.resolve(v.buffer)
        group = members.setdefault(id(b), [b])
        if (b.kind == "temp" and max(last_read.get(id(m), -1) for m in group) == i
                and v.offset == 0 and v.is_contiguous() and v.shape == out.shape
                and v.dtype.itemsize == out.dtype.itemsize and b.nbytes == out.buffer.nbytes
                and sum(plan.resolve(u.buffer) is b for u in node.inputs) == 1):
            plan.alias[id(out.buffer)] = b
            group.append(out.buffer)
            plan.in_place += 1
            return
