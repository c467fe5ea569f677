/* Reductions.  The host permutes x into [kept dims..., reduced dims...] and passes meta =
   kept shape[nk], x's kept strides[nk], x's offset, reduced shape[nr], reduced strides[nr],
   0; output o (C order over kept dims) reduces elements r = 0 .. R-1 of its row.
   Schedules, chosen by the host from the device and the layout alone so results are
   reproducible:
   *_rows: one work-item per output, a sequential loop (many outputs, short rows);
   *_groups: one work-group of WG_SIZE per output, strided partial sums, then a tree;
   *_spans (CPU devices, rows strided through memory): *_rows' order, so the same bits, but a
   work-item reduces up to SPAN_OUTPUTS outputs together, sweeping them in its inner loop,
   which vectorizes where they are adjacent. */

#define OP_SUM 0
#define OP_MAX 1
#define OP_MIN 2

DEVICE ACC combine(const int op, const ACC a, const ACC b)
{
    if (op == OP_SUM) return a + b;
    if (op == OP_MAX) return (b > a || IS_NAN(b)) ? b : a;   /* NaN wins, as numpy */
    return (b < a || IS_NAN(b)) ? b : a;
}

/* The offset of row o's first element, and of element r within a row. */
DEVICE i64 row_base(const i64 o, const int nk, const GLOBAL i64* meta)
{
    return offset_of(o, nk, meta, meta + nk);
}

DEVICE i64 row_offset(const i64 r, const int nk, const int nr, const GLOBAL i64* meta)
{
    const GLOBAL i64* red = meta + 2 * nk + 1;
    return offset_of(r, nr, red, red + nr);
}

/* Elements start, start + step, ... of row o combined in order.  max/min start from the
   row's first element (combining it twice is harmless), so rows need R >= 1. */
DEVICE ACC reduce_row(const int op, const i64 o, const i64 R, const int nk, const int nr,
                      const GLOBAL i64* meta, const GLOBAL T* x, const i64 start, const int step)
{
    const i64 base = row_base(o, nk, meta);
    ACC acc = op == OP_SUM ? (ACC)0 : (ACC)LOAD(x, base);
    for (i64 r = start; r < R; r += step)
        acc = combine(op, acc, (ACC)LOAD(x, base + row_offset(r, nk, nr, meta)));
    return acc;
}

DEVICE ACC reduce_group(const int op, const i64 R, const int nk, const int nr,
                        const GLOBAL i64* meta, const GLOBAL T* x, LOCAL ACC* part)
{
    const int lid = LID0;
    part[lid] = reduce_row(op, GROUP0, R, nk, nr, meta, x, lid, WG_SIZE);
    BARRIER();
    for (int s = WG_SIZE / 2; s > 0; s >>= 1) {
        if (lid < s) part[lid] = combine(op, part[lid], part[lid + s]);
        BARRIER();
    }
    return part[0];
}

#define REDUCE_ARGS const i64 n_out, const i64 R, const int nk, const int nr,              \
                    const GLOBAL i64* meta, const GLOBAL T* x

#define SPAN_OUTPUTS 64

/* Runs of outputs o .. o + run - 1 along the innermost kept dim (stride ks), so that their
   rows start at base + k * ks. */
#define REDUCE_SPANS(op, OUT, TO_OUT, finish)                                                     \
    const i64 k_in = nk ? meta[nk - 1] : 1, ks = nk ? meta[2 * nk - 1] : 0;               \
    const i64 end = min(n_out, (GID0 + 1) * SPAN_OUTPUTS);                                \
    ACC accs[SPAN_OUTPUTS];                                                               \
    for (i64 o = GID0 * SPAN_OUTPUTS, run; o < end; o += run) {                           \
        run = min(end - o, k_in - o % k_in);                                              \
        const i64 base = row_base(o, nk, meta);                                           \
        for (int k = 0; k < run; ++k)                                                     \
            accs[k] = op == OP_SUM ? (ACC)0 : (ACC)LOAD(x, base + k * ks);                \
        for (i64 r = 0; r < R; ++r) {                                                     \
            const GLOBAL T* row = x + base + row_offset(r, nk, nr, meta);                 \
            for (int k = 0; k < run; ++k)                                                 \
                accs[k] = combine(op, accs[k], (ACC)LOAD(row, k * ks));                   \
        }                                                                                 \
        for (int k = 0; k < run; ++k) {                                                   \
            const ACC acc = accs[k];                                                      \
            out[o + k] = TO_OUT(finish);                                                   \
        }                                                                                 \
    }

