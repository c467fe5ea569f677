"""Fold and Unfold: sliding blocks to columns and back (F.fold, F.unfold)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...typing import IntOrPair


__all__ = ["Fold", "Unfold"]


class Unfold(Module):
    def __init__(self, kernel_size: IntOrPair, dilation: IntOrPair = 1, padding: IntOrPair = 0,
                 stride: IntOrPair = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Unfold):
    def __init__(self, output_size: IntOrPair, kernel_size: IntOrPair, dilation: IntOrPair = 1,
                 padding: IntOrPair = 0, stride: IntOrPair = 1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, " + super().extra_repr()
