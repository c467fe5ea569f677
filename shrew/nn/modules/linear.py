"""Layers with weights (Linear, Embedding, EmbeddingBag; the convolutions are in conv.py),
pooling, the dropouts, resampling (PixelShuffle, Upsample) and the shape layers (Flatten, Unflatten,
Identity)."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import ShrewError
from ..ops.creation import arange, zeros
from ..core.grad_mode import no_grad
from ..core.shape import normalize_dim
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

if TYPE_CHECKING:
    from .._tensor import Tensor


def _default_init(weight: Parameter, bias: Parameter | None) -> None:
    """PyTorch's default for Linear and Conv: kaiming_uniform(a=sqrt(5)), which is
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the bias from the same range."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        bound = 1.0 / math.sqrt(init.fans(weight)[0])
        init.uniform_(bias, -bound, bound)


def _positive(layer: str, **sizes: object) -> None:
    for name, value in sizes.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ShrewError(f"{layer}: {name} must be a positive int, got {value!r}")


class Linear(Module):
    """y = x @ weight.T + bias, weight [out_features, in_features]."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        _positive("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(zeros(out_features, in_features))
        self.bias = Parameter(zeros(out_features)) if bias else None
        _default_init(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Embedding(Module):
    """A table of num_embeddings vectors, looked up by integer index; weights ~ N(0, 1),
    the padding_idx row zero (and it gets no gradient).  max_norm renormalises the rows
    looked up, in place, as PyTorch."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False) -> None:
        super().__init__()
        _positive("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ShrewError(f"Embedding: padding_idx {padding_idx} is outside "
                                 f"[{-num_embeddings}, {num_embeddings})")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is not None:
            if _weight.shape != (num_embeddings, embedding_dim):
                raise ShrewError(f"Embedding: _weight must be [{num_embeddings}, "
                                 f"{embedding_dim}], got {list(_weight.shape)}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        else:
            self.weight = init.normal_(Parameter(zeros(num_embeddings, embedding_dim),
                                                 requires_grad=not _freeze))
            if padding_idx is not None:  # the padding row starts at zero
                with no_grad():
                    kept = arange(num_embeddings).reshape(-1, 1) != padding_idx
                    self.weight.mul_(kept)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding holding a copy of `embeddings` [num, dim], frozen unless
        freeze=False."""
        if embeddings.ndim != 2:
            raise ShrewError(f"Embedding.from_pretrained: embeddings must be 2-d, got "
                             f"{list(embeddings.shape)}")
        rows, dim = embeddings.shape
        return cls(rows, dim, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse,
                   _weight=embeddings, _freeze=freeze)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += ", scale_grad_by_freq=True"
        if self.sparse:
            text += ", sparse=True"
        return text


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (F.embedding_bag); weights ~ N(0, 1)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.mode = max_norm, norm_type, mode
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        self.weight = (Parameter(_weight) if _weight is not None else
                       init.normal_(Parameter(zeros(num_embeddings, embedding_dim))))

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"


class Dropout(Module):
    """Zeroes elements with probability p while training; the identity in eval()."""

    function: Callable[..., Tensor] = staticmethod(F.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ShrewError(f"{type(self).__name__}: p must lie in [0, 1], got {p!r}")
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return type(self).function(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """Zeroes whole channels of [N, C, L] (or [C, L]) while training."""

    function = staticmethod(F.dropout1d)


class Dropout2d(Dropout):
    """Zeroes whole channels of [N, C, H, W] (or [C, H, W]) while training."""

    function = staticmethod(F.dropout2d)


class Dropout3d(Dropout):
    """Zeroes whole channels of [N, C, D, H, W] (or [C, D, H, W]) while training."""

    function = staticmethod(F.dropout3d)


class AlphaDropout(Dropout):
    """Alpha dropout for SELU networks (keeps mean and variance) while training."""

    function = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels while training."""

    function = staticmethod(F.feature_alpha_dropout)


class PixelShuffle(Module):
    """[*, C r^2, H, W] -> [*, C, H r, W r]."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """[*, C, H r, W r] -> [*, C r^2, H, W]."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class Upsample(Module):
    """F.interpolate with the arguments given here."""

    def __init__(self, size: int | Sequence[int] | None = None,
                 scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.size, self.mode, self.align_corners = size, mode, align_corners
        self.scale_factor = (float(scale_factor) if isinstance(scale_factor, (int, float))
                             else scale_factor)
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)

    def extra_repr(self) -> str:
        shown = (f"size={self.size}" if self.size is not None
                 else f"scale_factor={self.scale_factor}")
        return f"{shown}, mode={self.mode!r}"


class Flatten(Module):
    """Flatten dims start_dim..end_dim (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim `dim` into `unflattened_size` (one entry may be -1)."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        d = normalize_dim(self.dim, x.ndim, "Unflatten")
        return x.reshape(*x.shape[:d], *self.unflattened_size, *x.shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments, as PyTorch's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input
