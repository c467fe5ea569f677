"""In-place initialisers, as torch.nn.init.  Without a `generator` they draw from the
tensor's own device generator (shrew.manual_seed makes them reproducible); with a
shrew.Generator they draw on the host from that stream.  Each returns its tensor."""
from __future__ import annotations

import math
import warnings
from statistics import NormalDist
from typing import TypeVar

import numpy as np

from ..core.errors import ShapeError, ShrewValueError
from ..ops.generator import Generator, generator_from_global_seed
from ..ops.creation import full, tensor
from ..ops.random import rand, randn
from ..core.grad_mode import no_grad
from ..core.shape import fmt
from .._tensor import Tensor

_T = TypeVar("_T", bound=Tensor)

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]


def _fill(t: _T, values: Tensor | np.ndarray) -> _T:
    """Write values into t's memory, outside autograd; returns t."""
    if isinstance(values, np.ndarray):
        values = tensor(values, dtype=t.dtype, device=t.device)
    with no_grad():
        t.copy_(values)
    return t


def _host_stream(generator: Generator | None) -> np.random.Generator:
    """A numpy stream for draws made on the host: the given generator's, or one seeded
    from shrew's global random state."""
    return (generator or generator_from_global_seed()).numpy()


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table): 1 for linear layers
    and sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu
    (slope `param`, default 0.01), 3/4 for selu."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, bool) or not isinstance(param, (int, float)):
            raise ShrewValueError(f"calculate_gain: negative_slope {param!r} is not a valid number")
        else:
            slope = param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ShrewValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def uniform_(tensor: _T, a: float = 0.0, b: float = 1.0,
             generator: Generator | None = None) -> _T:
    """Fill with U(a, b) samples."""
    if generator is None:
        u = rand(*tensor.shape, dtype=tensor.dtype, device=tensor.device)
    else:
        u = _as_tensor(generator.numpy().random(tensor.shape), tensor)
    return _fill(tensor, u * (b - a) + a)


def normal_(tensor: _T, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> _T:
    """Fill with N(mean, std^2) samples."""
    if generator is None:
        z = randn(*tensor.shape, dtype=tensor.dtype, device=tensor.device)
    else:
        z = _as_tensor(generator.numpy().standard_normal(tensor.shape), tensor)
    return _fill(tensor, z * std + mean)


def _as_tensor(a: np.ndarray, like: Tensor) -> Tensor:
    return tensor(a, dtype=like.dtype, device=like.device)


def trunc_normal_(tensor: _T, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Generator | None = None) -> _T:
    """Fill with N(mean, std^2) samples conditioned on lying in [a, b] (a and b are
    absolute bounds, as in PyTorch)."""
    if not a < b:
        raise ShrewValueError(f"trunc_normal_: needs a < b, got a={a}, b={b}")
    rng, unit = _host_stream(generator), NormalDist()
    lo, hi = unit.cdf((a - mean) / std), unit.cdf((b - mean) / std)
    n = math.prod(tensor.shape)
    if hi - lo > 0.05:  # most draws land inside: redraw the few that do not
        out = rng.normal(mean, std, n)
        outside = (out < a) | (out > b)
        while outside.any():
            out[outside] = rng.normal(mean, std, int(outside.sum()))
            outside = (out < a) | (out > b)
    else:  # a thin slice of the distribution: the inverse CDF of uniform draws in it
        quantile = np.vectorize(unit.inv_cdf, otypes=[np.float64])
        out = mean + std * quantile(rng.uniform(lo, hi, n))
    return _fill(tensor, np.clip(out, a, b).reshape(tensor.shape))


def constant_(tensor: _T, val: float) -> _T:
    """Fill with val."""
    return _fill(tensor, full(tensor.shape, val, dtype=tensor.dtype, device=tensor.device))


def zeros_(tensor: _T) -> _T:
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def ones_(tensor: _T) -> _T:
    """Fill with ones."""
    return constant_(tensor, 1.0)


def eye_(tensor: _T) -> _T:
    """The identity in a 2-D tensor (ones on the main diagonal, as torch.eye)."""
    if tensor.ndim != 2:
        raise ShapeError(f"eye_: only tensors with 2 dimensions are supported, got shape "
                         f"{fmt(tensor.shape)}")
    rows, cols = tensor.shape
    return _fill(tensor, np.eye(rows, cols))


def dirac_(tensor: _T, groups: int = 1) -> _T:
    """The Dirac delta in a 3-, 4- or 5-D conv weight [out, in, *kernel]: each of the
    `groups` groups of output channels passes through as many input channels as it can
    (a one at the kernel's centre)."""
    if tensor.ndim not in (3, 4, 5):
        raise ShapeError(f"dirac_: only tensors with 3, 4 or 5 dimensions are supported, got "
                         f"shape {fmt(tensor.shape)}")
    if tensor.shape[0] % groups:
        raise ShrewValueError(f"dirac_: dim 0 ({tensor.shape[0]}) must be divisible by groups "
                              f"({groups})")
    per_group = tensor.shape[0] // groups
    values = np.zeros(tensor.shape)
    centre = tuple(k // 2 for k in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + d, d) + centre] = 1.0
    return _fill(tensor, values)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight [out, in, *kernel], as PyTorch counts them."""
    if tensor.ndim < 2:
        raise ShapeError(f"init: fan in and fan out need a weight with at least 2 dims, "
                         f"got shape {fmt(tensor.shape)}")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


fans = _calculate_fan_in_and_fan_out  # the short name shrew's layers use


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ShrewValueError(f"init: mode {mode!r} not supported, use 'fan_in' or 'fan_out'")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: _T, gain: float = 1.0, generator: Generator | None = None) -> _T:
    """Glorot initialisation: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: _T, gain: float = 1.0, generator: Generator | None = None) -> _T:
    """Glorot initialisation: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    """He initialisation's std, or None (with PyTorch's warning) for an empty tensor."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: _T, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Generator | None = None) -> _T:
    """He initialisation: U(-b, b) with b = gain * sqrt(3 / fan), the gain of
    `nonlinearity` (leaky_relu with negative slope `a` by default)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: _T, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Generator | None = None) -> _T:
    """He initialisation: N(0, std^2) with std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: _T, gain: float = 1.0, generator: Generator | None = None) -> _T:
    """A (semi-)orthogonal matrix, the tensor viewed as [shape[0], rest]: the Q of a QR
    decomposition of a Gaussian matrix, signs fixed so that it is uniformly distributed."""
    if tensor.ndim < 2:
        raise ShapeError(f"orthogonal_: only tensors with 2 or more dimensions are supported, "
                         f"got shape {fmt(tensor.shape)}")
    if 0 in tensor.shape:
        return tensor
    rows = tensor.shape[0]
    cols = math.prod(tensor.shape) // rows
    flat = _host_stream(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape))


def sparse_(tensor: _T, sparsity: float, std: float = 0.01,
            generator: Generator | None = None) -> _T:
    """A 2-D tensor with N(0, std^2) entries, ceil(sparsity * rows) of each column zero."""
    if tensor.ndim != 2:
        raise ShapeError(f"sparse_: only tensors with 2 dimensions are supported, got shape "
                         f"{fmt(tensor.shape)}")
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    rng = _host_stream(generator)
    values = rng.normal(0.0, std, (rows, cols))
    for col in range(cols):
        values[rng.permutation(rows)[:zeros], col] = 0.0
    return _fill(tensor, values)
