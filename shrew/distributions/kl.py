"""kl_divergence(p, q) and register_kl, as torch.distributions.kl: a registry of closed
forms keyed by the pair of distribution types, dispatched to the most specific
registered pair (by the classes' method resolution order).

Same-family pairs use their textbook closed forms.  Most cross-family pairs are written
as KL(p || q) = -H(p) + CE(p, q), the cross entropy CE = -E_p[log q(x)] computed from the
moments of p that the density of q needs (E[x], E[x^2], E[log x], E[log(1 - x)]); it is
infinite where q's support does not cover p's.  Where torch registers a pair, so does
this module."""
from __future__ import annotations

import math
import warnings
from functools import total_ordering
from typing import Any
from collections.abc import Callable

import shrew
import shrew.nn.functional as F
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import _sum_rightmost
from .uniform import Uniform
from .utils import euler_constant

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict[tuple[type, type], Callable[..., Any]] = {}
_KL_MEMOIZE: dict[tuple[type, type], Any] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator that registers a function computing KL(p || q) for p of type_p and q
    of type_q (subclasses included, the most specific registration winning)."""
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun: Callable[..., Any]) -> Callable[..., Any]:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # reset since lookup order may have changed
        return fun

    return decorator


@total_ordering
class _Match:
    """A registered (type_p, type_q) pair, ordered so that the most specific comes first:
    one pair is below another when each of its types is a subclass of the other's,
    compared left to right."""
    __slots__ = ["types"]

    def __init__(self, *types: type) -> None:
        self.types = types

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Match) and self.types == other.types

    def __le__(self, other: _Match) -> bool:
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    """The registered function of the most specific pair matching (type_p, type_q), or
    NotImplemented; warns when p-first and q-first specificity disagree."""
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=3)
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) = E_p[log p(x) - log q(x)], one value per batch member.  Raises
    NotImplementedError when no pair of their types is registered."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


# -- helpers ---------------------------------------------------------------------------
def _infinite_like(t: Tensor) -> Tensor:
    return shrew.full_like(t, float("inf"))


def _inf_where(mask: Tensor, value: Tensor) -> Tensor:
    """value, infinite where mask."""
    return where(mask, _infinite_like(value), value)


def _zero_where(mask: Tensor, value: Tensor) -> Tensor:
    """value, 0 where mask: a term p gives no mass to adds nothing, even where q's log is
    infinite."""
    return where(mask, shrew.zeros_like(value), value)


def _x_log_x(t: Tensor) -> Tensor:
    """x log x, 0 at x = 0."""
    return shrew.xlogy(t, t)


def _lbeta(a: Tensor, b: Tensor) -> Tensor:
    return shrew.lgamma(a) + shrew.lgamma(b) - shrew.lgamma(a + b)


# Cross entropies -E_p[log q(x)] from p's moments, one per family of q.
def _ce_normal(mean: Tensor, variance: Tensor, q: Normal) -> Tensor:
    var_q = q.scale.pow(2)
    return 0.5 * (2 * math.pi * var_q).log() + (variance + (mean - q.loc).pow(2)) / (2 * var_q)


def _ce_exponential(mean: Tensor, q: Exponential) -> Tensor:
    return q.rate * mean - q.rate.log()


def _ce_gamma(mean: Tensor, mean_log: Tensor, q: Gamma) -> Tensor:
    a, b = q.concentration, q.rate
    return shrew.lgamma(a) - a * b.log() - (a - 1) * mean_log + b * mean


def _ce_beta(mean_log: Tensor, mean_log1m: Tensor, q: Beta) -> Tensor:
    c1, c0 = q.concentration1, q.concentration0
    return _lbeta(c1, c0) - (c1 - 1) * mean_log - (c0 - 1) * mean_log1m


def _ce_gumbel(mean: Tensor, mean_exp: Tensor, q: Gumbel) -> Tensor:
    """-E_p[log q(x)] for a Gumbel q, from E_p[x] and E_p[exp(-x / scale_q)]."""
    return (q.scale.log() + (mean - q.loc) / q.scale
            + (q.loc / q.scale).exp() * mean_exp)


def _ce_continuous_bernoulli(mean: Tensor, q: ContinuousBernoulli) -> Tensor:
    """-E_p[log q(x)] for a ContinuousBernoulli q: log q(x) = x logit + log(1 - p) + log C."""
    return -mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


def _ce_pareto(mean_log: Tensor, q: Pareto) -> Tensor:
    """-E_p[log q(x)] for a Pareto q on x >= scale_q, from E_p[log x]."""
    return -q.alpha.log() - q.alpha * q.scale.log() + (q.alpha + 1) * mean_log


# E[log x] and E[log(1 - x)] under p, for the families used as p above.
def _beta_mean_logs(p: Beta) -> tuple[Tensor, Tensor]:
    total = shrew.digamma(p.concentration1 + p.concentration0)
    return shrew.digamma(p.concentration1) - total, shrew.digamma(p.concentration0) - total


def _uniform_mean_log(p: Uniform) -> Tensor:
    width = p.high - p.low
    return (_x_log_x(p.high) - _x_log_x(p.low)) / width - 1


def _uniform_mean_log1m(p: Uniform) -> Tensor:
    width = p.high - p.low
    return (_x_log_x(1 - p.low) - _x_log_x(1 - p.high)) / width - 1


# -- same family -----------------------------------------------------------------------
@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = _zero_where(p.probs == 0, _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = _zero_where(p.probs == 1, _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    mean_log, mean_log1m = _beta_mean_logs(p)
    return -p.entropy() + _ce_beta(mean_log, mean_log1m, q)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    # Infinite where p has more trials than q (p's support is wider); a closed form exists
    # only for equal counts, and fewer trials in p is left unimplemented, as in torch.
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = _zero_where((p.probs == 0).expand_as(t), _inf_where((q.probs == 0).expand_as(t), t))
    return t.sum(-1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = shrew.lgamma(sum_p) - shrew.lgamma(sum_q)
    t2 = (shrew.lgamma(p.concentration) - shrew.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = shrew.digamma(p.concentration) - shrew.digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    # The Bregman divergence of the log normaliser F between the natural parameters:
    # F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>.
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_nparams = [n.detach().requires_grad_() for n in p._natural_params]
    q_nparams = q._natural_params
    with shrew.enable_grad():
        lg_normal = p._log_normalizer(*p_nparams)
        gradients = shrew.autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        assert g is not None
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    mean_log = shrew.digamma(p.concentration) - p.rate.log()
    return -p.entropy() + _ce_gamma(p.mean, mean_log, q)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    # E_p[log q(k)] = E[k] log(1 - q) + log q with E[k] = 1/p - 1
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


def _gaussian_kl(p_loc: Tensor, p_tril: Tensor, q_loc: Tensor, q_tril: Tensor) -> Tensor:
    """KL between N(p_loc, Lp Lp^T) and N(q_loc, Lq Lq^T) from the Cholesky factors:
    log det Lq - log det Lp + (|Lq^-1 Lp|_F^2 + |Lq^-1 (q_loc - p_loc)|^2 - n) / 2."""
    n = p_loc.shape[-1]
    half_log_det = (q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                    - p_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    batch = shrew.broadcast_shapes(tuple(q_tril.shape[:-2]), tuple(p_tril.shape[:-2]))
    q_full = q_tril.expand(tuple(batch) + (n, n))
    p_full = p_tril.expand(tuple(batch) + (n, n))
    trace = shrew.linalg.solve_triangular(q_full, p_full, upper=False).pow(2).sum((-2, -1))
    mahalanobis = _batch_mahalanobis(q_tril, q_loc - p_loc)
    return half_log_det + 0.5 * (trace + mahalanobis - n)


def _check_same_event(p: Distribution, q: Distribution, names: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {names} with different event shapes "
                         "cannot be computed")


def _gaussian_scale_tril(d: MultivariateNormal | LowRankMultivariateNormal) -> Tensor:
    """The Cholesky factor of d's covariance, unbroadcast where d keeps one."""
    if isinstance(d, MultivariateNormal):
        return d._unbroadcasted_scale_tril
    # The low-rank family goes through the dense factor of its covariance: O(n^3) where
    # torch's Woodbury forms are O(n m^2).
    return d.scale_tril


