"""Scaled dot-product attention, composed of matmul, softmax and dropout."""
from __future__ import annotations

import math

from ...core.autocast import autocast_op
from ...ops.attention import fused_attention
from ...ops.creation import arange
from ...ops.elementwise.recorded import where
from ...core.dtype import DType, bool_
from ...core.errors import ArgumentError, ShapeError
from ...core.shape import broadcast_shapes, fmt
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor
from .dropout import dropout


def _repeat_heads(t: Tensor, times: int) -> Tensor:
    """[..., H, T, E] -> [..., H * times, T, E], each head repeated `times` times in a row
    (grouped-query attention shares one key/value head among `times` query heads)."""
    if times == 1:
        return t
    *lead, heads, length, width = t.shape
    return t.unsqueeze(-3).expand(*lead, heads, times, length, width) \
        .reshape(*lead, heads * times, length, width)


def attention_bias(mask: Tensor, dtype: DType, op: str, name: str = "attn_mask",
                   true_attends: bool = True) -> Tensor:
    """An additive mask: a bool mask becomes 0 where attending is allowed and -inf where
    not (True allows it for scaled_dot_product_attention, forbids it for
    MultiheadAttention: true_attends=False); a float mask is added as it is.  Adding
    (rather than a where on the scores) passes the gradient of the scores straight through."""
    if mask.dtype is bool_:
        allowed, blocked = (0.0, float("-inf")) if true_attends else (float("-inf"), 0.0)
        return where(mask, allowed, blocked).to_dtype(dtype)
    if not mask.dtype.is_floating_point:
        raise ArgumentError(f"{op}: {name} must be bool or float, got {mask.dtype}")
    return mask.to_dtype(dtype)


def attend(query: Tensor, key: Tensor, value: Tensor, bias: Tensor | None, dropout_p: float,
           scale: float, need_weights: bool = True) -> tuple[Tensor, Tensor | None]:
    """(softmax(q k^T * scale + bias) v, the attention weights after dropout, or None
    where need_weights is False).  Without dropout and weights to return, a backend that
    fuses attention (base.FastAttention) computes it in one call."""
    if not need_weights and dropout_p == 0:
        out = fused_attention(query, key, value, bias, scale)
        if out is not None:
            return out, None
    # Each head's matrix contiguous for the batched products (heads split from a
    # projection's output are strided views).
    query, key, value = (t if t.is_contiguous() else t.contiguous()
                         for t in (query, key, value))
    # Scaling q (L*E values) is cheaper than scaling the scores (L*S values).
    scores = (query * scale) @ key.transpose(-1, -2)
    if bias is not None:
        scores = scores + bias
    weights = dropout(scores.softmax(-1), dropout_p)
    return weights @ value, weights if need_weights else None


def causal_mask(tq: int, tk: int, device: str) -> Tensor:
    """[tq, tk] bool, True where key j <= query i (the lower triangle, top-left aligned)."""
    rows = arange(tq, device=device).reshape(tq, 1)
    return rows >= arange(tk, device=device).reshape(1, tk)


@autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v over [..., L, E] queries and [..., S, E] keys.

    attn_mask broadcasts to [..., L, S]: bool (True = may attend) or float (added to the
    scores).  is_causal lets query i see keys j <= i only.  scale defaults to 1/sqrt(E).
    dropout_p drops attention weights.  enable_gqa lets key and value have fewer heads
    (dim -3) than the query, a divisor of its head count."""
    op = "scaled_dot_product_attention"
    for name, t in (("query", query), ("key", key), ("value", value)):
        if _tensor(op, name, t).ndim < 2:
            raise ShapeError(f"{op}: {name} must be [..., T, E], got {fmt(t.shape)}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ShapeError(f"{op}: query {fmt(query.shape)}, key {fmt(key.shape)} and value "
                         f"{fmt(value.shape)} do not fit")
    if is_causal and attn_mask is not None:
        raise ArgumentError(f"{op}: give attn_mask or is_causal=True, not both")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        if key.shape[-3] != value.shape[-3] or query.shape[-3] % key.shape[-3]:
            raise ShapeError(f"{op}: with enable_gqa the query's heads ({fmt(query.shape)}) "
                             f"must be a multiple of the key's and value's "
                             f"({fmt(key.shape)}, {fmt(value.shape)})")
        times = query.shape[-3] // key.shape[-3]
        key, value = _repeat_heads(key, times), _repeat_heads(value, times)
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores_shape = broadcast_shapes(op, query.shape[:-2], key.shape[:-2]) + \
        (query.shape[-2], key.shape[-2])
    if is_causal:
        attn_mask = causal_mask(scores_shape[-2], scores_shape[-1], query.device)
    bias = None
    if attn_mask is not None:
        _tensor(op, "attn_mask", attn_mask)
        if broadcast_shapes(op, attn_mask.shape, scores_shape) != scores_shape:
            raise ShapeError(f"{op}: attn_mask {fmt(attn_mask.shape)} does not broadcast to "
                             f"the scores {fmt(scores_shape)}")
        bias = attention_bias(attn_mask, query.dtype, op)
    return attend(query, key, value, bias, dropout_p, factor, need_weights=False)[0]


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
        out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """MultiheadAttention's forward with its parameters given as tensors (query, key and
    value [L, N, E] or unbatched [L, E]), as torch.nn.functional's."""
    from ..modules.activation import MultiheadAttention  # modules import functional
    if static_k is not None or static_v is not None:
        raise ArgumentError("multi_head_attention_forward: static_k and static_v are not "
                            "supported; pass the keys and values as key and value")
    e = query.shape[-1]
    if e != embed_dim_to_check:
        raise ShapeError(f"multi_head_attention_forward: was expecting embedding dimension of "
                         f"{embed_dim_to_check}, but got {e}")
    if num_heads < 1 or e % num_heads:
        raise ShapeError(f"multi_head_attention_forward: embed_dim {e} not divisible by "
                         f"num_heads {num_heads}")
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise ArgumentError("multi_head_attention_forward: use_separate_proj_weight needs "
                                "q_proj_weight, k_proj_weight and v_proj_weight")
        kdim, vdim = k_proj_weight.shape[1], v_proj_weight.shape[1]
    elif in_proj_weight is None:
        raise ArgumentError("multi_head_attention_forward: in_proj_weight is None (give it, or "
                            "use_separate_proj_weight=True with the three weights)")
    else:
        kdim = vdim = e
    from ..modules.module import Module
    from ..modules.linear import Linear
    # A MultiheadAttention over the given tensors: Module's bookkeeping, no new parameters.
    mha = MultiheadAttention.__new__(MultiheadAttention)
    Module.__init__(mha)
    mha.embed_dim, mha.num_heads, mha.dropout = e, num_heads, dropout_p
    mha.kdim, mha.vdim, mha.batch_first, mha.add_zero_attn = kdim, vdim, False, add_zero_attn
    mha.head_dim = e // num_heads
    mha._qkv_same_embed_dim = not use_separate_proj_weight
    out_proj = Linear.__new__(Linear)
    Module.__init__(out_proj)
    vars(out_proj).update(weight=out_proj_weight, bias=out_proj_bias,
                          in_features=e, out_features=e)
    vars(mha).update(
        in_proj_weight=None if use_separate_proj_weight else in_proj_weight,
        q_proj_weight=q_proj_weight if use_separate_proj_weight else None,
        k_proj_weight=k_proj_weight if use_separate_proj_weight else None,
        v_proj_weight=v_proj_weight if use_separate_proj_weight else None,
        in_proj_bias=in_proj_bias, bias_k=bias_k, bias_v=bias_v, out_proj=out_proj)
    mha.training = training
    return mha.forward(query, key, value, key_padding_mask, need_weights, attn_mask,
                       average_attn_weights, is_causal)
