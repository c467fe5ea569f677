"""torch.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal, registered
with parametrize.register_parametrization under PyTorch's names (`original0`/`original1`
for weight_norm's g and v; spectral_norm's `_u`/`_v` and orthogonal's `base` buffers in
`parametrizations.<name>.0`), so PyTorch's state dicts of such models load."""
from __future__ import annotations

import math

import numpy as np

from ...core.errors import ShrewIndexError, ShrewValueError, UnsupportedError
from ...core.grad_mode import no_grad
from ...ops.creation import eye, zeros, zeros_like
from ...ops.random import randn
from ...ops.shape.recorded import cat
from ...ops.linalg.decompositions import qr, solve
from ..._tensor import Tensor
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """torch.norm_except_dim(v, 2, dim): the 2-norm over every dim but dim (kept, size 1);
    dim == -1 means over everything (a 0-d result)."""
    if dim == -1:
        return (v * v).sum().sqrt()
    d = dim % v.ndim
    return (v * v).sum(tuple(i for i in range(v.ndim) if i != d), keepdim=True).sqrt()


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """w = g * v / ||v||: the magnitude g (norm over every dim but `dim`; dim=None: one
    norm) and the direction v become parametrizations.<name>.original0 / original1."""
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    _u: Tensor
    _v: Tensor

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise ShrewIndexError("Dimension out of range (expected to be in range of "
                                  f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ShrewValueError("Expected n_power_iterations to be positive, but got "
                                  f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = randn(h, dtype=weight.dtype, device=weight.device)
            v = randn(w, dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # Start from a good estimate of the top singular vectors, as torch does.
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                # In place: the buffers are the state a state_dict saves.
                self._u.copy_(F.normalize(weight_mat @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(weight_mat.mT @ self._u, dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (weight_mat @ v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """w / sigma(w), sigma the largest singular value estimated by power iteration (one
    step per training forward); dim defaults to 1 for ConvTranspose layers, else 0."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ShrewValueError(f"Module '{module}' has no parameter or buffer with name "
                              f"'{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# -- orthogonal ---------------------------------------------------------------------------
_MAPS = ("matrix_exp", "cayley", "householder")


def _matrix_exp(a: Tensor) -> Tensor:
    """exp(a) by scaling and squaring a degree-18 Taylor series, composed of matmuls so
    that it is differentiable on every backend."""
    with no_grad():
        norm = float(a.abs().sum(-1).max().item()) if a.numel() else 0.0
    squarings = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0 else 0
    a = a / (2.0 ** squarings)
    ident = eye(a.shape[-1], dtype=a.dtype, device=a.device)
    term, total = ident + zeros_like(a), ident + zeros_like(a)
    for k in range(1, 19):
        term = (term @ a) / k
        total = total + term
    for _ in range(squarings):
        total = total @ total
    return total


def _householder_product(a: Tensor, tau: Tensor) -> Tensor:
    """torch.linalg.householder_product: H_1 ... H_k applied to the first k columns of the
    identity, H_i = I - tau_i v_i v_i^T with v_i column i of a below the diagonal, 1 on it."""
    n, k = a.shape[-2], a.shape[-1]
    q = eye(n, k, dtype=a.dtype, device=a.device) + zeros_like(a)
    rows = np.arange(n)
    for i in reversed(range(k)):
        below = Tensor((rows > i).astype(np.float64), dtype=a.dtype, device=a.device)
        unit = Tensor((rows == i).astype(np.float64), dtype=a.dtype, device=a.device)
        v = (a[..., :, i] * below + unit).unsqueeze(-1)
        q = q - tau[..., i, None, None] * (v @ (v.mT @ q))
    return q


def _make_orthogonal(a: Tensor) -> Tensor:
    """Q of a's QR decomposition with R's diagonal made positive (torch's geqrf path)."""
    q, r = qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    eps = 10.0 * n * float(np.finfo(q.dtype.np).eps)
    ident = eye(k, dtype=q.dtype, device=q.device)
    gap = (q.mT @ q - ident).abs()
    return bool((gap <= eps + 1e-5 * ident.abs()).all().item())


class _Orthogonal(Module):
    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: str, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    @property
    def _trivialized(self) -> bool:
        return "base" in self._buffer_names

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x, n, k = x.mT, k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:  # embed the tall matrix in a square one
                x = cat([x, zeros(*x.shape[:-1], n - k, dtype=x.dtype, device=x.device)], -1)
            a = x - x.mT  # skew-symmetric
            if self.orthogonal_map == "matrix_exp":
                q = _matrix_exp(a)
            else:  # the Cayley map (I + A/2)(I - A/2)^-1
                ident = eye(n, dtype=a.dtype, device=a.device)
                q = solve(ident - 0.5 * a, ident + 0.5 * a)
            q = q[..., :k] if n != k else q
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(-2))
            # X's diagonal holds the signs (+-1); not differentiated, as torch's int cast.
            q = _householder_product(a, tau) * x.diagonal(dim1=-2, dim2=-1).detach().trunc(
            ).unsqueeze(-2)
        if self._trivialized:
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q: Tensor) -> Tensor:
        if q.shape != self.shape:
            raise ShrewValueError(f"Expected a matrix or batch of matrices of shape "
                                  f"{self.shape}. Got a tensor of shape {q.shape}.")
        if not self._trivialized:
            raise UnsupportedError("orthogonal: assigning to the weight with "
                                   "use_trivialization=False is not supported; use the "
                                   "default use_trivialization=True")
        with no_grad():
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            if n < k:
                q, n, k = q.mT, k, n
            if n != k:  # complete q to a full n x n orthogonal matrix
                q = cat([q, randn(*q.shape[:-1], n - k, dtype=q.dtype, device=q.device)], -1)
                q = _make_orthogonal(q)
            elif not _is_orthogonal(q):
                q = _make_orthogonal(q)
            else:
                q = q.clone()
            self.base = q
            # -Id: householder(zeros) == eye, and the other maps give I for it too.
            rows, cols = q_init.shape[-2], q_init.shape[-1]
            return -eye(rows, cols, dtype=q_init.dtype, device=q_init.device) + zeros_like(
                q_init)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Keep module.<name> (a matrix or batch of matrices) orthogonal: Q = base @ map(X), map
    one of "matrix_exp" (default for square), "cayley", "householder" (default otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ShrewValueError(f"Module '{module}' has no parameter or buffer with name "
                              f"'{name}'")
    if weight.ndim < 2:
        raise ShrewValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                              f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square else "householder"
    if orthogonal_map not in _MAPS:
        raise ShrewValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                              f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
