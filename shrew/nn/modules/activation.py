"""Activation layers: each holds its arguments and applies the function of the same name
in shrew.nn.functional (PReLU also holds its learned slopes); and MultiheadAttention,
which PyTorch keeps here too."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ...core.dtype import DType
from ...core.errors import ShapeError, ShrewValueError
from ...ops.attention import fused_self_attention
from ...ops.creation import full, zeros
from ...ops.shape.recorded import cat
from ...core.shape import fmt
from ...typing import DeviceLike, DTypeLike
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from .linear import Linear
from .module import Module, place
from ..parameter import Parameter


__all__ = ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
           "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "ReLU", "ReLU6", "SELU",
           "SiLU", "Sigmoid", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink",
           "Softsign", "Tanh", "Tanhshrink", "Threshold", "MultiheadAttention"]


class _Activation(Module):
    """Applies `function` with the arguments given to __init__, which repr shows."""

    function: Callable[..., Tensor]
    # PyTorch's repr leaves out `inplace` for some modules and argument names for others.
    repr_inplace = True
    repr_names = True

    def __init__(self, **arguments: Any) -> None:
        super().__init__()
        self._arguments = list(arguments)
        for name, value in arguments.items():
            setattr(self, name, value)

    def forward(self, input: Tensor) -> Tensor:
        return type(self).function(input, **{n: getattr(self, n) for n in self._arguments})

    def extra_repr(self) -> str:
        shown = [n for n in self._arguments
                 if n != "inplace" or (self.repr_inplace and getattr(self, n))]
        if not self.repr_names:
            return ", ".join(repr(getattr(self, n)) for n in shown)
        return ", ".join(f"{n}={getattr(self, n)!r}" for n in shown)


class ReLU(_Activation):
    function = F.relu

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class ReLU6(_Activation):
    function = F.relu6

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class LeakyReLU(_Activation):
    function = F.leaky_relu

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__(negative_slope=negative_slope, inplace=inplace)


class ELU(_Activation):
    function = F.elu

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(alpha=alpha, inplace=inplace)


class SELU(_Activation):
    function = F.selu

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class CELU(_Activation):
    function = F.celu

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(alpha=alpha, inplace=inplace)


class GELU(_Activation):
    function = F.gelu

    def __init__(self, approximate: str = "none") -> None:
        super().__init__(approximate=approximate)


class SiLU(_Activation):
    function = F.silu

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class Mish(_Activation):
    function = F.mish

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class Softplus(_Activation):
    function = F.softplus

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__(beta=beta, threshold=threshold)


class Softsign(_Activation):
    function = F.softsign


class Hardtanh(_Activation):
    function = F.hardtanh

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__(min_val=min_val, max_val=max_val, inplace=inplace)


class Hardswish(_Activation):
    function = F.hardswish
    repr_inplace = False

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class Hardsigmoid(_Activation):
    function = F.hardsigmoid
    repr_inplace = False

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class LogSigmoid(_Activation):
    function = F.logsigmoid


class Sigmoid(_Activation):
    function = F.sigmoid


class Tanh(_Activation):
    function = F.tanh


class Tanhshrink(_Activation):
    function = F.tanhshrink


class Softshrink(_Activation):
    function = F.softshrink
    repr_names = False

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__(lambd=lambd)


class Hardshrink(_Activation):
    function = F.hardshrink
    repr_names = False

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__(lambd=lambd)


class Threshold(_Activation):
    function = F.threshold

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__(threshold=threshold, value=value, inplace=inplace)


class GLU(_Activation):
    function = F.glu

    def __init__(self, dim: int = -1) -> None:
        super().__init__(dim=dim)


class Softmax(_Activation):
    function = F.softmax

    def __init__(self, dim: int | None = None) -> None:
        super().__init__(dim=dim)


class Softmin(_Activation):
    function = F.softmin

    def __init__(self, dim: int | None = None) -> None:
        super().__init__(dim=dim)


class LogSoftmax(_Activation):
    function = F.log_softmax

    def __init__(self, dim: int | None = None) -> None:
        super().__init__(dim=dim)


class Softmax2d(Module):
    """softmax over the channels of [N, C, H, W] or [C, H, W]."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ShapeError(f"Softmax2d: input must be [N, C, H, W] or [C, H, W], got "
                             f"{fmt(input.shape)}")
        return F.softmax(input, -3)


