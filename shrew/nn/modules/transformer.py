"""The encoder-decoder Transformer of "Attention Is All You Need", as torch.nn builds it:
TransformerEncoderLayer, TransformerDecoderLayer, their stacks, and Transformer.  Same
arguments, sub-module names (a PyTorch state_dict loads) and results.  Also shrew's own
TransformerBlock, a GPT-2-style pre-LayerNorm block."""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...autograd.checkpoint import checkpoint as run_checkpointed
from ...core.dtype import as_dtype, float32
from ...core.errors import ShrewTypeError
from ...typing import DeviceLike, DTypeLike
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from .activation import GELU, MultiheadAttention
from .container import ModuleList, Sequential
from ..functional.attention import attention_bias, causal_mask
from .dropout import Dropout
from .linear import Linear
from .module import Module, place
from .normalization import LayerNorm

if TYPE_CHECKING:
    from ...typing import DTypeLike


# TransformerBlock, shrew's own, is left out: PyTorch's transformer.py has no such name.
__all__ = ["Transformer", "TransformerEncoder", "TransformerEncoderLayer", "TransformerDecoder",
           "TransformerDecoderLayer"]


Activation = str | Callable[[Tensor], Tensor]


def _activation(name: Activation) -> Callable[[Tensor], Tensor]:
    """"relu" or "gelu" as PyTorch's layers take them, or any callable (a Module too)."""
    if callable(name):
        return name
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu
    raise ShrewTypeError(f"Transformer: activation must be 'relu', 'gelu' or a callable, got "
                         f"{name!r}")


def generate_square_subsequent_mask(sz: int, device: str = "cpu",
                                    dtype: DTypeLike | None = None) -> Tensor:
    """[sz, sz] float mask: 0 on and below the diagonal, -inf above (position i sees
    positions j <= i)."""
    mask = causal_mask(sz, sz, device)
    return attention_bias(mask, as_dtype(dtype or float32), "generate_square_subsequent_mask")


class _Layer(Module):
    """What the encoder and decoder layers share: the feed-forward block, its norms and
    dropouts, and the pre-/post-norm residual wiring; `blocks` residual blocks (an encoder
    layer's 2, a decoder layer's 3)."""

    blocks: int

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        blocks = self.blocks
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, bias=bias,
                                            batch_first=batch_first)
        if blocks == 3:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout, bias=bias,
                                                     batch_first=batch_first)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = norm_first
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(activation)
        place(self, device, dtype)

    def _residual(self, x: Tensor, index: int, block: Callable[[Tensor], Tensor]) -> Tensor:
        """x + dropout(block(norm(x))) with norm_first, else norm(x + dropout(block(x)))."""
        norm, drop = getattr(self, f"norm{index}"), getattr(self, f"dropout{index}")
        if self.norm_first:
            return x + drop(block(norm(x)))
        return norm(x + drop(block(x)))

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class TransformerEncoderLayer(_Layer):
    """Self-attention then a feed-forward block, each with a residual connection and
    LayerNorm (after the residual, or before the block with norm_first=True)."""

    blocks = 2

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        def attend(x: Tensor) -> Tensor:
            return self.self_attn(x, x, x, attn_mask=src_mask,
                                  key_padding_mask=src_key_padding_mask, need_weights=False,
                                  is_causal=is_causal)[0]
        x = self._residual(src, 1, attend)
        return self._residual(x, 2, self._feed_forward)


class TransformerDecoderLayer(_Layer):
    """Self-attention, attention over the encoder's output (memory), then a feed-forward
    block; each with a residual connection and LayerNorm."""

    blocks = 3

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        def attend_self(x: Tensor) -> Tensor:
            return self.self_attn(x, x, x, attn_mask=tgt_mask,
                                  key_padding_mask=tgt_key_padding_mask, need_weights=False,
                                  is_causal=tgt_is_causal)[0]

        def attend_memory(x: Tensor) -> Tensor:
            return self.multihead_attn(x, memory, memory, attn_mask=memory_mask,
                                       key_padding_mask=memory_key_padding_mask,
                                       need_weights=False, is_causal=memory_is_causal)[0]
        x = self._residual(tgt, 1, attend_self)
        x = self._residual(x, 2, attend_memory)
        return self._residual(x, 3, self._feed_forward)


def _clones(layer: Module, n: int) -> ModuleList:
    """n independent deep copies of layer (PyTorch's stacks copy the layer given)."""
    return ModuleList([copy.deepcopy(layer) for _ in range(n)])


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer applied in turn, then `norm` if given."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer applied in turn, then `norm` if given."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """An encoder stack and a decoder stack, each ending in a LayerNorm; every weight
    matrix xavier-uniform initialised, as PyTorch."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = "relu",
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        options = (dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                   norm_first, bias)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, *options), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, *options), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        place(self, device, dtype)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)


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
        self.attn = MultiheadAttention(embed_dim, num_heads, dropout, batch_first=True)
        self.ln2 = LayerNorm(embed_dim)
        self.mlp = Sequential(Linear(embed_dim, hidden), GELU("tanh"),
                              Linear(hidden, embed_dim))
        self.drop = Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        if self.checkpoint:
            return run_checkpointed(self._block, x)
        return self._block(x)

    def _block(self, x: Tensor) -> Tensor:
        h = self.ln1(x)
        x = x + self.drop(self.attn(h, h, h, need_weights=False, is_causal=self.causal)[0])
        return x + self.drop(self.mlp(self.ln2(x)))