def _kl_gaussians(p: MultivariateNormal | LowRankMultivariateNormal,
                  q: MultivariateNormal | LowRankMultivariateNormal, names: str) -> Tensor:
    _check_same_event(p, q, names)
    return _gaussian_kl(p.loc, _gaussian_scale_tril(p), q.loc, _gaussian_scale_tril(q))


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    return _kl_gaussians(p, q, "Multivariate Normals")


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p: LowRankMultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    return _kl_gaussians(p, q, "Low Rank Multivariate Normals")


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_mvn_lowrank(p: MultivariateNormal | LowRankMultivariateNormal,
                    q: MultivariateNormal | LowRankMultivariateNormal) -> Tensor:
    return _kl_gaussians(p, q, "(Low Rank) Multivariate Normals")


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: OneHotCategorical,
                                            q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution,
                                q: TransformedDistribution) -> Tensor:
    # Equal bijections leave the KL unchanged: the base distributions' KL.
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    # Chyzak and Nielsen (2019): log(((s_p + s_q)^2 + (l_p - l_q)^2) / (4 s_p s_q))
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


# -- different families ----------------------------------------------------------------
# Pairs whose KL is p's entropy against q's cross entropy from p's mean (and variance)
# alone, whatever p's family.
@register_kl(Beta, Normal)
@register_kl(ContinuousBernoulli, Normal)
@register_kl(Exponential, Normal)
@register_kl(Gamma, Normal)
@register_kl(Gumbel, Normal)
@register_kl(Laplace, Normal)
@register_kl(Uniform, Normal)
def _kl_by_moments_normal(p: Distribution, q: Normal) -> Tensor:
    return -p.entropy() + _ce_normal(p.mean, p.variance, q)


