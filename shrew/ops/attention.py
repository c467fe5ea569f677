"""Scaled dot-product attention as one recorded op, where the backend fuses it
(base.FastAttention); nn.functional.attention composes it otherwise."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import op as O
from ..backends.base import fast_path
from ..core.fields import record, wrap
from ..core.grad_mode import no_grad

if TYPE_CHECKING:
    from .._tensor import Tensor


def fused_attention(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None,
                    scale: float) -> Tensor | None:
    """softmax(q k^T scale + bias) v in one backend call, recorded as one op; None where the
    backend has no such call or declines it (or the inputs span devices, or the mask needs
    a gradient): the caller then composes it, and reports any error."""
    backend = q._backend
    if k._backend is not backend or v._backend is not backend or not _plain_mask(bias, q):
        return None
    return _recorded(q, k, v, bias, scale, (q, k, v), 0)


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
    if (getattr(qkv._backend, "attention", None) is None or qkv.ndim != 3
            or qkv.shape[-1] % (3 * heads) or not _plain_mask(bias, qkv)):
        return None
    with no_grad():
        q, k, v = split_heads(qkv, heads)
    return _recorded(q, k, v, bias, scale, (qkv, qkv, qkv), heads)


def _plain_mask(bias: Tensor | None, x: Tensor) -> bool:
    """Whether the mask, if any, can ride in the fused call: on x's device, no gradient."""
    return bias is None or (bias._backend is x._backend and not bias.requires_grad)


def _recorded(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None, scale: float,
              inputs: tuple, heads: int) -> Tensor | None:
    """The backend's attention of q, k and v, recorded as one Attention op over `inputs`
    (q, k and v, or the packed tensor three times); None where it declines."""
    backend = q._backend
    got = fast_path(backend, "attention", q._data, k._data, v._data,
                    None if bias is None else bias._data, float(scale))
    if got is NotImplemented:
        return None
    out, weights = got
    first, second, third = inputs
    op = O.Attention(first, second, third, bias, float(scale), wrap(weights, backend), heads)
    return record(out, backend, op, *inputs)
