/* Scans along `dim`: cumulative sums and products, the running log-sum-exp (floats only), and the running index of the maximum or
   minimum.  meta = x's shape[ndim], then the layouts of x and out.  One work-item per line
   along dim (the other coordinates fixed) walks its line in order, so the result is the
   sequential one, the same bits every run, with no atomics. */

#define SCAN_ARGS const i64 lines, const int ndim, const int dim, const GLOBAL i64* meta, \
                  const GLOBAL T* x

/* out[r] = x[0] + ... + x[r] (or the product), accumulated in ACC. */
#define SCAN(name, init, combine)                                                         \
KERNEL void name(SCAN_ARGS, GLOBAL T* out)                                                \
{                                                                                         \
    LINE_SETUP                                                                            \
    ACC acc = (ACC)(init);                                                                \
    for (i64 r = 0; r < meta[dim]; ++r) {                                                 \
        const ACC v = (ACC)LOAD(x, xo + r * xs);                                          \
        acc = combine;                                                                    \
        out[oo + r * os] = TO_T(acc);                                                     \
    }                                                                                     \
}

SCAN(scan_sum, 0, acc + v)
SCAN(scan_prod, 1, acc * v)

#if IS_FLOAT
/* log(exp(a) + exp(b)) without overflow: the larger plus log1p of the smaller's share.
   Infinities pass through (their difference would be NaN); a NaN stays NaN. */
DEVICE ACC log_add_exp(const ACC a, const ACC b)
{
    const ACC high = a > b ? a : b;
    if (IS_NAN(a) || IS_NAN(b)) return a + b;
    if (isinf(high)) return high;
    return high + log1p(exp(-fabs(a - b)));
}

SCAN(scan_logsumexp, -INFINITY, log_add_exp(acc, v))
#endif

/* out[r] = the index of max(x[0..r]) (or min): the latest of equal extremes, and once a
   NaN is seen the latest NaN, as PyTorch's cummax / cummin. */
#define ARG_SCAN(name, beats)                                                             \
KERNEL void name(SCAN_ARGS, GLOBAL i64* out)                                              \
{                                                                                         \
    LINE_SETUP                                                                            \
    CT best = LOAD(x, xo);                                                                \
    i64 at = 0;                                                                           \
    for (i64 r = 0; r < meta[dim]; ++r) {                                                 \
        const CT v = LOAD(x, xo + r * xs);                                                \
        if (IS_NAN(v) || (!IS_NAN(best) && (beats))) { best = v; at = r; }                \
        out[oo + r * os] = at;                                                            \
    }                                                                                     \
}

ARG_SCAN(arg_scan_max, v >= best)
ARG_SCAN(arg_scan_min, v <= best)
