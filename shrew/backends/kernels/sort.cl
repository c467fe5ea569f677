/* A stable sort along `dim`, as indices.  meta = x's shape[ndim], then the layouts of x and
   out.  One work-item per element counts its rank in its line: the elements that sort
   before it, plus the equal ones at a lower index, so equal elements keep their order
   (a stable sort) and no two elements share a rank.  Quadratic in the line's length but
   free of scratch memory, atomics and barriers.  NaN sorts as the largest value, equal to
   every other NaN, as in PyTorch. */

DEVICE int sorts_below(const CT a, const CT b)  /* a < b, with NaN above everything */
{
    return !IS_NAN(a) && (IS_NAN(b) || a < b);
}

/* out (int64, x's shape) holds, at rank k of each line, the index along dim of the element
   that sorts k-th, ascending or (descending != 0) descending. */
KERNEL void argsort(const i64 n, const int ndim, const int dim, const int descending,
                    const GLOBAL i64* meta, const GLOBAL T* x, GLOBAL i64* out)
{
    i64 rest = GID0;
    if (rest >= n) return;
    const GLOBAL i64* xl = LAYOUT(meta, ndim, 0);
    const GLOBAL i64* ol = LAYOUT(meta, ndim, 1);
    i64 xo = xl[ndim], oo = ol[ndim], at = 0;
    for (int d = ndim - 1; d >= 0; --d) {
        const i64 c = rest % meta[d];
        rest /= meta[d];
        if (d == dim) {
            at = c;
        } else {
            xo += c * xl[d];
            oo += c * ol[d];
        }
    }
    const CT v = LOAD(x, xo + at * xl[dim]);
    i64 rank = 0;
    for (i64 j = 0; j < meta[dim]; ++j) {
        const CT w = LOAD(x, xo + j * xl[dim]);
        const int below = descending ? sorts_below(v, w) : sorts_below(w, v);
        const int equal = !sorts_below(v, w) && !sorts_below(w, v);
        rank += below || (equal && j < at);
    }
    out[oo + rank * ol[dim]] = at;
}
