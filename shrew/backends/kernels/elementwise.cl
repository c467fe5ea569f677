/* Elementwise kernels.  Outputs are fresh C-contiguous arrays indexed by i; every input is
   read through its own layout in `meta`, so views (transposed, narrowed, broadcast with
   stride 0) are read in place, never copied.
   Each work-item walks its span of outputs in runs (FOR_RUNS in common.h). */

/* A plain span loop over [0, n) for kernels without inputs. */
#define FOR_SPAN(i) for (i64 i = GID0 * per_item, end_ = min(n, i + per_item); i < end_; ++i)

KERNEL void fill(const i64 n, const i64 per_item, const CT value, GLOBAL T* out)
{
    FOR_SPAN(i) out[i] = TO_T(value);
}

KERNEL void arange(const i64 n, const i64 per_item, GLOBAL T* out)
{
    FOR_SPAN(i) out[i] = TO_T(i);
}

/* Strided copy between two layouts: contiguous, cat, pad, copy_. */
KERNEL void copy(SPAN_ARGS, const GLOBAL T* src, GLOBAL T* dst)
{
    FOR_RUNS(const GLOBAL T* ps = RUN_AT(src, 0);
             GLOBAL T* pd = RUN_AT(dst, 1);
             const i64 ss = RUN_STEP(0), sd = RUN_STEP(1);
             RUN_LOOP(pd[k * sd] = ps[k * ss];))
}

/* ---- unary ------------------------------------------------------------------------- */
UNARY(neg, -v)
UNARY(square, v * v)
UNARY(relu, v < (CT)0 ? (CT)0 : v)   /* NaN passes through, as numpy.maximum */
UNARY(sign, v > (CT)0 ? (CT)1 : (v < (CT)0 ? (CT)-1 : v))

#if IS_FLOAT
/* exp of -|v| never overflows; pick the branch per sign. */
DEVICE CT sigmoid(const CT v)
{
    const CT e = EXP(v < (CT)0 ? v : -v);
    return v >= (CT)0 ? (CT)1 / ((CT)1 + e) : e / ((CT)1 + e);
}

UNARY(abs, fabs(v))
UNARY(exp, EXP(v))
UNARY(log, log(v))
UNARY(sqrt, sqrt(v))
UNARY(sigmoid, sigmoid(v))
UNARY(tanh, TANH(v))
/* gelu_tanh and its derivative, with u = c (v + a v^3), c = sqrt(2/pi), a = 0.044715:
   0.5 (1 + tanh(u)) = s = 1 / (1 + e^-2u) and 1 - tanh(u)^2 = 4 s (1 - s), one exp. */
DEVICE CT gelu_tanh_s(const CT v)
{
    const CT u = (CT)0.7978845608028654 * (v + (CT)0.044715 * v * v * v);
    return (CT)1 / ((CT)1 + EXP((CT)-2 * u));
}

DEVICE CT gelu_tanh_derivative(const CT v)
{
    const CT s = gelu_tanh_s(v);
    const CT du = (CT)0.7978845608028654 * ((CT)1 + (CT)0.134145 * v * v);
    return s + (CT)2 * v * s * ((CT)1 - s) * du;
}

UNARY(gelu, v * (CT)0.5 * ((CT)1 + erf(v * (CT)0.7071067811865476)))
UNARY(gelu_tanh, v * gelu_tanh_s(v))
UNARY(gelu_derivative, (CT)0.5 * ((CT)1 + erf(v * (CT)0.7071067811865476)) +
                       v * EXP((CT)-0.5 * v * v) * (CT)0.3989422804014327)
UNARY(gelu_tanh_derivative, gelu_tanh_derivative(v))
UNARY(silu, v * sigmoid(v))
UNARY(sin, sin(v))
UNARY(cos, cos(v))
UNARY(floor, floor(v))
UNARY(ceil, ceil(v))
UNARY(round, rint(v))                /* half to even, as numpy.round */
UNARY(erf, erf(v))

/* erf's inverse: Giles' single-precision approximation ("Approximating the erfinv
   function", 2010), then two Newton steps on erf(x) = y for the precision of CT. */
