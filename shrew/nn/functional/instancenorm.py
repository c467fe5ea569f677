"""instance_norm as a function: each channel of each sample normalised over its positions."""
from __future__ import annotations

from ...autograd.checkpoint import in_recomputation
from ...core.errors import ArgumentError, ShapeError
from ...core.grad_mode import no_grad
from ...core.shape import fmt
from ...ops.norm import standardize
from ..._tensor import Tensor
from .normalization import _affine, _check_channels


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample of [N, C, ...] over its positions.  With
    use_input_stats the running statistics (if given) take the batch's mean of the
    per-instance statistics (unbiased variance); without, they normalise instead."""
    op = "instance_norm"
    c = _check_channels(op, input, running_mean=running_mean, running_var=running_var,
                        weight=weight, bias=bias)
    if input.ndim < 3:
        raise ShapeError(f"{op}: input must be [N, C, ...] with positions, got "
                         f"{fmt(input.shape)}")
    n = input.shape[0]
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ArgumentError(f"{op}: use_input_stats=False needs running_mean and running_var")
        shape = (1, c) + (1,) * (input.ndim - 2)
        y = (input - running_mean.reshape(*shape)) / (running_var.reshape(*shape) + eps).sqrt()
        return _affine(y, weight, bias)
    flat = input.reshape(n, c, -1)
    y = standardize(flat, 1, eps).reshape(*input.shape)
    if running_mean is not None and running_var is not None and not in_recomputation():
        count = flat.shape[2]
        with no_grad():
            mean = flat.mean(2)
            var = (flat - mean.unsqueeze(2)).square().sum(2) * (1.0 / max(count - 1, 1))
            running_mean.copy_(running_mean * (1 - momentum) + mean.mean(0) * momentum)
            running_var.copy_(running_var * (1 - momentum) + var.mean(0) * momentum)
    return _affine(y, weight, bias)
