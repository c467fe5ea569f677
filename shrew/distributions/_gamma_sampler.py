"""Standard-gamma draws and their implicit reparameterisation gradient (torch's
_standard_gamma and _standard_gamma_grad), shared by Gamma, Chi2, Beta, Dirichlet and
StudentT.

Drawing: Marsaglia and Tsang's squeeze-rejection method, run on whole tensors on the
device: each round proposes for every element, and keeps the first accepted proposal
where none was accepted yet (a mask), until every element has one.  Concentrations below
1 are boosted: Gamma(a) = Gamma(a + 1) * U^(1/a), computed in log space.

Gradient: a draw x = F^-1(u; a) for the gamma CDF F, so with u held fixed
dx/da = -(dF/da)(x; a) / f(x; a), f the density.  dF/da is the derivative of the
regularised lower incomplete gamma function in its first argument; it is computed by a
Richardson-extrapolated central difference of shrew.igamma (or of igammac, whichever of
the two is the smaller, so the difference does not cancel), in float64 where the device
has it."""
from __future__ import annotations

import shrew
from ..autograd import Function, FunctionCtx
from ..backends import registry
from ..core.errors import StateError
from ..ops.elementwise.recorded import where
from .._tensor import Tensor

_ROUNDS_PER_CHECK = 4  # rounds between host reads of "all accepted?"
_MAX_ROUNDS = 400  # each round accepts with probability > 0.95: never reached in practice


def _standard_gamma_at_least_one(alpha: Tensor) -> Tensor:
    """Gamma(alpha, 1) draws for alpha >= 1, by Marsaglia-Tsang rejection."""
    d = alpha - 1.0 / 3.0
    c = (9.0 * d).rsqrt()
    result = shrew.zeros_like(alpha)
    done = shrew.zeros(alpha.shape, dtype=shrew.bool, device=alpha.device)
    for round_ in range(1, _MAX_ROUNDS + 1):
        z = shrew.randn(alpha.shape, dtype=alpha.dtype, device=alpha.device)
        u = shrew.rand(alpha.shape, dtype=alpha.dtype, device=alpha.device)
        v = 1.0 + c * z
        positive = v > 0
        v3 = where(positive, v, shrew.ones_like(v)) ** 3
        accept = positive & ((1.0 - u).log() < 0.5 * z * z + d - d * v3 + d * v3.log())
        take = accept & ~done
        result = where(take, d * v3, result)
        done = done | accept
        if round_ % _ROUNDS_PER_CHECK == 0 and bool(done.all()):
            return result
    raise StateError("_standard_gamma: rejection sampling did not finish; "
                     "are some concentrations nan?")


def standard_gamma(alpha: Tensor) -> Tensor:
    """Gamma(alpha, 1) draws of alpha's shape, dtype and device (not differentiable),
    kept at least the dtype's smallest normal number, as torch's."""
    with shrew.no_grad():
        alpha = alpha.detach()
        if alpha.numel() == 0:
            return shrew.zeros_like(alpha)
        small = alpha < 1
        boosted = where(small, alpha + 1, alpha)
        draws = _standard_gamma_at_least_one(boosted)
        u = shrew.rand(alpha.shape, dtype=alpha.dtype, device=alpha.device)
        # U^(1/a) in log space: for tiny a it underflows only at the very end
        log_boost = (1.0 - u).log() / alpha
        draws = where(small, (draws.log() + log_boost).exp(), draws)
        return draws.clamp(min=shrew.finfo(alpha.dtype).tiny)


def _wide(t: Tensor) -> Tensor:
    """t in float64 where its device has it, else as it is."""
    backend = registry.get_backend(t.device)
    if shrew.float64.np in backend.dtypes:
        return t.to(dtype=shrew.float64)
    return t


def _cdf_difference(alpha: Tensor, x: Tensor, h: Tensor, upper: Tensor) -> Tensor:
    """The central difference (F(a + h) - F(a - h)) / 2h of the gamma CDF in a, taken
    on igammac (the upper tail, negated) where `upper`."""
    lower = (shrew.igamma(alpha + h, x) - shrew.igamma(alpha - h, x)) / (2 * h)
    tail = -(shrew.igammac(alpha + h, x) - shrew.igammac(alpha - h, x)) / (2 * h)
    return where(upper, tail, lower)


def standard_gamma_grad(alpha: Tensor, x: Tensor) -> Tensor:
    """dx/dalpha for a Gamma(alpha, 1) draw x: -(dF/dalpha) / f(x) (see the module)."""
    with shrew.no_grad():
        a, xs = _wide(alpha.detach()), _wide(x.detach())
        upper = shrew.igamma(a, xs) > 0.5
        h = 1e-3 * a
        coarse = _cdf_difference(a, xs, h, upper)
        fine = _cdf_difference(a, xs, h / 2, upper)
        dcdf_da = (4 * fine - coarse) / 3  # Richardson: cancels the h^2 error term
        log_density = (a - 1) * xs.log() - xs - shrew.lgamma(a)
        grad = -dcdf_da / log_density.exp()
        return grad.to(dtype=x.dtype)


class _StandardGamma(Function):
    """A Gamma(alpha, 1) draw whose gradient in alpha is the implicit one."""

    @staticmethod
    def forward(ctx: FunctionCtx, alpha: Tensor) -> Tensor:
        x = standard_gamma(alpha)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output: Tensor) -> Tensor:
        x, alpha = ctx.saved_tensors
        assert x is not None and alpha is not None
        return grad_output * standard_gamma_grad(alpha, x)


def rsample_standard_gamma(alpha: Tensor) -> Tensor:
    """Gamma(alpha, 1) draws, differentiable in alpha through the implicit gradient."""
    return _StandardGamma.apply(alpha)
