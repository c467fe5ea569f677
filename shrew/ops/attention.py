"""Scaled dot-product attention as one recorded op, where the backend fuses it
(base.FastAttention); nn.functional.attention composes it otherwise."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import op as O
from ..backends.base import fast_path
from ..factory import record, wrap
from ..grad_mode import no_grad

if TYPE_CHECKING:
    from ..tensor import Tensor


def fused_attention(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None,
                    scale: float) -> Tensor | None:
    """softmax(q k^T scale + bias) v in one backend call, recorded as one op; None where the
    backend has no such call or declines it (or the inputs span devices, or the mask needs
    a gradient): the caller then composes it, and reports any error."""
    backend = q._backend
    if k._backend is not backend or v._backend is not backend or (
            bias is not None and (bias._backend is not backend or bias.requires_grad)):
        return None
    got = fast_path(backend, "attention", q._data, k._data, v._data,
                    None if bias is None else bias._data, float(scale))
    if got is NotImplemented:
        return None
    out, weights = got
    op = O.Attention(q, k, v, bias, float(scale), wrap(weights, backend))
    return record(out, backend, op, q, k, v)


def split_heads(qkv: Tensor, heads: int) -> tuple[Tensor, Tensor, Tensor]:
    """q, k and v [N, H, T, E/H] as views of a packed [N, T, 3E] tensor (recorded views
    where grad mode records)."""
    n, t, width = qkv.shape
    e = width // 3
    return tuple(qkv.narrow(-1, i * e, e).reshape(n, t, heads, e // heads).transpose(1, 2)
                 for i in range(3))  # type: ignore[return-value]


def fused_self_attention(qkv: Tensor, heads: int, bias: Tensor | None,
                         scale: float) -> Tensor | None:
    """Attention of the q, k and v packed side by side in qkv [N, T, 3E] (a
    MultiheadAttention's one in-projection), each split into `heads` heads -> [N, H, T,
    E/H], as one recorded op whose gradient is qkv's whole gradient, one array rather
    than three narrows' padded and summed; None where the backend does not fuse it (as
    fused_attention)."""
    backend = qkv._backend
    if (getattr(backend, "attention", None) is None or qkv.ndim != 3
            or qkv.shape[-1] % (3 * heads) or (bias is not None and (
                bias._backend is not backend or bias.requires_grad))):
        return None
    with no_grad():
        q, k, v = split_heads(qkv, heads)
    got = fast_path(backend, "attention", q._data, k._data, v._data,
                    None if bias is None else bias._data, float(scale))
    if got is NotImplemented:
        return None
    out, weights = got
    op = O.Attention(qkv, qkv, qkv, bias, float(scale), wrap(weights, backend), heads)
    return record(out, backend, op, qkv)
