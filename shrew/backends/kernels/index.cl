/* gather and scatter along `dim` (scatter_add is scatter's mode 1 on zeros: index.py).
   meta = index shape[ndim], then the layouts of index, x (gather) or src (scatter), and
   out; `bound` is the size of x (gather) or out (scatter) along dim.  The core checks
   that index entries lie in [0, bound), for an index computed on the device only when a
   result is next read back (ops/index/recorded.py), so an entry outside it reads as 0 and writes
   nothing: memory outside the arrays is never touched. */

/* out[p] = x[p with p[dim] replaced by index[p]], p over index's shape. */
KERNEL void gather(const i64 n, const int ndim, const int dim, const i64 bound,
                   const GLOBAL i64* meta, const GLOBAL T* x, const GLOBAL i64* index,
                   GLOBAL T* out)
{
    const i64 i = GID0;
    if (i >= n) return;
    const GLOBAL i64* il = LAYOUT(meta, ndim, 0);
    const GLOBAL i64* xl = LAYOUT(meta, ndim, 1);
    i64 rest = i, io = il[ndim], xo = xl[ndim];
    for (int d = ndim - 1; d >= 0; --d) {
        const i64 c = rest % meta[d];
        rest /= meta[d];
        io += c * il[d];
        if (d != dim) xo += c * xl[d];
    }
    const i64 k = index[io];
    out[i] = k >= 0 && k < bound ? x[xo + k * xl[dim]] : TO_T((CT)0);
}

/* out (a C-contiguous copy of the destination) combined with src at index along dim:
   mode 0 stores (the last entry along dim wins), 1 adds, 2 multiplies, 3 keeps the
   maximum, 4 the minimum (a NaN on either side wins, as in torch).  One work-item per
   line of index along dim (the other coordinates fixed): only it writes that line of
   out, in index order, so there are no atomics and repeated targets combine in the same
   order every run (the sums are the same bits every run). */
KERNEL void scatter(const i64 lines, const int ndim, const int dim, const i64 bound,
                    const int mode, const GLOBAL i64* meta, const GLOBAL i64* index,
                    const GLOBAL T* src, GLOBAL T* out)
{
    i64 rest = GID0;
    if (rest >= lines) return;
    const GLOBAL i64* il = LAYOUT(meta, ndim, 0);
    const GLOBAL i64* sl = LAYOUT(meta, ndim, 1);
    const GLOBAL i64* ol = LAYOUT(meta, ndim, 2);
    i64 io = il[ndim], so = sl[ndim], oo = 0;
    for (int d = ndim - 1; d >= 0; --d) {
        if (d == dim) continue;
        const i64 c = rest % meta[d];
        rest /= meta[d];
        io += c * il[d];
        so += c * sl[d];
        oo += c * ol[d];
    }
    for (i64 r = 0; r < meta[dim]; ++r) {
        const i64 k = index[io + r * il[dim]];
        if (k < 0 || k >= bound) continue;
        const i64 o = oo + k * ol[dim];
        const CT v = LOAD(src, so + r * sl[dim]), cur = LOAD(out, o);
        CT next = v;
        if (mode == 1) next = cur + v;
        else if (mode == 2) next = cur * v;
        else if (mode == 3) next = IS_NAN(cur) || cur > v ? cur : v;
        else if (mode == 4) next = IS_NAN(cur) || cur < v ? cur : v;
        out[o] = TO_T(next);
    }
}
