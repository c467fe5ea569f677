/* Elementwise kernels: one work-item per output element.  Outputs are fresh C-contiguous
   arrays indexed by i; every input is read through its own layout in `meta`, so views
   (transposed, narrowed, broadcast with stride 0) are read in place, never copied. */

#define INPUT(p, j) LOAD(p, offset_of(i, ndim, meta, LAYOUT(meta, ndim, j)))

KERNEL void fill(const i64 n, const CT value, GLOBAL T* out)
{
    const i64 i = GID0;
    if (i < n) out[i] = TO_T(value);
}

KERNEL void arange(const i64 n, GLOBAL T* out)
{
    const i64 i = GID0;
    if (i < n) out[i] = TO_T(i);
}

/* Strided copy between two layouts: contiguous, cat, pad, copy_. */
KERNEL void copy(const i64 n, const int ndim, const GLOBAL i64* meta,
                 const GLOBAL T* src, GLOBAL T* dst)
{
    const i64 i = GID0;
    if (i < n)
        dst[offset_of(i, ndim, meta, LAYOUT(meta, ndim, 1))] =
            src[offset_of(i, ndim, meta, LAYOUT(meta, ndim, 0))];
}

/* ---- unary ------------------------------------------------------------------------- */
#define UNARY(name, expr)                                                                 \
KERNEL void unary_##name(const i64 n, const int ndim, const GLOBAL i64* meta,              \
                         const GLOBAL T* x, GLOBAL T* out)                                \
{                                                                                         \
    const i64 i = GID0;                                                                   \
    if (i >= n) return;                                                                   \
    const CT v = INPUT(x, 0);                                                             \
    out[i] = TO_T(expr);                                                                  \
}

UNARY(neg, -v)
UNARY(square, v * v)
UNARY(relu, v < (CT)0 ? (CT)0 : v)   /* NaN passes through, as numpy.maximum */
UNARY(sign, v > (CT)0 ? (CT)1 : (v < (CT)0 ? (CT)-1 : v))

#if IS_FLOAT
/* exp of -|v| never overflows; pick the branch per sign. */
DEVICE CT sigmoid(const CT v)
{
    const CT e = exp(-fabs(v));
    return v >= (CT)0 ? (CT)1 / ((CT)1 + e) : e / ((CT)1 + e);
}

UNARY(abs, fabs(v))
UNARY(exp, exp(v))
UNARY(log, log(v))
UNARY(sqrt, sqrt(v))
UNARY(sigmoid, sigmoid(v))
UNARY(tanh, tanh(v))
/* gelu_tanh and its derivative: t = tanh(c (v + a v^3)), c = sqrt(2/pi), a = 0.044715 */
DEVICE CT gelu_tanh_t(const CT v)
{
    return tanh((CT)0.7978845608028654 * (v + (CT)0.044715 * v * v * v));
}

DEVICE CT gelu_tanh_derivative(const CT v)
{
    const CT t = gelu_tanh_t(v);
    const CT du = (CT)0.7978845608028654 * ((CT)1 + (CT)0.134145 * v * v);
    return (CT)0.5 * ((CT)1 + t) + (CT)0.5 * v * ((CT)1 - t * t) * du;
}

UNARY(gelu, v * (CT)0.5 * ((CT)1 + erf(v * (CT)0.7071067811865476)))
UNARY(gelu_tanh, (CT)0.5 * v * ((CT)1 + gelu_tanh_t(v)))
UNARY(gelu_derivative, (CT)0.5 * ((CT)1 + erf(v * (CT)0.7071067811865476)) +
                       v * exp((CT)-0.5 * v * v) * (CT)0.3989422804014327)
UNARY(gelu_tanh_derivative, gelu_tanh_derivative(v))
UNARY(silu, v * sigmoid(v))
UNARY(sin, sin(v))
UNARY(cos, cos(v))
UNARY(floor, floor(v))
UNARY(ceil, ceil(v))
UNARY(round, rint(v))                /* half to even, as numpy.round */
UNARY(erf, erf(v))
#else
UNARY(abs, v < (CT)0 ? -v : v)
UNARY(floor, v)                      /* integers are their own floor, ceil and round */
UNARY(ceil, v)
UNARY(round, v)
#endif

