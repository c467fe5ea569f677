"""The dropouts as functions: elementwise, whole-channel (1-d, 2-d, 3-d) and alpha
dropout (for SELU networks)."""
from __future__ import annotations

import math
import warnings

from ...core.errors import ArgumentError, ShapeError
from ...core.shape import fmt
from ...ops.creation import ones
from ...ops.elementwise.recorded import where
from ...ops.random import rand
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor

# SELU's negative saturation value -scale * alpha, which alpha dropout sets dropped units to.
_ALPHA_PRIME = 1.7580993408473766


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p).  The mask comes
    from the device's generator, which checkpoint replays.  inplace is accepted; the
    result is a new tensor."""
    x = input  # torch's parameter names, short names below
    if not 0.0 <= p <= 1.0:
        raise ArgumentError(f"dropout: p must lie in [0, 1], got {p!r}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = rand(*x.shape, dtype=x.dtype, device=x.device) >= p
    return where(keep, x * (1.0 / (1.0 - p)), 0.0)


def _channel_mask_shape(op: str, x: Tensor, spatial: int) -> tuple[int, ...]:
    """[N, C, 1, ...] (or [C, 1, ...] unbatched): one draw per channel of x, which must have
    `spatial` dims after the channels (or any number when spatial is 0)."""
    if _tensor(op, "input", x).ndim < 2 or (spatial and x.ndim not in (spatial + 1,
                                                                           spatial + 2)):
        raise ShapeError(f"{op}: input must be [N, C, ...] with {spatial or 'some'} spatial "
                         f"dims (or unbatched), got {fmt(x.shape)}")
    lead = x.ndim - spatial if spatial else 2
    return x.shape[:lead] + (1,) * (x.ndim - lead)


def _feature_dropout(op: str, x: Tensor, p: float, training: bool, spatial: int) -> Tensor:
    """dropout of whole channels: one keep-or-zero draw per (sample, channel)."""
    shape = _channel_mask_shape(op, x, spatial)
    if not training or p == 0.0:
        return x
    return x * dropout(ones(*shape, dtype=x.dtype, device=x.device), p)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of [N, C, L] (or [C, L]) with probability p, scale by 1/(1-p)."""
    return _feature_dropout("dropout1d", input, p, training, 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of [N, C, H, W] (or [C, H, W]) with probability p.  A 2-d
    input, which PyTorch still accepts with a deprecation warning, gets its behaviour:
    every element dropped on its own, as dropout does (pytorch/examples' mnist_rnn
    relies on it)."""
    if _tensor("dropout2d", "input", input).ndim == 2:
        warnings.warn("dropout2d: a 2-D input is deprecated (PyTorch will refuse it); it is "
                      "dropped element by element, as dropout does: use dropout instead",
                      UserWarning, stacklevel=2)
        return dropout(input, p, training)
    return _feature_dropout("dropout2d", input, p, training, 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of [N, C, D, H, W] (or [C, D, H, W]) with probability p."""
    return _feature_dropout("dropout3d", input, p, training, 3)


def _alpha_dropout(op: str, x: Tensor, p: float, training: bool, mask_shape: tuple[int, ...]
                   ) -> Tensor:
    """Set dropped units to SELU's saturation value, then restore the mean and variance of
    a unit-normal input with an affine map (Klambauer et al., 2017)."""
    if not 0.0 <= p <= 1.0:
        raise ArgumentError(f"{op}: p must lie in [0, 1], got {p!r}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = rand(*mask_shape, dtype=x.dtype, device=x.device) >= p
    a = 1.0 / math.sqrt((_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
    b = _ALPHA_PRIME * a * p
    return where(keep, x * a, -_ALPHA_PRIME * a) + b


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout for self-normalising (SELU) networks: keeps mean 0 and variance 1."""
    return _alpha_dropout("alpha_dropout", _tensor("alpha_dropout", "input", input), p,
                          training, input.shape)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels."""
    if not training:  # the input as it is, whatever its shape (PyTorch's)
        return _alpha_dropout("feature_alpha_dropout", input, p, training, input.shape)
    shape = _channel_mask_shape("feature_alpha_dropout", input, 0)
    return _alpha_dropout("feature_alpha_dropout", input, p, training, shape)
