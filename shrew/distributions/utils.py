"""Helpers shared by the distributions, as torch.distributions.utils: broadcasting the
parameters, converting between probabilities and logits, and a cached property."""
from __future__ import annotations

import numbers
from functools import update_wrapper
from typing import Any, Generic, TypeVar, overload
from collections.abc import Callable

import shrew
from ..core.dtype import get_default_dtype
from ..core.errors import ShrewValueError
from .._tensor import Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits", "euler_constant", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """The values broadcast to one shape, numbers made tensors of the first tensor's dtype
    and device (the default dtype where none is a tensor), as torch's broadcast_all."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    for v in values:
        if not isinstance(v, (Tensor, numbers.Number)):
            raise ShrewValueError("broadcast_all: input arguments must be tensors or numbers, "
                                  f"got {type(v).__name__}")
    if tensors:
        dtype, device = tensors[0].dtype, tensors[0].device
    else:
        dtype, device = get_default_dtype(), "cpu"  # type: ignore[assignment]
    # full() rather than tensor(): tensor() rounds a Python float through float32 first
    as_tensors = [v if isinstance(v, Tensor) else shrew.full((), v, dtype=dtype, device=device)
                  for v in values]
    return tuple(shrew.broadcast_tensors(*as_tensors))


def _float_info(t: Tensor) -> Any:
    return shrew.finfo(t.dtype)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities kept inside (0, 1) by the dtype's epsilon, so logs stay finite."""
    eps = _float_info(probs).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: sigmoid for a binary variable, else softmax over the
    last dim."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (clamped away from 0 and 1): log p - log(1 - p) for a
    binary variable, else log p (normalised later by the distribution)."""
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


T = TypeVar("T")
R = TypeVar("R")


class lazy_property(Generic[T, R]):  # noqa: N801 (torch's name)
    """A property computed on first access and then stored on the instance, so that
    distributions given probs compute logits only when asked (and vice versa)."""

    def __init__(self, wrapped: Callable[[T], R]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    @overload
    def __get__(self, instance: None, obj_type: Any = None) -> lazy_property[T, R]: ...

    @overload
    def __get__(self, instance: T, obj_type: Any = None) -> R: ...

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        with shrew.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_mask(n: int, diag: int, device: Any) -> Tensor:
    """The (n, n) bool mask of the entries on or below diagonal `diag`."""
    rows = shrew.arange(n, device=device)
    return rows.unsqueeze(0) < rows.unsqueeze(1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries of the last two dims on or below diagonal `diag`, row by row."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    mask = _tril_mask(n, diag, mat.device)
    return mat[..., mask]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of tril_matrix_to_vec: a square matrix holding `vec` on and below
    diagonal `diag`, zeros elsewhere."""
    # n (n + 1) / 2 + diag n = size, solved for n (diag is negative or zero here)
    size = vec.shape[-1]
    n = round((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * size + 4 * abs(diag)
                                  * (diag + 1)) ** 0.5) / 2)
    if n <= 0 or int(_tril_mask(n, diag, "cpu").sum()) != size:
        raise ValueError(f"The size of last dimension is {size} which cannot be expressed "
                         f"as the lower triangular part of a square D x D matrix.")
    mask = _tril_mask(n, diag, vec.device).reshape(-1)
    flat_index = shrew.arange(n * n, device=vec.device)[mask]
    out = vec.new_zeros(tuple(vec.shape[:-1]) + (n * n,))
    index = flat_index.expand(tuple(vec.shape[:-1]) + (size,))
    return out.scatter(-1, index, vec).reshape(tuple(vec.shape[:-1]) + (n, n))
