"""Tensor's reduction, scan and sorting methods: each is its op family's function, which
takes the tensor first (ops/reduce.py, ops/scan.py, ops/sort.py)."""
from __future__ import annotations

from ..ops import reduce as _reduce
from ..ops import scan as _scan
from ..ops import sort as _sort

from ..ops import statistics as _statistics
from ..ops.linalg import composed as _linalg_composed

class ReductionMethods:
    """Mixed into Tensor: x.sum(1) is shrew.sum(x, 1)."""

    __slots__ = ()

    # -- reductions (ops/reduce.py) ---------------------------------------------------------
    sum = _reduce.sum
    mean = _reduce.mean
    nansum = _reduce.nansum
    nanmean = _reduce.nanmean
    prod = _reduce.prod
    amax = _reduce.amax
    amin = _reduce.amin
    aminmax = _reduce.aminmax
    max = _reduce.max
    min = _reduce.min
    argmax = _reduce.argmax
    argmin = _reduce.argmin
    var = _reduce.var
    std = _reduce.std
    logsumexp = _reduce.logsumexp
    all = _reduce.all
    any = _reduce.any
    count_nonzero = _reduce.count_nonzero
    norm = _reduce.norm

    # -- scans (ops/scan.py) ----------------------------------------------------------------
    cumsum = _scan.cumsum
    cumprod = _scan.cumprod
    logcumsumexp = _scan.logcumsumexp
    cummax = _scan.cummax
    cummin = _scan.cummin
    diff = _scan.diff

    # -- sorting and selection (ops/sort.py) --------------------------------------------------
    sort = _sort.sort
    argsort = _sort.argsort
    msort = _sort.msort
    topk = _sort.topk
    kthvalue = _sort.kthvalue
    median = _sort.median
    nanmedian = _sort.nanmedian
    mode = _sort.mode
    unique = _sort.unique
    unique_consecutive = _sort.unique_consecutive
    histc = _sort.histc
    bincount = _sort.bincount

    # statistics (ops/statistics.py), dist and renorm (ops/linalg/composed.py)
    quantile = _statistics.quantile
    nanquantile = _statistics.nanquantile
    cov = _statistics.cov
    corrcoef = _statistics.corrcoef
    histogram = _statistics.histogram
    dist = _linalg_composed.dist
    renorm = _linalg_composed.renorm
