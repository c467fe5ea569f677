"""Activation functions, composed of Tensor operations.

`inplace=` is accepted wherever PyTorch has it, but the result is always a new tensor:
shrew's tensors are immutable under autograd, so `x = F.relu(x, inplace=True)` works and a
program that relies on the input itself changing does not (docs/porting.md)."""
from __future__ import annotations

import warnings
from typing import Any

from ...core.autocast import autocast_op
from ...ops.creation import empty_like, zeros_like
from ...ops.elementwise.recorded import where
from ...core.dtype import DType
from ...core.errors import ShapeError
from ...core.shape import fmt, normalize_dim
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor

# SELU's constants, from Klambauer et al. (2017), as PyTorch uses them.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    return _tensor("relu", "input", input).relu()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6)."""
    return hardtanh(input, 0.0, 6.0)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """x clamped to [min_val, max_val]."""
    return _tensor("hardtanh", "input", input).clamp(min_val, max_val)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, else negative_slope * x."""
    return where(_tensor("leaky_relu", "input", input) > 0, input, input * negative_slope)


@autocast_op("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """leaky_relu with a learned slope: one for all channels, or one per channel (dim 1)."""
    _tensor("prelu", "input", input)
    n = _tensor("prelu", "weight", weight).numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.ndim > 1 or n not in (1, channels):
        raise ShapeError(f"prelu: weight {fmt(weight.shape)} must hold 1 or {channels} (the "
                         f"channels of input {fmt(input.shape)}) slopes")
    slope = weight.reshape(n, *(1,) * (input.ndim - 2)) if input.ndim >= 2 else \
        weight.reshape(()) if input.ndim == 0 else weight  # a 0-d input stays 0-d
    return where(input > 0, input, input * slope)


def _expm1_nonpositive(x: Tensor) -> Tensor:
    """exp(min(x, 0)) - 1: the negative branch of ELU and CELU.  Clamping first keeps the
    unused positive side from overflowing (an inf there would give a NaN gradient)."""
    return x.clamp(max=0.0).exp() - 1.0


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, else alpha * (exp(x) - 1)."""
    x = _tensor("elu", "input", input)
    return where(x > 0, x, _expm1_nonpositive(x) * alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants."""
    return elu(input, _SELU_ALPHA) * _SELU_SCALE


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, else alpha * (exp(x / alpha) - 1)."""
    x = _tensor("celu", "input", input)
    return where(x > 0, x, _expm1_nonpositive(x * (1.0 / alpha)) * alpha)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """The exact erf form, or the tanh approximation with approximate="tanh"."""
    return _tensor("gelu", "input", input).gelu(approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (swish)."""
    return _tensor("silu", "input", input).silu()


def _softplus(x: Tensor) -> Tensor:
    """log(1 + exp(x)) as relu(x) + log(1 + exp(-|x|)): no overflow for any x."""
    return x.relu() + ((-x.abs()).exp() + 1.0).log()


@autocast_op("softplus")
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    x = _tensor("softplus", "input", input)
    scaled = x * beta
    return where(scaled > threshold, x, _softplus(scaled) * (1.0 / beta))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    x = _tensor("mish", "input", input)
    return x * _softplus(x).tanh()


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    x = _tensor("softsign", "input", input)
    return x / (x.abs() + 1.0)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return relu6(_tensor("hardsigmoid", "input", input) + 3.0) * (1.0 / 6.0)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return _tensor("hardswish", "input", input) * hardsigmoid(input)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), stable for any x."""
    return -_softplus(-_tensor("logsigmoid", "input", input))


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x))."""
    return _tensor("sigmoid", "input", input).sigmoid()


def tanh(input: Tensor) -> Tensor:
    """The hyperbolic tangent."""
    return _tensor("tanh", "input", input).tanh()


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return _tensor("tanhshrink", "input", input) - input.tanh()


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    x = _tensor("softshrink", "input", input)
    return where(x > lambd, x - lambd, where(x < -lambd, x + lambd, 0.0))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    x = _tensor("hardshrink", "input", input)
    return where(x.abs() > lambd, x, 0.0)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else value."""
    x = _tensor("threshold", "input", input)
    return where(x > threshold, x, value)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of input along dim."""
    x = _tensor("glu", "input", input)
    d = normalize_dim(dim, x.ndim, "glu")
    if x.shape[d] % 2:
        raise ShapeError(f"glu: dim {dim} of input {fmt(x.shape)} must have an even size")
    half = x.shape[d] // 2
    return x.narrow(d, 0, half) * x.narrow(d, half, half).sigmoid()


def _softmax_dim(op: str, x: Tensor, dim: int | None, dtype: DType | None) -> tuple[Tensor, int]:
    """The input cast to dtype, and the dim; dim=None picks PyTorch's legacy implicit dim
    (0 for 0-, 1- and 3-d inputs, else 1) with its deprecation warning."""
    _tensor(op, "input", x)
    if dtype is not None:
        x = x.to_dtype(dtype)
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the "
                      f"call to include dim=X as an argument.", UserWarning, stacklevel=3)
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return x, dim


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: DType | None = None) -> Tensor:
    """exp(x) normalised to sum to 1 along dim (computed stably, for any magnitude)."""
    x, d = _softmax_dim("softmax", input, dim, dtype)
    return x.softmax(d)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: DType | None = None) -> Tensor:
    """softmax(-x, dim)."""
    x, d = _softmax_dim("softmin", input, dim, dtype)
    return (-x).softmax(d)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: DType | None = None) -> Tensor:
    """log(softmax(x, dim)), computed stably."""
    x, d = _softmax_dim("log_softmax", input, dim, dtype)
    return x.log_softmax(d)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + Gumbel(0, 1) noise) / tau, dim): a sample of the relaxed categorical
    distribution.  hard=True returns the one-hot of its argmax, with the soft sample's
    gradient (straight-through).  eps is deprecated and unused, as in PyTorch."""
    _tensor("gumbel_softmax", "logits", logits)
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()  # ~Gumbel(0, 1), as torch draws it
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
          training: bool = False, inplace: bool = False) -> Tensor:
    """leaky_relu whose slope for negative inputs is (lower + upper) / 2 in eval, and drawn
    uniformly from [lower, upper] per element in training."""
    x = _tensor("rrelu", "input", input)
    if lower > upper:
        raise ShapeError(f"rrelu: lower ({lower}) must not exceed upper ({upper})")
    if training:
        from ...ops.random import rand  # random imports elementwise
        slope: Any = rand(*x.shape, dtype=x.dtype, device=x.device) * (upper - lower) + lower
    else:
        slope = (lower + upper) / 2
    out = where(x >= 0, x, x * slope)
    return input.copy_(out) if inplace else out
