"""Gradient rule of fused attention (ops/attention.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import op as O
from ...core.grad_mode import is_grad_enabled
from ...ops.attention import split_heads
from ...ops.shape.recorded import cat
from .common import InputGrads, fast_gradient, fast_gradients
from .norm import softmax_grad

if TYPE_CHECKING:
    from ..._tensor import Tensor


def attention_grads(op: O.Attention, g: Tensor) -> InputGrads:
    """((q, dq), (k, dk), (v, dv)): the backend's attention_backward in a plain backward;
    else recorded operations from the weights, recomputed from q and k under
    create_graph=True so that their own dependence counts.  Packed (op.heads): q, k and
    v are views of one tensor, whose gradient is the three joined, given once."""
    if op.heads:
        qkv = op.q
        q, k, v = split_heads(qkv, op.heads)
        # The whole gradient in one call, where it serves.
        whole = fast_gradient(qkv._backend, "attention_backward", g._data, q._data, k._data,
                              v._data, op.weights._data, op.scale, (True, True, True), True)
        if whole is not None:
            return ((qkv, whole), (qkv, None), (qkv, None))
        dq, dk, dv = _grads(op, q, k, v, g, (True, True, True))
        n, t, width = qkv.shape
        joined = cat([d.transpose(1, 2).reshape(n, t, width // 3)
                      for d in (dq, dk, dv)], -1)
        return ((qkv, joined), (qkv, None), (qkv, None))
    q, k, v = op.q, op.k, op.v
    need = (q.requires_grad, k.requires_grad, v.requires_grad)
    return tuple(zip((q, k, v), _grads(op, q, k, v, g, need)))


def _grads(op: O.Attention, q: Tensor, k: Tensor, v: Tensor, g: Tensor,
           need: tuple) -> tuple:
    scale = op.scale
    fast = fast_gradients(q._backend, "attention_backward", g._data, q._data, k._data,
                          v._data, op.weights._data, scale, need)
    if fast is not None:
        return fast
    weights = op.weights
    if is_grad_enabled():
        scores = (q @ k.transpose(-1, -2)) * scale
        weights = (scores if op.bias is None else scores + op.bias).softmax(-1)
    dq = dk = dv = None
    if need[2]:
        dv = weights.transpose(-1, -2) @ g
    if need[0] or need[1]:
        ds = softmax_grad(weights, -1, False, weights, g @ v.transpose(-1, -2))
        dq = (ds @ k) * scale if need[0] else None
        dk = (ds.transpose(-1, -2) @ q) * scale if need[1] else None
    return dq, dk, dv
