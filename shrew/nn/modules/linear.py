"""Linear and Identity, and the default initialisation Linear shares with the convolutions
(conv.py) and the size check it shares with Embedding (sparse.py)."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...core.errors import ShrewValueError
from ...ops.creation import zeros
from .. import functional as F
from .. import init
from .module import Module, place
from ..parameter import Parameter

if TYPE_CHECKING:
    from ...typing import DeviceLike, DTypeLike
from ..._tensor import Tensor


__all__ = ["Identity", "Linear", "NonDynamicallyQuantizableLinear"]


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
            raise ShrewValueError(f"{layer}: {name} must be a positive int, got {value!r}")


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments, as PyTorch's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    """y = x @ weight.T + bias, weight [out_features, in_features]."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        _positive("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(zeros(out_features, in_features))
        self.bias = Parameter(zeros(out_features)) if bias else None
        _default_init(self.weight, self.bias)
        place(self, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


# PyTorch's MultiheadAttention.out_proj class, a Linear by another name there too
NonDynamicallyQuantizableLinear = Linear