#define REDUCE(name, op, OUT, TO_OUT, finish)                                                     \
KERNEL void name##_spans(REDUCE_ARGS, GLOBAL OUT* out)                                    \
{                                                                                         \
    REDUCE_SPANS(op, OUT, TO_OUT, finish)                                                         \
}                                                                                         \
KERNEL void name##_rows(REDUCE_ARGS, GLOBAL OUT* out)                                     \
{                                                                                         \
    const i64 o = GID0;                                                                   \
    if (o >= n_out) return;                                                               \
    const ACC acc = reduce_row(op, o, R, nk, nr, meta, x, 0, 1);                          \
    out[o] = TO_OUT(finish);                                                               \
}                                                                                         \
KERNEL void name##_groups(REDUCE_ARGS, GLOBAL OUT* out)                                   \
{                                                                                         \
    LOCAL_ARRAY ACC part[WG_SIZE];                                                        \
    const ACC acc = reduce_group(op, R, nk, nr, meta, x, part);                           \
    if (LID0 == 0) out[GROUP0] = TO_OUT(finish);                                           \
}

REDUCE(sum, OP_SUM, SUM_T, TO_SUM, acc)
REDUCE(max, OP_MAX, T, TO_T, acc)
REDUCE(min, OP_MIN, T, TO_T, acc)
REDUCE(mean, OP_SUM, T, TO_T, acc / (ACC)R)   /* integers truncate toward zero, as numpy */

/* ---- argmax / argmin: the first index of the extreme value (a NaN counts as the
   extreme, as numpy).  Ties keep the lower index, so the tree gives the sequential answer. */
DEVICE int arg_better(const int op, const ACC v, const i64 i, const ACC best, const i64 at)
{
    if (IS_NAN(best)) return IS_NAN(v) && i < at;
    if (IS_NAN(v)) return 1;
    if (v == best) return i < at;
    return op == OP_MAX ? v > best : v < best;
}

DEVICE i64 arg_row(const int op, const i64 o, const i64 R, const int nk, const int nr,
                   const GLOBAL i64* meta, const GLOBAL T* x, const i64 start, const int step,
                   ACC* best_value)
{
    const i64 base = row_base(o, nk, meta);
    i64 at = 0;
    ACC best = (ACC)LOAD(x, base);
    for (i64 r = start; r < R; r += step) {
        const ACC v = (ACC)LOAD(x, base + row_offset(r, nk, nr, meta));
        if (arg_better(op, v, r, best, at)) { best = v; at = r; }
    }
    *best_value = best;
    return at;
}

#define ARG_REDUCE(name, op)                                                              \
KERNEL void name##_rows(REDUCE_ARGS, GLOBAL i64* out)                                     \
{                                                                                         \
    const i64 o = GID0;                                                                   \
    ACC best;                                                                             \
    if (o < n_out) out[o] = arg_row(op, o, R, nk, nr, meta, x, 0, 1, &best);              \
}                                                                                         \
KERNEL void name##_groups(REDUCE_ARGS, GLOBAL i64* out)                                   \
{                                                                                         \
    LOCAL_ARRAY ACC values[WG_SIZE];                                                      \
    LOCAL_ARRAY i64 at[WG_SIZE];                                                          \
    const int lid = LID0;                                                                 \
    ACC best;                                                                             \
    at[lid] = arg_row(op, GROUP0, R, nk, nr, meta, x, lid, WG_SIZE, &best);               \
    values[lid] = best;                                                                   \
    BARRIER();                                                                            \
    for (int s = WG_SIZE / 2; s > 0; s >>= 1) {                                           \
        if (lid < s && arg_better(op, values[lid + s], at[lid + s], values[lid], at[lid])) { \
            values[lid] = values[lid + s];                                                \
            at[lid] = at[lid + s];                                                        \
        }                                                                                 \
        BARRIER();                                                                        \
    }                                                                                     \
    if (lid == 0) out[GROUP0] = at[0];                                                    \
}

ARG_REDUCE(argmax, OP_MAX)
ARG_REDUCE(argmin, OP_MIN)
