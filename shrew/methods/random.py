"""Tensor's sampling methods (ops/random.py): multinomial and bernoulli."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ops import random as _random

if TYPE_CHECKING:
    from .._tensor import Tensor


class RandomMethods:
    """Draws that take their probabilities from the tensor."""

    __slots__ = ()

    def multinomial(self: Any, num_samples: int, replacement: bool = False, *,
                    generator: Any = None) -> Tensor:
        return _random.multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli(self: Any, p: float | None = None, *, generator: Any = None) -> Tensor:
        return _random.bernoulli(self, p, generator=generator)
