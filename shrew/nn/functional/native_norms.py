"""torch's native_layer_norm, native_batch_norm and native_group_norm: the normalisations
with the statistics they save for backward (the mean and 1/sqrt(var + eps)), composed of
reductions.  As PyTorch's, layer and batch norm return those statistics detached, group
norm as differentiable outputs."""
from __future__ import annotations

from collections.abc import Sequence

from ...core.errors import ShapeError
from ...core.grad_mode import no_grad
from ...core.shape import fmt
from ..._tensor import Tensor


def _stats(x: Tensor, dims: tuple[int, ...], eps: float) -> tuple[Tensor, Tensor]:
    mean = x.mean(dims, keepdim=True)
    centred = x - mean
    rstd = ((centred * centred).mean(dims, keepdim=True) + eps).rsqrt()
    return mean, rstd


def native_layer_norm(input: Tensor, normalized_shape: Sequence[int],  # noqa: A002
                      weight: Tensor | None, bias: Tensor | None,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(layer_norm, mean, rstd), the statistics shaped [*lead, 1, ...]."""
    shape = tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape or len(shape) > input.ndim:
        raise ShapeError(f"native_layer_norm: input {fmt(input.shape)} does not end in "
                         f"normalized_shape {list(shape)}")
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    mean, rstd = _stats(input, dims, eps)
    out = (input - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean.detach(), rstd.detach()  # PyTorch's do not require grad


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                      N: int, C: int, HxW: int, group: int,  # noqa: N803
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(group_norm, mean [N, group], rstd [N, group]) of input [N, C, *] (HxW elements
    per channel)."""
    if input.shape[:2] != (N, C) or C % group or input.numel() != N * C * HxW:
        raise ShapeError(f"native_group_norm: input {fmt(input.shape)} must be [N={N}, C={C}, "
                         f"...] with {HxW} elements per channel and C divisible by {group}")
    grouped = input.reshape(N, group, -1)
    mean, rstd = _stats(grouped, (2,), eps)
    out = ((grouped - mean) * rstd).reshape(input.shape)
    affine = (1, C) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(affine)
    if bias is not None:
        out = out + bias.reshape(affine)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                      running_mean: Tensor | None, running_var: Tensor | None,
                      training: bool, momentum: float,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(batch_norm, save_mean, save_invstd): in training the batch's mean and
    1/sqrt(var + eps) per channel (the running statistics updated in place), in eval the
    running statistics and two empty tensors, as PyTorch's CPU kernel."""
    if input.ndim < 2:
        raise ShapeError(f"native_batch_norm: input must be [N, C, ...], got {fmt(input.shape)}")
    c = input.shape[1]
    affine = (1, c) + (1,) * (input.ndim - 2)
    dims = (0, *range(2, input.ndim))
    if training:
        mean, rstd = _stats(input, dims, eps)
        if running_mean is not None and running_var is not None:
            count = input.numel() // c
            with no_grad():
                var = (input - mean).square().sum(dims) / max(count - 1, 1)
                running_mean.mul_(1 - momentum).add_(mean.reshape(c) * momentum)
                running_var.mul_(1 - momentum).add_(var * momentum)
        save_mean, save_invstd = mean.reshape(c).detach(), rstd.reshape(c).detach()
    else:
        if running_mean is None or running_var is None:
            raise ShapeError("native_batch_norm: eval mode needs running_mean and running_var")
        mean = running_mean.reshape(affine)
        rstd = (running_var.reshape(affine) + eps).rsqrt()
        save_mean = save_invstd = input.new_empty((0,))
    out = (input - mean) * rstd
    if weight is not None:
        out = out * weight.reshape(affine)
    if bias is not None:
        out = out + bias.reshape(affine)
    return out, save_mean, save_invstd
