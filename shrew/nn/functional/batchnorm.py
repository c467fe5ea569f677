"""batch_norm as a function: per-channel normalisation with batch or running statistics."""
from __future__ import annotations

from ...autograd.checkpoint import in_recomputation
from ...core.dtype import check_float
from ...core.errors import ArgumentError, ShapeError
from ...core.grad_mode import no_grad
from ...core.shape import fmt
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) of [N, C, ...].

    Training uses the batch statistics and blends them into running_mean / running_var in
    place (unbiased variance, as PyTorch), except while checkpoint recomputes the forward
    pass, so that each step updates them once.  Evaluation uses the running statistics."""
    x = input  # torch's parameter names, short names below
    if _tensor("batch_norm", "input", x).ndim < 2:
        raise ShapeError(f"batch_norm: input must be [N, C, ...], got {fmt(x.shape)}")
    check_float(x.dtype, "batch_norm")
    c = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and _tensor("batch_norm", name, t).shape != (c,):
            raise ShapeError(f"batch_norm: {name} must have shape [{c}] for input "
                             f"{fmt(x.shape)}, got {fmt(t.shape)}")
    if (running_mean is None) != (running_var is None):
        raise ArgumentError("batch_norm: give both running_mean and running_var, or neither")
    stat_shape = (1, c) + (1,) * (x.ndim - 2)
    if training:
        dims = (0,) + tuple(range(2, x.ndim))
        count = x.numel() // c
        if count < 2:
            raise ShapeError(f"batch_norm: training needs more than one value per channel, "
                             f"got input {fmt(x.shape)}")
        mean = x.mean(dims, keepdim=True)
        centred = x - mean
        var = centred.square().mean(dims, keepdim=True)
        if running_mean is not None and running_var is not None and not in_recomputation():
            with no_grad():
                m = momentum
                running_mean.copy_(running_mean * (1 - m) + mean.reshape(c) * m)
                unbiased = var.reshape(c) * (count / (count - 1))
                running_var.copy_(running_var * (1 - m) + unbiased * m)
    else:
        if running_mean is None or running_var is None:
            raise ArgumentError("batch_norm: evaluation (training=False) needs running_mean "
                                "and running_var")
        centred = x - running_mean.reshape(*stat_shape)
        var = running_var.reshape(*stat_shape)
    y = centred / (var + eps).sqrt()
    if weight is not None:
        y = y * weight.reshape(*stat_shape)
    return y if bias is None else y + bias.reshape(*stat_shape)