DEVICE CT erfinv_newton(const CT y)
{
    if (y == (CT)1 || y == (CT)-1) return y * (CT)INFINITY;
    CT w = -log(((CT)1 - y) * ((CT)1 + y)), p;   /* NaN outside [-1, 1] */
    if (w < (CT)5) {
        w -= (CT)2.5;
        p = (CT)2.81022636e-08;
        p = (CT)3.43273939e-07 + p * w;  p = (CT)-3.5233877e-06 + p * w;
        p = (CT)-4.39150654e-06 + p * w; p = (CT)0.00021858087 + p * w;
        p = (CT)-0.00125372503 + p * w;  p = (CT)-0.00417768164 + p * w;
        p = (CT)0.246640727 + p * w;     p = (CT)1.50140941 + p * w;
    } else {
        w = sqrt(w) - (CT)3;
        p = (CT)-0.000200214257;
        p = (CT)0.000100950558 + p * w;  p = (CT)0.00134934322 + p * w;
        p = (CT)-0.00367342844 + p * w;  p = (CT)0.00573950773 + p * w;
        p = (CT)-0.0076224613 + p * w;   p = (CT)0.00943887047 + p * w;
        p = (CT)1.00167406 + p * w;      p = (CT)2.83297682 + p * w;
    }
    CT x = p * y;
    for (int k = 0; k < 2; ++k)          /* d erf / dx = 2 / sqrt(pi) exp(-x^2) */
        x -= (erf(x) - y) / ((CT)1.1283791670955126 * exp(-x * x));
    return x;
}

UNARY(rsqrt, (CT)1 / sqrt(v))        /* as numpy's 1 / sqrt: OpenCL's rsqrt may be approximate */
UNARY(reciprocal, (CT)1 / v)
UNARY(log1p, log1p(v))
UNARY(expm1, expm1(v))
UNARY(log2, log2(v))
UNARY(log10, log10(v))
UNARY(exp2, exp2(v))
UNARY(tan, tan(v))
UNARY(asin, asin(v))
UNARY(acos, acos(v))
UNARY(atan, atan(v))
UNARY(sinh, sinh(v))
UNARY(cosh, cosh(v))
UNARY(asinh, asinh(v))
UNARY(acosh, acosh(v))
UNARY(atanh, atanh(v))
UNARY(erfc, erfc(v))
UNARY(erfinv, erfinv_newton(v))
UNARY(trunc, trunc(v))
#else
UNARY(abs, v < (CT)0 ? -v : v)
UNARY(floor, v)                      /* integers are their own floor, ceil, round and trunc */
UNARY(ceil, v)
UNARY(round, v)
UNARY(trunc, v)
UNARY(bitwise_not, IS_BOOL ? (CT)(v == (CT)0) : ~v)   /* on bool: logical not */
#endif

/* ---- binary and comparisons (inputs broadcast through stride-0 dims) --------------- */
BINARY(add, x + y)
BINARY(sub, x - y)
BINARY(mul, x * y)
BINARY(maximum, x > y || IS_NAN(x) ? x : y)   /* NaN wins, as numpy.maximum */
BINARY(minimum, x < y || IS_NAN(x) ? x : y)
#if IS_FLOAT
/* numpy's divmod (Python's // and %): the remainder takes the divisor's sign, and the
   quotient is rounded so that q * b + r == a holds as closely as it can. */
DEVICE CT float_remainder(const CT a, const CT b)
{
    const CT mod = fmod(a, b);
    if (mod == (CT)0) return copysign((CT)0, b);
    return (b < (CT)0) != (mod < (CT)0) ? mod + b : mod;
}

DEVICE CT float_floor_divide(const CT a, const CT b)
{
    if (b == (CT)0) return a / b;
    const CT mod = fmod(a, b);
    CT div = (a - mod) / b;
    if (mod != (CT)0 && (b < (CT)0) != (mod < (CT)0)) div -= (CT)1;
    if (div == (CT)0) return copysign((CT)0, a / b);
    const CT q = floor(div);
    return div - q > (CT)0.5 ? q + (CT)1 : q;
}

BINARY(div, x / y)                   /* never asked for integers (no trap on x / 0) */
BINARY(pow, pow(x, y))
BINARY(atan2, atan2(x, y))
BINARY(copysign, copysign(x, y))
BINARY(fmod, fmod(x, y))
BINARY(remainder, float_remainder(x, y))
BINARY(floor_divide, float_floor_divide(x, y))
BINARY(tanh_backward, x * ((CT)1 - y * y))   /* x = the output's gradient, y = tanh's output */
BINARY(sigmoid_backward, x * y * ((CT)1 - y))
#else
/* Integer powers by squaring; a negative exponent gives 1, +-1 or 0, as PyTorch. */
DEVICE CT int_pow(CT base, CT e)
{
    if (e < (CT)0) return base == (CT)1 ? (CT)1 : base == (CT)-1 ? ((e & 1) ? (CT)-1 : (CT)1) : (CT)0;
    CT out = 1;
    for (; e; e >>= 1, base *= base)
        if (e & 1) out *= base;
    return out;
}

