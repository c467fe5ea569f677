"""Scaled dot-product attention as one recorded op, where the backend fuses it
(base.FastAttention); nn.functional.attention composes it otherwise."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import op as O
from ..backends.base import fast_path
from ..factory import record, wrap

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