@register_kl(Beta, Exponential)
@register_kl(ContinuousBernoulli, Exponential)
@register_kl(Gamma, Exponential)
def _kl_by_mean_exponential(p: Distribution, q: Exponential) -> Tensor:
    return -p.entropy() + _ce_exponential(p.mean, q)


# p puts mass on the whole real line; q's support leaves part of it out.
@register_kl(Gumbel, Beta)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
@register_kl(Laplace, Beta)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Uniform)
@register_kl(Normal, Beta)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Uniform)
def _kl_real_line_infinity(p: Gumbel | Laplace | Normal, q: Distribution) -> Tensor:
    return _infinite_like(p.loc)


# p's support is unbounded above; q's is bounded.
@register_kl(Exponential, Beta)
@register_kl(Exponential, Uniform)
@register_kl(Gamma, Beta)
@register_kl(Gamma, Uniform)
@register_kl(Pareto, Beta)
@register_kl(Pareto, Uniform)
@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_unbounded_above_infinity(p: Distribution, q: Distribution) -> Tensor:
    return _infinite_like(p.mean)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Bernoulli, q: Poisson) -> Tensor:
    # log k! is 0 on {0, 1}
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Beta, q: Gamma) -> Tensor:
    return -p.entropy() + _ce_gamma(p.mean, _beta_mean_logs(p)[0], q)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Beta, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > 0) | (q.high < 1), result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Exponential, q: Gamma) -> Tensor:
    mean_log = -euler_constant - p.rate.log()
    return -p.entropy() + _ce_gamma(p.mean, mean_log, q)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Normal, q: Laplace) -> Tensor:
    # E_p|x - loc_q| for x ~ N(loc_p, s^2): s sqrt(2/pi) exp(-d^2 / 2s^2) + d erf(d / s sqrt 2)
    d = p.loc - q.loc
    mean_abs = (math.sqrt(2 / math.pi) * p.scale * (-0.5 * (d / p.scale).pow(2)).exp()
                + d * (d / (p.scale * math.sqrt(2))).erf())
    return -p.entropy() + (2 * q.scale).log() + mean_abs / q.scale


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Uniform, q: Beta) -> Tensor:
    result = -p.entropy() + _ce_beta(_uniform_mean_log(p), _uniform_mean_log1m(p), q)
    return _inf_where((p.high > 1) | (p.low < 0), result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p: Uniform, q: Exponential) -> Tensor:
    return _inf_where(p.low < 0, -p.entropy() + _ce_exponential(p.mean, q))


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Uniform, q: Gamma) -> Tensor:
    result = -p.entropy() + _ce_gamma(p.mean, _uniform_mean_log(p), q)
    return _inf_where(p.low < 0, result)


