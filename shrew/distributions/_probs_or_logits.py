"""The probs-or-logits parametrisation shared by the Bernoulli-like and categorical
families: exactly one of the two is given and stored on the instance (and, where torch
keeps one, as `_param`); the other is a lazy property computed from it on first access, as
in torch.  Families built on another distribution (an inner Categorical, or the base of a
relaxed TransformedDistribution) read both from it."""
from __future__ import annotations

from typing import Any

from ..core.shape import Size
from .._tensor import Tensor
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["BaseDistProbsLogits", "BinaryProbsLogits", "CategoricalProbsLogits",
           "ProbsOrLogitsParam", "expand_given_probs_or_logits",
           "given_probs_or_logits"]


def given_probs_or_logits(probs: Any, logits: Any) -> tuple[str, Any]:
    """("probs", probs) or ("logits", logits), whichever was given; torch asks for exactly
    one."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return ("probs", probs) if probs is not None else ("logits", logits)


def expand_given_probs_or_logits(dist: Any, new: Any, param_shape: Any) -> None:
    """Copies onto `new` whichever of probs and logits `dist` holds (given, or already
    computed), expanded to param_shape; one not yet computed stays lazy on `new` too."""
    for name in ("probs", "logits"):
        if name in dist.__dict__:
            setattr(new, name, getattr(dist, name).expand(param_shape))


class ProbsOrLogitsParam:
    """`_param` (the given one of probs and logits) and what torch derives from it."""
    _param: Tensor

    def _hold_param(self, name: str, value: Tensor) -> None:
        # an instance attribute named probs/logits shadows the class's lazy property
        setattr(self, name, value)
        self._param = value

    def _expand_param_into(self, new: Any, param_shape: Any) -> None:
        """new.probs/new.logits as expand_given_probs_or_logits, and new._param (logits
        when both are held, as torch's expand leaves it)."""
        expand_given_probs_or_logits(self, new, param_shape)
        new._param = new.__dict__["logits"] if "logits" in new.__dict__ else new.probs

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new_tensor(*args, **kwargs)

    @property
    def param_shape(self) -> Size:
        return self._param.size()


class BinaryProbsLogits:
    """probs and logits of a 0/1 variable, each computed from the other when not given."""
    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)


class CategoricalProbsLogits:
    """probs, logits, param_shape and _new of a family built on an inner Categorical
    (`self._categorical`), which holds the parameter and normalises it."""
    _categorical: Any

    def _categorical_shapes(self) -> tuple[Size, Size]:
        """(batch_shape, event_shape) of a K-vector-valued family over the inner
        Categorical: the Categorical's batch shape, and (K,)."""
        return self._categorical.batch_shape, self._categorical.param_shape[-1:]

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._categorical._new(*args, **kwargs)


class BaseDistProbsLogits:
    """temperature, probs and logits of a relaxed family, read from its base distribution
    (the Logit/Exp-relaxed one that holds them)."""
    base_dist: Any

    @property
    def temperature(self) -> Any:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs
