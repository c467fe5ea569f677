"""Wishart(df, covariance_matrix= | precision_matrix= | scale_tril=)."""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import shrew
from ..core.shape import Size
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from ._scale_matrix import ScaleTrilMatrices, given_scale_matrix

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma: sum_{i<p} digamma(x - i / 2)."""
    offsets = shrew.arange(p, dtype=x.dtype, device=x.device) / 2
    return shrew.digamma(x.unsqueeze(-1) - offsets).sum(-1)


class Wishart(ScaleTrilMatrices, ExponentialFamily):
    """The Wishart distribution over p x p positive-definite matrices, with df degrees of
    freedom (> p - 1) and scale matrix given by exactly one of covariance_matrix,
    precision_matrix or scale_tril.  rsample is Bartlett's decomposition: L A A^T L^T with
    A lower triangular, chi draws on its diagonal and normal ones below; differentiable in
    df through the implicit gamma gradient.  Singular draws (likely only for df < p) are
    redrawn up to max_try_correction times."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df: Any, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        name, param = given_scale_matrix(covariance_matrix, precision_matrix, scale_tril)
        if param.ndim < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Real):
            batch_shape = Size(param.shape[:-2])
            self.df = shrew.full((), float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(shrew.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = Size(param.shape[-2:])
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        self._hold_scale_matrix(name, param, batch_shape)
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._factor_scale_matrix(name, param)
        self._dist_chi2 = self._chi2()

    def _chi2(self) -> Chi2:
        """Chi2(df - i) for i < p: the squares of Bartlett's diagonal."""
        offsets = shrew.arange(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype,
                               device=self._unbroadcasted_scale_tril.device)
        return Chi2(self.df.unsqueeze(-1) - offsets.expand(tuple(self._batch_shape) + (-1,)))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        self._expand_held_matrices_into(new, cov_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2()
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return tuple(self._batch_shape) + tuple(self._event_shape)

    def _df_matrix(self) -> Tensor:
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self) -> Tensor:
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = where(factor <= 0, float("nan"), factor)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        V = self.covariance_matrix  # noqa: N806
        diag = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: Size) -> Tensor:
        eps = shrew.finfo(self.df.dtype).eps
        chi = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        normals = shrew.randn(tuple(sample_shape) + self._matrix_shape(), dtype=chi.dtype,
                              device=chi.device).tril(-1)
        noise = normals + chi.diag_embed()
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def rsample(self, sample_shape: Any = (), max_try_correction: int | None = None) -> Tensor:
        sample_shape = Size(sample_shape)
        tries = 10 if max_try_correction is None else max_try_correction
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(tries):
                redraw = self._bartlett_sampling(sample_shape)
                sample = where(singular.unsqueeze(-1).unsqueeze(-1), redraw, sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril  # noqa: N806
        half_log_det = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # tr(S^-1 X) = tr(L^-1 X L^-T), by two triangular solves over the common batch
        batch = shrew.broadcast_shapes(tuple(L.shape[:-2]), tuple(value.shape[:-2]))
        L_full = L.expand(tuple(batch) + (p, p))  # noqa: N806
        half = shrew.linalg.solve_triangular(L_full, value.expand(tuple(batch) + (p, p)),
                                             upper=False)
        whitened = shrew.linalg.solve_triangular(L_full, half.mT, upper=False)
        trace = whitened.diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + half_log_det) - shrew.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * shrew.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self) -> Tensor:
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det) + shrew.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x, y = natural_params
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-shrew.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + shrew.mvlgamma(y + (p + 1) / 2, p=p))
