"""The named tuples that ops returning two tensors give back, as torch.return_types:
fields by name (``.values``, ``.indices``) or by position, and unpacking."""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .tensor import Tensor


class max(NamedTuple):  # noqa: N801  (torch.return_types' names)
    values: Tensor
    indices: Tensor


class min(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class sort(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class topk(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class kthvalue(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class median(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class nanmedian(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class mode(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class cummax(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class cummin(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class aminmax(NamedTuple):  # noqa: N801
    min: Tensor
    max: Tensor
