"""einops' layers as shrew modules: ``Rearrange``, ``Reduce`` and ``EinMix``.

The same classes as ``einops.layers.torch`` (einops' mixins hold the patterns and their
recipes), built on :class:`shrew.nn.Module` so that they sit in ``nn.Sequential``, are
found by ``parameters()`` and ``state_dict()``, and move with ``.to()``.
"""
from __future__ import annotations

from typing import Any

from einops.layers import RearrangeMixin, ReduceMixin
from einops.layers._einmix import _EinmixMixin

import shrew
from shrew import nn

__all__ = ["EinMix", "Rearrange", "Reduce"]


class Rearrange(RearrangeMixin, nn.Module):
    """``einops.rearrange`` as a layer: ``Rearrange("b c h w -> b (c h w)")``."""

    def forward(self, input: shrew.Tensor) -> shrew.Tensor:
        return self._apply_recipe(input)


class Reduce(ReduceMixin, nn.Module):
    """``einops.reduce`` as a layer: ``Reduce("b c h w -> b c", "mean")``."""

    def forward(self, input: shrew.Tensor) -> shrew.Tensor:
        return self._apply_recipe(input)


class EinMix(_EinmixMixin, nn.Module):
    """einops' linear layer over named axes, e.g. ``EinMix("b t c -> b t d",
    weight_shape="c d", bias_shape="d", c=16, d=32)``."""

    def _create_parameters(self, weight_shape: list[int], weight_bound: float,
                           bias_shape: list[int] | None, bias_bound: float) -> None:
        # the same uniform bounds as einops' torch layer
        self.weight = nn.Parameter(shrew.zeros(weight_shape).uniform_(-weight_bound,
                                                                       weight_bound))
        self.bias = (None if bias_shape is None else
                     nn.Parameter(shrew.zeros(bias_shape).uniform_(-bias_bound, bias_bound)))

    def _create_rearrange_layers(self, pre_reshape_pattern: str | None,
                                 pre_reshape_lengths: dict[str, Any] | None,
                                 post_reshape_pattern: str | None,
                                 post_reshape_lengths: dict[str, Any] | None) -> None:
        self.pre_rearrange = (None if pre_reshape_pattern is None else
                              Rearrange(pre_reshape_pattern, **(pre_reshape_lengths or {})))
        self.post_rearrange = (None if post_reshape_pattern is None else
                               Rearrange(post_reshape_pattern, **(post_reshape_lengths or {})))

    def forward(self, input: shrew.Tensor) -> shrew.Tensor:
        if self.pre_rearrange is not None:
            input = self.pre_rearrange(input)
        result = shrew.einsum(self.einsum_pattern, input, self.weight)
        if self.bias is not None:
            result = result + self.bias
        if self.post_rearrange is not None:
            result = self.post_rearrange(result)
        return result
