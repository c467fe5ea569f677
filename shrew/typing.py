"""Type aliases used in shrew's annotations, for code that annotates its own calls.

    from shrew.typing import DTypeLike, Scalar

They are plain unions: any value of a member type is accepted.
"""
from __future__ import annotations

from collections.abc import Sequence
from types import EllipsisType
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from .core.dtype import DType

if TYPE_CHECKING:
    from ._tensor import Tensor

Scalar: TypeAlias = int | float | bool
"""A Python number: an operand that combines with a tensor elementwise.  (numpy scalars
are accepted too, and count by their kind.)"""

DTypeLike: TypeAlias = DType | str | type | np.dtype
"""What ``dtype=`` accepts: a shrew dtype, a numpy dtype, a name such as ``"float32"``, or
the Python types ``float``, ``int`` and ``bool``."""

DeviceLike: TypeAlias = str
"""What ``device=`` accepts: a name such as ``"cpu"`` or ``"opencl:1"``."""

ShapeLike: TypeAlias = int | Sequence[int]
"""One argument of ``zeros(*shape)``, ``reshape(*shape)``, ...: sizes are given either as
several ints or as one sequence of ints."""

IntOrPair: TypeAlias = int | Sequence[int]
"""A kernel size, stride or padding of a 2-d operation: one int for both dims, or a pair."""

Dims: TypeAlias = int | Sequence[int] | None
"""The ``dim=`` of reductions and ``squeeze``: one dim, several, or ``None`` for all."""

IndexItem: TypeAlias = "int | bool | slice | None | EllipsisType | Tensor | Sequence[Any]"
"""One component of ``t[...]``: an int, a slice (positive step), ``None``, ``...``, an
integer or bool tensor, or a (nested) list of ints or bools."""

Index: TypeAlias = "IndexItem | tuple[IndexItem, ...]"
"""What ``Tensor.__getitem__`` accepts."""

TensorData: TypeAlias = "Tensor | np.ndarray | np.generic | Scalar | Sequence[Any]"
"""What ``shrew.tensor`` accepts: a tensor, a numpy array or scalar, a Python number or
nested lists of numbers."""

__all__ = ["DeviceLike", "DTypeLike", "Dims", "Index", "IndexItem", "IntOrPair", "Scalar",
           "ShapeLike",
           "TensorData"]
