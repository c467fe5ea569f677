"""LKJCholesky(dim, concentration): Cholesky factors of LKJ-distributed correlation
matrices."""
from __future__ import annotations

import math
from typing import Any

import shrew
from ..core.shape import Size
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The lower Cholesky factor L of a correlation matrix L L^T whose density is
    proportional to det(L L^T)^(concentration - 1).  Sampled by the onion method
    (Lewandowski, Kurowicka and Joe, 2009): row i is a uniform direction in its first i
    coordinates scaled by the root of a Beta draw, the diagonal taking what remains of
    the unit norm."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.shape
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = shrew.arange(self.dim - 1, dtype=self.concentration.dtype,
                              device=self.concentration.device)
        offset = shrew.cat([offset.new_zeros((1,)), offset])
        # row i (i >= 1) draws its squared off-diagonal norm from Beta(i / 2, c + (D - 1 - i) / 2)
        # (row 0's draw is unused): the onion method's schedule.  torch uses
        # offset + 0.5 for the first parameter, which is right for row 1 only and skews
        # every later row's correlations.
        beta_conc1 = 0.5 * offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, (dim, dim), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with shrew.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = shrew.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                                   device=y.device).tril(-1)
            norm = shrew.linalg.vector_norm(u_normal, dim=-1, keepdim=True)
            # row 0 has no off-diagonal entries: its direction is 0 (not 0 / 0)
            first_row = (shrew.arange(self.dim, device=y.device) == 0).unsqueeze(-1)
            u_hypersphere = where(first_row, 0.0, u_normal / where(first_row, 1.0, norm))
            w = y.sqrt() * u_hypersphere
            tiny = shrew.finfo(w.dtype).tiny
            diag_elems = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + diag_elems.diag_embed()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = shrew.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = shrew.lgamma(alpha) * dm1
        numerator = shrew.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
