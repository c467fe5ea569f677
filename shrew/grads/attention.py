"""Gradient rule of fused attention (ops/attention.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import op as O
from ..backends.base import fast_path
from ..factory import wrap
from ..grad_mode import is_grad_enabled
from .common import InputGrads
from .norm import softmax_grad

if TYPE_CHECKING:
    from ..tensor import Tensor


def attention_grads(op: O.Attention, g: Tensor) -> InputGrads:
    """((q, dq), (k, dk), (v, dv)): the backend's attention_backward in a plain backward;
    else recorded operations from the weights, recomputed from q and k under
    create_graph=True so that their own dependence counts."""
    q, k, v, scale = op.q, op.k, op.v, op.scale
    need = (q.requires_grad, k.requires_grad, v.requires_grad)
    backend = q._backend
    if not is_grad_enabled():
        got = fast_path(backend, "attention_backward", g._data, q._data, k._data, v._data,
                        op.weights._data, scale, need)
        if got is not NotImplemented:
            return tuple((t, None if d is None else wrap(d, backend))
                         for t, d in zip((q, k, v), got))
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
    return ((q, dq), (k, dk), (v, dv))
