"""Activation layers: each holds its arguments and applies the function of the same name
in shrew.nn.functional (PReLU also holds its learned slopes)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.errors import ShapeError
from ..ops.creation import full
from ..core.shape import fmt
from .._tensor import Tensor
from . import functional as F
from .module import Module
from .parameter import Parameter


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

    def __init__(self, num_parameters: int = 1, init: float = 0.25) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(full((num_parameters,), init))

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
