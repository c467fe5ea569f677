"""Graph rewrites that fuse a recorded gradient rule into one kernel.

log_softmax's gradient rule (autograd/engine.py) is `g - exp(y) * g.sum(dim, keepdim=True)`,
recorded as four nodes and three temporaries; cross-entropy's backward always runs it.
The rewrite replaces those four nodes by one `log_softmax_backward` kernel that reads y
and g once per row.
"""
from __future__ import annotations

from collections import Counter

from .graph import Graph, Value


def fuse_log_softmax_backward(graph: Graph, live_out: list[Value]) -> int:
    """Rewrite every exp -> sum -> mul -> sub chain that is log_softmax's backward;
    returns how many were fused."""
    readers = Counter(id(v.buffer) for node in graph.nodes for v in node.inputs)
    for v in live_out:
        readers[id(v.buffer)] += 1
    made_by = {id(v.buffer): node for node in graph.nodes for v in node.outputs}
    log_softmax_out = {id(node.outputs[0].buffer): node for node in graph.nodes
                       if node.kind == "softmax" and node.params["log"]}
    drop: set[int] = set()
    fused = 0
    for node in graph.nodes:
        if not (node.kind == "binary" and node.params["fn"] == "sub"):
            continue
        g, prod = node.inputs
        mul = made_by.get(id(prod.buffer))
        if mul is None or mul.kind != "binary" or mul.params["fn"] != "mul":
            continue
        exp, total = (made_by.get(id(v.buffer)) for v in mul.inputs)
        if exp is None or total is None or exp.kind != "unary" or exp.params["fn"] != "exp" \
                or total.kind != "reduce" or total.params["fn"] != "sum":
            continue
        y = exp.inputs[0]
        forward = log_softmax_out.get(id(y.buffer))
        dim = forward.params["dim"] if forward is not None else None
        if (forward is None or total.inputs[0] is not g or total.params["dims"] != (dim,)
                or not total.params["keepdim"] or not y.is_contiguous()
                or not g.is_contiguous() or g.shape != y.shape
                or any(readers[id(n.outputs[0].buffer)] != 1 for n in (exp, total, mul))):
            continue
        drop.update(id(n) for n in (exp, total, mul))
        node.kind, node.params, node.inputs = "log_softmax_backward", {"dim": dim}, (y, g)
        fused += 1
    graph.nodes = [n for n in graph.nodes if id(n) not in drop]
    used = {id(v.buffer) for n in graph.nodes for v in (*n.inputs, *n.outputs)}
    graph.buffers = [b for b in graph.buffers if b.kind != "temp" or id(b) in used]
    return fused