/* A divisor of 0 gives 0 rather than a trap. */
DEVICE CT int_floor_divide(const CT a, const CT b)
{
    if (b == (CT)0) return 0;
    const CT q = a / b;
    return (a % b != (CT)0) && ((a < (CT)0) != (b < (CT)0)) ? q - (CT)1 : q;
}

DEVICE CT int_remainder(const CT a, const CT b)
{
    if (b == (CT)0) return 0;
    const CT r = a % b;
    return r != (CT)0 && (r < (CT)0) != (b < (CT)0) ? r + b : r;
}

BINARY(pow, int_pow(x, y))
BINARY(fmod, y == (CT)0 ? (CT)0 : x % y)
BINARY(remainder, int_remainder(x, y))
BINARY(floor_divide, int_floor_divide(x, y))
BINARY(bitwise_and, x & y)
BINARY(bitwise_or, x | y)
BINARY(bitwise_xor, x ^ y)
#endif

#define COMPARE(name, expr)                                                               \
KERNEL void compare_##name(SPAN_ARGS, const GLOBAL T* a, const GLOBAL T* b, GLOBAL u8* out) \
{                                                                                         \
    MAP2(a, b, (u8)(expr))                                                                \
}

COMPARE(eq, x == y)
COMPARE(ne, x != y)
COMPARE(lt, x < y)
COMPARE(le, x <= y)
COMPARE(gt, x > y)
COMPARE(ge, x >= y)

/* Both values are loaded and selected (no branch), and a value broadcast along the run (a
   scalar) is loaded once, so that the loop vectorizes. */
KERNEL void where(SPAN_ARGS, const GLOBAL u8* cond, const GLOBAL T* a, const GLOBAL T* b,
                  GLOBAL T* out)
{
    FOR_RUNS(const GLOBAL u8* pc = RUN_AT(cond, 0);
             const GLOBAL T* pa = RUN_AT(a, 1);
             const GLOBAL T* pb = RUN_AT(b, 2);
             const i64 sc = RUN_STEP(0), sa = RUN_STEP(1), sb = RUN_STEP(2);
             if (sb == 0) {
                 const T y = pb[0];
                 RUN_LOOP(const T x = pa[k * sa]; out[i + k] = pc[k * sc] ? x : y;)
             } else if (sa == 0) {
                 const T x = pa[0];
                 RUN_LOOP(const T y = pb[k * sb]; out[i + k] = pc[k * sc] ? x : y;)
             } else {
                 RUN_LOOP(const T x = pa[k * sa], y = pb[k * sb];
                          out[i + k] = pc[k * sc] ? x : y;)
             })
}

/* ---- scalar-parameter maps ---------------------------------------------------------- */
KERNEL void affine(SPAN_ARGS, const GLOBAL T* x, const CT mul, const CT add, GLOBAL T* out)
{
    MAP1(x, TO_T(v * mul + add))
}

/* A NaN in x or in a bound gives NaN, as PyTorch's clamp (numpy.maximum / minimum): a NaN
   bound is taken, a NaN x is kept (no comparison with it holds). */
DEVICE CT clip_value(const CT v, const CT lo, const CT hi, const int has_lo, const int has_hi)
{
    const CT low = has_lo && (v < lo || IS_NAN(lo)) ? lo : v;
    return has_hi && (low > hi || IS_NAN(hi)) ? hi : low;
}

KERNEL void clip(SPAN_ARGS, const GLOBAL T* x, const CT lo, const CT hi, const int has_lo,
                 const int has_hi, GLOBAL T* out)
{
    MAP1(x, TO_T(clip_value(v, lo, hi, has_lo, has_hi)))
}

#if IS_FLOAT
/* numpy computes x ** 0.5 as sqrt(x) and x ** 2 as x * x (so (-inf) ** 0.5 is nan). */
/* numpy's special cases (square root, square) and PyTorch's cube, which it multiplies out */
DEVICE CT numpy_pow(const CT v, const CT e)
{
    return e == (CT)0.5 ? sqrt(v) : e == (CT)2 ? v * v : e == (CT)3 ? v * v * v : pow(v, e);
}

KERNEL void power(SPAN_ARGS, const GLOBAL T* x, const CT exponent, GLOBAL T* out)
{
    MAP1(x, TO_T(numpy_pow(v, exponent)))
}
#endif