class PReLU(Module):
    """leaky_relu with learned slopes: one shared (num_parameters=1) or one per channel,
    all starting at `init`."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(full((num_parameters,), init))
        place(self, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class MultiheadAttention(Module):
    """Multi-head attention, as torch.nn.MultiheadAttention: same arguments, parameter
    names (a PyTorch state_dict loads), initialisation and results.

    forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (output, weights or None).  Inputs are
    [L, N, E] ([N, L, E] with batch_first=True) or unbatched [L, E].  A bool attn_mask
    ([L, S] or [N * num_heads, L, S]) or key_padding_mask ([N, S]) is True where attending
    is NOT allowed; float masks are added to the scores.  is_causal=True without an
    attn_mask applies the causal mask (PyTorch requires the mask as well).  The weights
    returned are averaged over the heads unless average_attn_weights=False."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None,
                 batch_first: bool = False,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        if num_heads < 1 or embed_dim % num_heads:
            raise ShrewValueError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible by "
                                  f"num_heads {num_heads}")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self.batch_first, self.add_zero_attn = batch_first, add_zero_attn
        self.head_dim = embed_dim // num_heads
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        d = embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(zeros(3 * d, d))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.register_parameter("in_proj_weight", None)
            self.q_proj_weight = Parameter(zeros(d, d))
            self.k_proj_weight = Parameter(zeros(d, self.kdim))
            self.v_proj_weight = Parameter(zeros(d, self.vdim))
        self.in_proj_bias = Parameter(zeros(3 * d)) if bias else None
        self.out_proj = Linear(d, d, bias=bias)
        self.bias_k = Parameter(zeros(1, 1, d)) if add_bias_kv else None
        self.bias_v = Parameter(zeros(1, 1, d)) if add_bias_kv else None
        self._reset_parameters()
        place(self, device, dtype)

    def _reset_parameters(self) -> None:
        """PyTorch's: xavier-uniform projections, zero biases, xavier-normal bias_k/v."""
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight,
                  self.v_proj_weight):
            if w is not None:
                init.xavier_uniform_(w)
        for b in (self.in_proj_bias, self.out_proj.bias):
            if b is not None:
                init.zeros_(b)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                fan_in, fan_out = init.fans(b)
                init.normal_(b, 0.0, math.sqrt(2.0 / (fan_in + fan_out)))

    def _projection(self, which: int) -> tuple[Tensor, Tensor | None]:
        """(weight, bias) of the query (0), key (1) or value (2) projection."""
        d = self.embed_dim
        if self.in_proj_weight is not None:
            w = self.in_proj_weight.narrow(0, which * d, d)
        else:
            w = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)[which]
        b = None if self.in_proj_bias is None else self.in_proj_bias.narrow(0, which * d, d)
        return w, b

    def _heads(self, x: Tensor) -> Tensor:
        """[N, T, E] -> [N, H, T, E/H], a view (attend makes it contiguous where it
        composes attention)."""
        n, t = x.shape[:2]
        return x.reshape(n, t, self.num_heads, self.head_dim).transpose(1, 2)

    def _check(self, query: Tensor, key: Tensor, value: Tensor) -> bool:
        """Whether the inputs are batched; a ShapeError naming them if they do not fit."""
        dims = (self.embed_dim, self.kdim, self.vdim)
        batched = query.ndim == 3
        layout = "[N, L, E]" if self.batch_first else "[L, N, E]"
        ok = query.ndim in (2, 3) and all(t.ndim == query.ndim and t.shape[-1] == e
                                          for t, e in zip((query, key, value), dims))
        if ok and batched:
            batch = 0 if self.batch_first else 1
            ok = query.shape[batch] == key.shape[batch] == value.shape[batch]
        ok = ok and key.shape[:-1] == value.shape[:-1]
        if not ok:
            raise ShapeError(f"MultiheadAttention: query, key and value must be {layout} (or "
                             f"unbatched [L, E]) with E = {dims} and matching batch and key "
                             f"lengths, got {fmt(query.shape)}, {fmt(key.shape)}, "
                             f"{fmt(value.shape)}")
        return batched

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        batched = self._check(query, key, value)
        self_attention = query is key and key is value
        # Work batch-first: [N, L, E].
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        n, length = query.shape[:2]
        dropout = self.dropout if self.training else 0.0
        scale = 1.0 / math.sqrt(self.head_dim)
        bias, masked = None, False
        if self_attention and self.in_proj_weight is not None:
            # One GEMM for q, k and v together.
            qkv = F.linear(query, self.in_proj_weight, self.in_proj_bias)
            if not (need_weights or dropout or self.bias_k is not None or self.add_zero_attn):
                # One op over the packed q, k and v where the backend fuses attention.
                bias, masked = self._bias(attn_mask, key_padding_mask, is_causal, n, length,
                                          length, 0, qkv.dtype, qkv.device), True
                out = fused_self_attention(qkv, self.num_heads, bias, scale)
                if out is not None:
                    return self._output(out, n, length, batched), None
            q, k, v = (qkv.narrow(-1, i * self.embed_dim, self.embed_dim) for i in range(3))
        else:
            q, k, v = (F.linear(t, *self._projection(i)) for i, t in
                       enumerate((query, key, value)))
        extra_keys = 0
        if self.bias_k is not None and self.bias_v is not None:
            k = cat([k, self.bias_k.expand(n, 1, self.embed_dim)], 1)
            v = cat([v, self.bias_v.expand(n, 1, self.embed_dim)], 1)
            extra_keys += 1
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        if self.add_zero_attn:
            zero = zeros(n, self.num_heads, 1, self.head_dim, dtype=k.dtype, device=k.device)
            k, v = cat([k, zero], 2), cat([v, zero], 2)
            extra_keys += 1
        if not masked:   # (else made above: no extra keys, the same mask)
            bias = self._bias(attn_mask, key_padding_mask, is_causal, n, length, key.shape[1],
                              extra_keys, q.dtype, q.device)
        out, weights = F.attention.attend(q, k, v, bias, dropout, scale, need_weights)
        out = self._output(out, n, length, batched)
        if weights is None:   # not needed: attend may have fused attention
            return out, None
        if average_attn_weights:
            weights = weights.mean(1)
        return out, weights if batched else weights.squeeze(0)

    def _output(self, heads: Tensor, n: int, length: int, batched: bool) -> Tensor:
        """The heads [N, H, L, E/H] merged and projected, in the caller's layout."""
        out = self.out_proj(heads.transpose(1, 2).reshape(n, length, self.embed_dim))
        if not batched:
            return out.squeeze(0)
        return out if self.batch_first else out.transpose(0, 1)

    def _bias(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None, is_causal: bool,
              n: int, length: int, keys: int, extra_keys: int, dtype: DType,
              device: str) -> Tensor | None:
        """The additive mask [N or 1, H or 1, L, S] from attn_mask, key_padding_mask and
        is_causal; the columns of bias_k and the zero key (extra_keys) are never masked."""
        op = "MultiheadAttention"
        h = self.num_heads
        bias = None
        if attn_mask is None and is_causal:
            bias = F.attention.attention_bias(F.attention.causal_mask(length, keys, device),
                                              dtype, op)
        elif attn_mask is not None:
            if attn_mask.shape == (length, keys):
                shaped = attn_mask
            elif attn_mask.shape == (n * h, length, keys):
                shaped = attn_mask.reshape(n, h, length, keys)
            else:
                raise ShapeError(f"{op}: attn_mask must be [{length}, {keys}] or "
                                 f"[{n * h}, {length}, {keys}], got {fmt(attn_mask.shape)}")
            bias = F.attention.attention_bias(shaped, dtype, op, true_attends=False)
        if key_padding_mask is not None:
            if key_padding_mask.shape != (n, keys):
                raise ShapeError(f"{op}: key_padding_mask must be [{n}, {keys}], got "
                                 f"{fmt(key_padding_mask.shape)}")
            padding = F.attention.attention_bias(key_padding_mask.reshape(n, 1, 1, keys), dtype,
                                                 op, "key_padding_mask", true_attends=False)
            bias = padding if bias is None else bias + padding
        if bias is not None and extra_keys:
            bias = bias.pad((0, extra_keys))
        return bias

    def extra_repr(self) -> str:
        return ""
