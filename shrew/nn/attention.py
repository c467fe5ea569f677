"""Multi-head attention and the pre-LayerNorm transformer block."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..checkpoint import checkpoint as run_checkpointed
from ..errors import ShapeError, ShrewError
from ..shape import fmt
from . import functional as F
from . import init
from .activation import GELU
from .layers import Dropout, Linear
from .container import Sequential
from .module import Module
from .normalization import LayerNorm

if TYPE_CHECKING:
    from ..tensor import Tensor


class MultiheadAttention(Module):
    """Multi-head scaled dot-product attention on batch-first inputs.

    forward(query, key=None, value=None, causal=False): query [B, Tq, D], key and value
    [B, Tk, D] (both default to query: self-attention) -> [B, Tq, D].  causal=True lets
    position i attend to positions j <= i only.  Unlike torch.nn.MultiheadAttention the
    inputs are always batch-first and only the output is returned, not the weights.

    Parameters as PyTorch names and initialises them: in_proj (weight [3D, D], q, k, v
    stacked; xavier-uniform, zero bias) and out_proj (zero bias)."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0,
                 bias: bool = True) -> None:
        super().__init__()
        if num_heads < 1 or embed_dim % num_heads:
            raise ShrewError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible by "
                             f"num_heads {num_heads}")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.in_proj = Linear(embed_dim, 3 * embed_dim, bias)
        self.out_proj = Linear(embed_dim, embed_dim, bias)
        init.xavier_uniform_(self.in_proj.weight)
        if self.in_proj.bias is not None and self.out_proj.bias is not None:  # bias=True
            init.zeros_(self.in_proj.bias)
            init.zeros_(self.out_proj.bias)

    def _project(self, x: Tensor, which: int) -> Tensor:
        """x @ W_which.T + b_which, split into heads: [B, T, D] -> [B, H, T, D/H]."""
        d = self.embed_dim
        if x.ndim != 3 or x.shape[2] != d:
            raise ShapeError(f"MultiheadAttention: inputs must be [B, T, {d}], got {fmt(x.shape)}")
        w = self.in_proj.weight.narrow(0, which * d, d)
        b = None if self.in_proj.bias is None else self.in_proj.bias.narrow(0, which * d, d)
        batch, length = x.shape[:2]
        heads = F.linear(x, w, b).reshape(batch, length, self.num_heads, -1).transpose(1, 2)
        # One copy to [B, H, T, D/H]: each head's matrix contiguous for the batched GEMMs.
        return heads.contiguous()

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                causal: bool = False) -> Tensor:
        key = query if key is None else key
        value = key if value is None else value
        q, k, v = self._project(query, 0), self._project(key, 1), self._project(value, 2)
        out = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=causal)
        batch, length = query.shape[:2]
        return self.out_proj(out.transpose(1, 2).reshape(batch, length, self.embed_dim))

    def extra_repr(self) -> str:
        return f"{self.embed_dim}, num_heads={self.num_heads}"


class TransformerBlock(Module):
    """Pre-LayerNorm transformer block on [B, T, D]:
    x + attn(ln1(x)), then x + mlp(ln2(x)) with a GELU MLP of mlp_ratio * D hidden units
    (GELU's tanh approximation, as GPT-2: several times cheaper than erf on the CPU).

    dropout applies to the attention weights and to both residual branches.  causal=True
    makes it a decoder block.  checkpoint=True keeps only the block's input in forward and
    recomputes the rest in backward (shrew.checkpoint)."""

    def __init__(self, embed_dim: int, num_heads: int, mlp_ratio: float = 4,
                 dropout: float = 0.0, checkpoint: bool = False, causal: bool = False) -> None:
        super().__init__()
        hidden = int(embed_dim * mlp_ratio)
        self.checkpoint, self.causal = checkpoint, causal
        self.ln1 = LayerNorm(embed_dim)
        self.attn = MultiheadAttention(embed_dim, num_heads, dropout)
        self.ln2 = LayerNorm(embed_dim)
        self.mlp = Sequential(Linear(embed_dim, hidden), GELU("tanh"),
                              Linear(hidden, embed_dim))
        self.drop = Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        if self.checkpoint:
            return run_checkpointed(self._block, x)
        return self._block(x)

    def _block(self, x: Tensor) -> Tensor:
        x = x + self.drop(self.attn(self.ln1(x), causal=self.causal))
        return x + self.drop(self.mlp(self.ln2(x)))
