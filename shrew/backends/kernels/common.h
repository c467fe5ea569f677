/* Shared by every kernel family.  Each program is built with these defines (see
   shrew/backends/kernels/__init__.py): ELEM_T, the storage type; CALC_T, the type elements
   are computed in (float for half, int for bool); ACC_T, the reduction accumulator; SUM_T,
   the type of a sum; IS_FLOAT, IS_BOOL, IS_BF16 (bfloat16, stored as bf16's 16 bits: every
   kernel reads elements with LOAD and writes them with TO_T), UNIFORM_BITS; HAS_F64, HAS_F16, WG_SIZE and TILE
   for the device.  (No one-letter macros: they would break C++ templates under NVRTC.) */
typedef ELEM_T T;
typedef CALC_T CT;
typedef ACC_T ACC;

/* bfloat16: the top 16 bits of a float.  Widening is exact; narrowing rounds to nearest
   even, as ml_dtypes and PyTorch do, and keeps a NaN a (quiet) NaN. */
DEVICE float bf16_to_float(const bf16 h) { return FLOAT_OF_BITS(((u32)h) << 16); }
DEVICE bf16 float_to_bf16(const float f)
{
    const u32 u = BITS_OF_FLOAT(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (bf16)((u >> 16) | 0x40u);
    return (bf16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

#if IS_BF16
#define TO_T(v) float_to_bf16((float)(v))
#define TO_SUM(v) float_to_bf16((float)(v))
#define LOAD(p, i) bf16_to_float((p)[i])
#else
#if IS_BOOL
#define TO_T(v) ((T)((v) != 0))     /* a bool holds exactly 0 or 1, as in numpy */
#else
#define TO_T(v) ((T)(v))
#endif
#define TO_SUM(v) ((SUM_T)(v))
#define LOAD(p, i) ((CT)(p)[i])
#endif
#define IS_NAN(v) ((v) != (v))      /* always false for integers */

/* Strided operands travel as one int64 "meta" array: the iteration shape[0..ndim), then
   for each operand its strides[0..ndim) and its offset, all counted in elements. */
#define LAYOUT(meta, ndim, j) ((meta) + (ndim) + (j) * ((ndim) + 1))

/* Element offset of the i-th element (C order over shape) of an operand with layout.
   i < the shape's size, so the outermost dim needs no division. */
DEVICE i64 offset_of(i64 i, const int ndim, const GLOBAL i64* shape, const GLOBAL i64* layout)
{
    if (ndim == 0) return layout[0];
    i64 off = layout[ndim];
    for (int d = ndim - 1; d > 0; --d) {
        const i64 s = shape[d], q = i / s;
        off += (i - q * s) * layout[d];
        i = q;
    }
    return off + i * layout[0];
}

/* Kernels with one work-item per line along `dim`, the other coordinates fixed (scan.cl),
   over an input x and an output out: meta = the shape[ndim], then x's and out's layouts.
   line_start: where line `line` starts in x (*xo) and in out (*oo). */
DEVICE void line_start(i64 line, const int ndim, const int dim, const GLOBAL i64* meta,
                       i64* xo, i64* oo)
{
    const GLOBAL i64* xl = LAYOUT(meta, ndim, 0);
    const GLOBAL i64* ol = LAYOUT(meta, ndim, 1);
    *xo = xl[ndim];
    *oo = ol[ndim];
    for (int d = ndim - 1; d >= 0; --d) {
        if (d == dim) continue;
        const i64 c = line % meta[d];
        line /= meta[d];
        *xo += c * xl[d];
        *oo += c * ol[d];
    }
}

/* A line kernel's start (its arguments: lines, ndim, dim, meta): past the last line it
   returns; else xo, oo are where its line starts in x and out, xs, os their steps along dim. */
#define LINE_SETUP                                                                        \
    const i64 line = GID0;                                                                \
    if (line >= lines) return;                                                            \
    i64 xo, oo;                                                                           \
    line_start(line, ndim, dim, meta, &xo, &oo);                                          \
    const i64 xs = LAYOUT(meta, ndim, 0)[dim], os = LAYOUT(meta, ndim, 1)[dim];

/* Elementwise spans (elementwise.cl, cast.cl): work-item g writes outputs
   [g * per_item, (g + 1) * per_item) of a C-contiguous output, a long span on a CPU device so
   that the inner loops vectorize, 1 on a GPU.  The span is walked in runs along the innermost
   dim, where each operand advances by a fixed stride: one offset_of per run, not per element. */
#define SPAN_ARGS const i64 n, const i64 per_item, const int ndim, const GLOBAL i64* meta

/* The body once per run of this work-item's span: outputs i .. i + run - 1. */
#define FOR_RUNS(...)                                                                     \
    const i64 inner_ = ndim ? meta[ndim - 1] : 1;                                         \
    const i64 end_ = min(n, (GID0 + 1) * per_item);                                       \
    for (i64 i = GID0 * per_item, run; i < end_; i += run) {                              \
        run = min(end_ - i, inner_ - i % inner_);                                         \
        __VA_ARGS__                                                                       \
    }

/* Operand j of pointer p in the current run: where output i reads it, and its stride. */
#define RUN_AT(p, j) ((p) + offset_of(i, ndim, meta, LAYOUT(meta, ndim, j)))
#define RUN_STEP(j) (ndim ? LAYOUT(meta, ndim, j)[ndim - 1] : 0)
/* The body for each output of the current run: i + k, k = 0 .. run - 1. */
#define RUN_LOOP(...) for (i64 k = 0; k < run; ++k) { __VA_ARGS__ }

/* out[i] = expr for every output of the span, expr reading v = x's element. */
#define MAP1(x, expr)                                                                     \
    FOR_RUNS(const GLOBAL T* px = RUN_AT(x, 0);                                           \
             const i64 sx = RUN_STEP(0);                                                  \
             RUN_LOOP(const CT v = LOAD(px, k * sx); out[i + k] = expr;))

/* The same with x = a's element and y = b's.  An operand broadcast along the run (stride 0:
   a column of a matrix) is loaded once, so that the loop still vectorizes. */
#define MAP2(a, b, expr)                                                                  \
    FOR_RUNS(const GLOBAL T* pa = RUN_AT(a, 0);                                           \
             const GLOBAL T* pb = RUN_AT(b, 1);                                           \
             const i64 sa = RUN_STEP(0), sb = RUN_STEP(1);                                \
             if (sb == 0) {                                                               \
                 const CT y = LOAD(pb, 0);                                                \
                 RUN_LOOP(const CT x = LOAD(pa, k * sa); out[i + k] = expr;)              \
             } else if (sa == 0) {                                                        \
                 const CT x = LOAD(pa, 0);                                                \
                 RUN_LOOP(const CT y = LOAD(pb, k * sb); out[i + k] = expr;)              \
             } else {                                                                     \
                 RUN_LOOP(const CT x = LOAD(pa, k * sa); const CT y = LOAD(pb, k * sb);   \
                          out[i + k] = expr;)                                             \
             })

/* The kernels unary_<name> and binary_<name> (elementwise.cl, special.cl). */
#define UNARY(name, expr)                                                                 \
KERNEL void unary_##name(SPAN_ARGS, const GLOBAL T* x, GLOBAL T* out)                     \
{                                                                                         \
    MAP1(x, TO_T(expr))                                                                   \
}

#define BINARY(name, expr)                                                                \
KERNEL void binary_##name(SPAN_ARGS, const GLOBAL T* a, const GLOBAL T* b, GLOBAL T* out)  \
{                                                                                         \
    MAP2(a, b, TO_T(expr))                                                                \
}

#if defined(__OPENCL_VERSION__) && IS_FLOAT && UNIFORM_BITS != 53
/* exp and tanh for a float CT (float32, float16) in plain arithmetic, which vectorizes:
   POCL's library calls cost ~5 ns an element.  Both are within 3e-7 relative of numpy, keep
   NaN, saturate (inf, 0, +-1), and go subnormal as exp does.  Selects rather than fabs,
   floor or copysign, which are calls too.  CUDA builds none of the families that use them. */
DEVICE float exp_f32(const float x)
{
    /* x = k ln2 + r, |r| <= ln2 / 2 (ln2 split in two for an exact k ln2); Cephes' expf
       polynomial for e^r; 2^k as two exact power-of-two factors, so subnormals come out. */
    const float t = x * 1.44269504088896341f;
    const float k = (float)(int)(t + (t < 0.0f ? -0.5f : 0.5f));
    const float r = (x - k * 0.693359375f) - k * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float y = p * r * r + r + 1.0f;
    const int ki = (int)(k < -254.0f ? -254.0f : k > 254.0f ? 254.0f : k), k1 = ki >> 1;
    const float e = y * as_float((k1 + 127) << 23) * as_float((ki - k1 + 127) << 23);
    return x > 88.72283935546875f ? INFINITY : x < -103.972084f ? 0.0f : e;
}

/* Cephes' tanhf: an odd polynomial below 0.625, else 1 - 2 / (e^2|x| + 1). */
DEVICE float tanh_f32(const float x)
{
    const float a = x < 0.0f ? -x : x, z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    const float big = 1.0f - 2.0f / (exp_f32(a + a) + 1.0f);
    return a < 0.625f ? p * z * x + x : x < 0.0f ? -big : big;
}
#define EXP(v) exp_f32(v)
#define TANH(v) tanh_f32(v)
#else
#define EXP(v) exp(v)
#define TANH(v) tanh(v)
#endif

/* The window geometry of conv.cl and pool.cl over an [N, C, H, W] image
   (kernels.window_geometry builds it on the host). */
typedef struct { i64 c, h, w, kh, kw, sh, sw, ph, pw, ho, wo; } Geometry;
#define GEOMETRY_LEN 11

DEVICE Geometry geometry(const GLOBAL i64* g)
{
    Geometry r = { g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10] };
    return r;
}
