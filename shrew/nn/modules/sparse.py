"""Embedding and EmbeddingBag: tables of vectors looked up by index (F.embedding,
F.embedding_bag)."""
from __future__ import annotations

from ...core.errors import ShrewValueError
from ...core.grad_mode import no_grad
from ...ops.creation import arange, zeros
from ...typing import DeviceLike, DTypeLike
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import _positive
from .module import Module, place


__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    """A table of num_embeddings vectors, looked up by integer index; weights ~ N(0, 1),
    the padding_idx row zero (and it gets no gradient).  max_norm renormalises the rows
    looked up, in place, as PyTorch."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        _positive("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ShrewValueError(f"Embedding: padding_idx {padding_idx} is outside "
                                      f"[{-num_embeddings}, {num_embeddings})")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is not None:
            if _weight.shape != (num_embeddings, embedding_dim):
                raise ShrewValueError(f"Embedding: _weight must be [{num_embeddings}, "
                                      f"{embedding_dim}], got {list(_weight.shape)}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        else:
            self.weight = init.normal_(Parameter(zeros(num_embeddings, embedding_dim),
                                                 requires_grad=not _freeze))
            if padding_idx is not None:  # the padding row starts at zero
                with no_grad():
                    kept = arange(num_embeddings).reshape(-1, 1) != padding_idx
                    self.weight.mul_(kept)
        place(self, device, dtype)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding holding a copy of `embeddings` [num, dim], frozen unless
        freeze=False."""
        if embeddings.ndim != 2:
            raise ShrewValueError(f"Embedding.from_pretrained: embeddings must be 2-d, got "
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
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.mode = max_norm, norm_type, mode
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        self.weight = (Parameter(_weight) if _weight is not None else
                       init.normal_(Parameter(zeros(num_embeddings, embedding_dim))))
        place(self, device, dtype)

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"