/* ---- binary and comparisons (inputs broadcast through stride-0 dims) --------------- */
#define BINARY(name, expr)                                                                \
KERNEL void binary_##name(const i64 n, const int ndim, const GLOBAL i64* meta,             \
                          const GLOBAL T* a, const GLOBAL T* b, GLOBAL T* out)            \
{                                                                                         \
    const i64 i = GID0;                                                                   \
    if (i >= n) return;                                                                   \
    const CT x = INPUT(a, 0), y = INPUT(b, 1);                                            \
    out[i] = TO_T(expr);                                                                  \
}

BINARY(add, x + y)
BINARY(sub, x - y)
BINARY(mul, x * y)
#if IS_FLOAT
BINARY(div, x / y)                   /* never asked for integers (no trap on x / 0) */
#endif

#define COMPARE(name, expr)                                                               \
KERNEL void compare_##name(const i64 n, const int ndim, const GLOBAL i64* meta,            \
                           const GLOBAL T* a, const GLOBAL T* b, GLOBAL u8* out)          \
{                                                                                         \
    const i64 i = GID0;                                                                   \
    if (i >= n) return;                                                                   \
    const CT x = INPUT(a, 0), y = INPUT(b, 1);                                            \
    out[i] = (u8)(expr);                                                                  \
}

COMPARE(eq, x == y)
COMPARE(ne, x != y)
COMPARE(lt, x < y)
COMPARE(le, x <= y)
COMPARE(gt, x > y)
COMPARE(ge, x >= y)

KERNEL void where(const i64 n, const int ndim, const GLOBAL i64* meta,
                  const GLOBAL u8* cond, const GLOBAL T* a, const GLOBAL T* b, GLOBAL T* out)
{
    const i64 i = GID0;
    if (i >= n) return;
    out[i] = cond[offset_of(i, ndim, meta, LAYOUT(meta, ndim, 0))]
           ? a[offset_of(i, ndim, meta, LAYOUT(meta, ndim, 1))]
           : b[offset_of(i, ndim, meta, LAYOUT(meta, ndim, 2))];
}

/* ---- scalar-parameter maps ---------------------------------------------------------- */
KERNEL void affine(const i64 n, const int ndim, const GLOBAL i64* meta,
                   const GLOBAL T* x, const CT mul, const CT add, GLOBAL T* out)
{
    const i64 i = GID0;
    if (i < n) out[i] = TO_T(INPUT(x, 0) * mul + add);
}

/* NaN passes through both bounds, as numpy.maximum / numpy.minimum. */
KERNEL void clip(const i64 n, const int ndim, const GLOBAL i64* meta,
                  const GLOBAL T* x, const CT lo, const CT hi,
                  const int has_lo, const int has_hi, GLOBAL T* out)
{
    const i64 i = GID0;
    if (i >= n) return;
    CT v = INPUT(x, 0);
    if (has_lo && v < lo) v = lo;
    if (has_hi && v > hi) v = hi;
    out[i] = TO_T(v);
}

#if IS_FLOAT
/* numpy computes x ** 0.5 as sqrt(x) and x ** 2 as x * x (so (-inf) ** 0.5 is nan). */
DEVICE CT numpy_pow(const CT v, const CT e)
{
    return e == (CT)0.5 ? sqrt(v) : e == (CT)2 ? v * v : pow(v, e);
}

KERNEL void power(const i64 n, const int ndim, const GLOBAL i64* meta,
                  const GLOBAL T* x, const CT exponent, GLOBAL T* out)
{
    const i64 i = GID0;
    if (i < n) out[i] = TO_T(numpy_pow(INPUT(x, 0), exponent));
}
#endif