# -- Gumbel and Pareto -----------------------------------------------------------------
@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    # E[exp(-x / s)] for x = loc + scale * G, G standard Gumbel: exp(-loc / s) Gamma(1 + scale / s)
    mean_exp = (-p.loc / q.scale + shrew.lgamma(1 + p.scale / q.scale)).exp()
    return -p.entropy() + _ce_gumbel(p.mean, mean_exp, q)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Exponential, q: Gumbel) -> Tensor:
    rate_scale = p.rate * q.scale
    return -p.entropy() + _ce_gumbel(p.mean, rate_scale / (rate_scale + 1), q)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Gamma, q: Gumbel) -> Tensor:
    mean_exp = (1 + (p.rate * q.scale).reciprocal()).pow(-p.concentration)
    return -p.entropy() + _ce_gumbel(p.mean, mean_exp, q)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p: Normal, q: Gumbel) -> Tensor:
    mean_exp = (-p.loc / q.scale + 0.5 * (p.scale / q.scale).pow(2)).exp()
    return -p.entropy() + _ce_gumbel(p.mean, mean_exp, q)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p: Uniform, q: Gumbel) -> Tensor:
    mean_exp = q.scale * ((-p.low / q.scale).exp() - (-p.high / q.scale).exp()) / (p.high - p.low)
    return -p.entropy() + _ce_gumbel(p.mean, mean_exp, q)


def _pareto_mean_log(p: Pareto) -> Tensor:
    return p.scale.log() + p.alpha.reciprocal()


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    result = -p.entropy() + _ce_pareto(_pareto_mean_log(p), q)
    return _inf_where(p.scale < q.scale, result)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p: Pareto, q: Exponential) -> Tensor:
    return _inf_where(p.alpha <= 1, -p.entropy() + _ce_exponential(p.mean, q))


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p: Pareto, q: Gamma) -> Tensor:
    result = -p.entropy() + _ce_gamma(p.mean, _pareto_mean_log(p), q)
    return _inf_where(p.alpha <= 1, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p: Pareto, q: Normal) -> Tensor:
    return _inf_where(p.alpha <= 2, -p.entropy() + _ce_normal(p.mean, p.variance, q))


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p: Uniform, q: Pareto) -> Tensor:
    result = -p.entropy() + _ce_pareto(_uniform_mean_log(p), q)
    return _inf_where(p.low < q.scale, result)


@register_kl(Beta, Pareto)
@register_kl(Exponential, Pareto)
@register_kl(Gamma, Pareto)
@register_kl(Laplace, Pareto)
@register_kl(Normal, Pareto)
def _kl_infinity_pareto(p: Distribution, q: Pareto) -> Tensor:
    return _infinite_like(p.mean)  # p reaches below any Pareto's scale


# -- ContinuousBernoulli ---------------------------------------------------------------
@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Tensor:
    return -p.entropy() + _ce_continuous_bernoulli(p.mean, q)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_cb(p: Beta, q: ContinuousBernoulli) -> Tensor:
    return -p.entropy() + _ce_continuous_bernoulli(p.mean, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p: Uniform, q: ContinuousBernoulli) -> Tensor:
    result = -p.entropy() + _ce_continuous_bernoulli(p.mean, q)
    # as torch: infinite unless p lies strictly inside (0, 1)
    return _inf_where((p.high >= 1) | (p.low <= 0), result)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    # as torch: infinite unless q's interval strictly contains [0, 1]
    return _inf_where((q.low >= 0) | (q.high <= 1), result)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_cb_infinity(p: ContinuousBernoulli, q: Distribution) -> Tensor:
    return _infinite_like(p.probs)


@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Pareto, ContinuousBernoulli)
def _kl_infinity_cb(p: Distribution, q: ContinuousBernoulli) -> Tensor:
    return _infinite_like(p.mean)  # p reaches outside [0, 1]
