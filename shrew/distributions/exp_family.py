"""ExponentialFamily: distributions whose density is exp(<t(x), theta> - F(theta) + k(x)),
as torch's.  Subclasses give their natural parameters and log normaliser F; the entropy
and the generic KL divergence (kl.py) follow from them by autograd."""
from __future__ import annotations

import shrew
from .._tensor import Tensor
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base of the exponential-family distributions."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        """The natural parameters theta."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        """F(theta), the log normaliser, from the natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Tensor | float:
        """E[k(x)], the expected carrier measure."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy from the Bregman divergence of the log normaliser:
        F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        result: Tensor | float = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with shrew.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = shrew.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            assert g is not None  # every natural parameter enters the log normaliser
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        assert isinstance(result, Tensor)
        return result
