"""The named tuples that ops returning two tensors give back, as torch.return_types:
fields by name (``.values``, ``.indices``) or by position, and unpacking."""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ._tensor import Tensor


class max(NamedTuple):  # noqa: N801  (torch.return_types' names)
    values: Tensor
    indices: Tensor


class min(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class sort(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class topk(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class kthvalue(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class median(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class nanmedian(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class mode(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class cummax(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class cummin(NamedTuple):  # noqa: N801
    values: Tensor
    indices: Tensor


class aminmax(NamedTuple):  # noqa: N801
    min: Tensor
    max: Tensor


# -- linear algebra (ops/linalg/decompositions.py, ops/linalg/composed.py) -----------------------
class linalg_slogdet(NamedTuple):  # noqa: N801
    sign: Tensor
    logabsdet: Tensor


class slogdet(NamedTuple):  # noqa: N801
    sign: Tensor
    logabsdet: Tensor


class linalg_qr(NamedTuple):  # noqa: N801
    Q: Tensor
    R: Tensor


class qr(NamedTuple):  # noqa: N801
    Q: Tensor
    R: Tensor


class linalg_svd(NamedTuple):  # noqa: N801
    U: Tensor
    S: Tensor
    Vh: Tensor


class svd(NamedTuple):  # noqa: N801  (torch.svd: V, not Vh)
    U: Tensor
    S: Tensor
    V: Tensor


class linalg_eigh(NamedTuple):  # noqa: N801
    eigenvalues: Tensor
    eigenvectors: Tensor


class linalg_inv_ex(NamedTuple):  # noqa: N801
    inverse: Tensor
    info: Tensor


class linalg_solve_ex(NamedTuple):  # noqa: N801
    result: Tensor
    info: Tensor


class linalg_cholesky_ex(NamedTuple):  # noqa: N801
    L: Tensor
    info: Tensor


class linalg_lstsq(NamedTuple):  # noqa: N801
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


# the OpInfo functions (issue 30): a float's parts, histograms, LU and LDL factorisations
class frexp(NamedTuple):  # noqa: N801
    mantissa: Tensor
    exponent: Tensor


class histogram(NamedTuple):  # noqa: N801
    hist: Tensor
    bin_edges: Tensor


class histogramdd(NamedTuple):  # noqa: N801
    hist: Tensor
    bin_edges: list[Tensor]


class linalg_lu(NamedTuple):  # noqa: N801
    P: Tensor  # noqa: N815
    L: Tensor  # noqa: N815
    U: Tensor  # noqa: N815


class linalg_lu_factor(NamedTuple):  # noqa: N801
    LU: Tensor  # noqa: N815
    pivots: Tensor


class linalg_lu_factor_ex(NamedTuple):  # noqa: N801
    LU: Tensor  # noqa: N815
    pivots: Tensor
    info: Tensor


class lu_unpack(NamedTuple):  # noqa: N801
    P: Tensor  # noqa: N815
    L: Tensor  # noqa: N815
    U: Tensor  # noqa: N815


class linalg_ldl_factor(NamedTuple):  # noqa: N801
    LD: Tensor  # noqa: N815
    pivots: Tensor


class linalg_ldl_factor_ex(NamedTuple):  # noqa: N801
    LD: Tensor  # noqa: N815
    pivots: Tensor
    info: Tensor


class triangular_solve(NamedTuple):  # noqa: N801
    solution: Tensor
    cloned_coefficient: Tensor


class geqrf(NamedTuple):  # noqa: N801
    a: Tensor
    tau: Tensor
