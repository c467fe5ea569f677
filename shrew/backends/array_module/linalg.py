"""The ``linalg`` primitive on a numpy-compatible array module: the matrix decompositions
and solvers of ``base.LINALG_FNS`` through ``xp.linalg`` (numpy's LAPACK on the CPU,
CuPy's cuSOLVER on CUDA).  The OpenCL backend runs the same code with numpy on a host copy.

A failure that LAPACK reports per matrix (a singular matrix for ``solve``, one that is not
positive-definite for ``cholesky``) is returned as an int32 ``info`` array over the batch,
0 where the matrix was fine, instead of raising: the core then names the op and the matrix.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def _first_failures(xp: Any, fn: Any, a: Any, *rest: Any) -> tuple:
    """fn(a, *rest) on the whole batch; where the library raises LinAlgError, fn matrix by
    matrix instead, with NaN results and info 1 for the matrices that fail."""
    batch = a.shape[:-2]
    try:
        return fn(a, *rest), xp.zeros(batch, dtype=np.int32)
    except np.linalg.LinAlgError:
        pass
    info = np.zeros(batch, dtype=np.int32)
    out = None
    for index in np.ndindex(*batch):
        try:
            one = fn(a[index], *(r[index] for r in rest))
        except np.linalg.LinAlgError:
            info[index] = 1
            continue
        if out is None:
            out = xp.full(batch + one.shape, np.nan, dtype=one.dtype)
        out[index] = one
    if out is None:  # every matrix failed: the shape of the result is fn's on a good input
        shape = a.shape[:-1] + (rest[0].shape[-1],) if rest else a.shape
        out = xp.full(shape, np.nan, dtype=a.dtype)
    return out, xp.asarray(info)


def _raising(xp: Any) -> Any:
    """CuPy checks LAPACK's info only inside cupyx.errstate(linalg='raise'); numpy's linalg
    (also behind a module that stands in for CuPy in tests) always raises."""
    if xp.linalg is np.linalg:
        import contextlib
        return contextlib.nullcontext()
    import cupyx
    return cupyx.errstate(linalg="raise")


def linalg(xp: Any, fn: str, arrays: tuple, option: Any) -> tuple:
    """base.Backend.linalg on the array module xp."""
    a = arrays[0]
    with _raising(xp):
        match fn:
            case "solve":
                return _first_failures(xp, xp.linalg.solve, a, arrays[1])
            case "cholesky":
                return _first_failures(xp, xp.linalg.cholesky, a)
            case "det":
                return (xp.linalg.det(a),)
            case "slogdet":
                sign, logabsdet = xp.linalg.slogdet(a)
                return sign.astype(a.dtype, copy=False), logabsdet.astype(a.dtype, copy=False)
            case "qr":
                q, r = xp.linalg.qr(a, mode=option)
                return q, r
            case "svd":
                u, s, vh = xp.linalg.svd(a, full_matrices=option)
                return u, s, vh
            case "svdvals":
                return (xp.linalg.svd(a, compute_uv=False),)
            case "eigh":
                w, q = xp.linalg.eigh(a, UPLO=option)
                return w, q
            case "eigvalsh":
                return (xp.linalg.eigvalsh(a, UPLO=option),)
    raise ValueError(f"linalg: unknown routine {fn!r}")
