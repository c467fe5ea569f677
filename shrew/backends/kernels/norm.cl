/* Fused normalisations over the rows of a C-contiguous x seen as [outer, n, inner]: row r
   holds elements row_start(r) + j * inner, j = 0 .. n-1.  One work-item per row, a few
   sequential passes over it; with inner > 1, neighbouring work-items read neighbouring
   addresses.  Elements are computed in CT and summed in ACC (float for half), rounded to T
   once at the end, as PyTorch's kernels do. */

DEVICE i64 row_start(const i64 r, const i64 n, const i64 inner)
{
    return (r / inner) * n * inner + r % inner;
}

/* exp(x - max) / sum, or with log_out (x - max) - log(sum); NaN propagates as in numpy. */
KERNEL void softmax(const i64 rows, const i64 n, const i64 inner, const int log_out,
                    const GLOBAL T* x, GLOBAL T* out)
{
    const i64 r = GID0;
    if (r >= rows) return;
    const i64 base = row_start(r, n, inner);
    CT m = LOAD(x, base);
    for (i64 j = 1; j < n; ++j) {
        const CT v = LOAD(x, base + j * inner);
        m = (v > m || IS_NAN(v)) ? v : m;
    }
    /* exp(x - max) goes to out first, in a loop of its own that vectorizes, then is summed;
       but a half out would round it before the sum and the division, twice where PyTorch
       rounds once: there the sum takes the exps directly and the division recomputes them. */
    const int keep_exps = sizeof(T) == sizeof(CT);
    ACC s = (ACC)0;
    if (keep_exps) {
        for (i64 j = 0; j < n; ++j)
            out[base + j * inner] = TO_T(EXP(LOAD(x, base + j * inner) - m));
        for (i64 j = 0; j < n; ++j)
            s += (ACC)LOAD(out, base + j * inner);
    } else {
        for (i64 j = 0; j < n; ++j)
            s += (ACC)EXP(LOAD(x, base + j * inner) - m);
    }
    if (log_out) {
        const CT log_s = log((CT)s);
        for (i64 j = 0; j < n; ++j)
            out[base + j * inner] = TO_T((LOAD(x, base + j * inner) - m) - log_s);
    } else if (keep_exps) {
        for (i64 j = 0; j < n; ++j)
            out[base + j * inner] = TO_T(LOAD(out, base + j * inner) / (CT)s);
    } else {
        for (i64 j = 0; j < n; ++j)
            out[base + j * inner] = TO_T(EXP(LOAD(x, base + j * inner) - m) / (CT)s);
    }
}

/* (x - mean) * rstd over rows of n contiguous elements, rstd = 1 / sqrt(var + eps). */
KERNEL void standardize(const i64 rows, const i64 n, const CT eps, const GLOBAL T* x,
                        GLOBAL T* out, GLOBAL T* rstd)
{
    const i64 r = GID0;
    if (r >= rows) return;
    const i64 base = r * n;
    ACC s = (ACC)0;
    for (i64 j = 0; j < n; ++j)
        s += (ACC)LOAD(x, base + j);
    const CT mean = (CT)(s / (ACC)n);
    ACC q = (ACC)0;
    for (i64 j = 0; j < n; ++j) {
        const CT d = LOAD(x, base + j) - mean;
        q += (ACC)(d * d);
    }
    const CT rs = (CT)1 / sqrt((CT)(q / (ACC)n) + eps);
    for (i64 j = 0; j < n; ++j)
        out[base + j] = TO_T((LOAD(x, base + j) - mean) * rs);
    rstd[r] = TO_T(rs);
}
