"""C source of the kernels: one function per kind of node the step uses.

Elementwise kernels (every primitive that maps elements) are generated from one template:
a strided walk over the output's shape with one C expression per primitive and dtype.
The others are fixed C functions on C-contiguous float32 arrays.
"""
from __future__ import annotations

ELEMENTWISE_TEMPLATE = """\
static void {name}(int nd, const long *shape, {out_t} *o{params})
{{
    long idx[SHREW_MAX_DIMS] = {{0}}, total = 1, inner = shape[nd - 1], done;
    long {offs};
    int d;
    for (d = 0; d < nd; ++d) total *= shape[d];
    for (done = 0; done < total; done += inner) {{
        long i;
        for (i = 0; i < inner; ++i) {{
{loads}
            o[done + i] = ({out_t})({expr});
        }}
        for (d = nd - 2; d >= 0; --d) {{
            idx[d] += 1;
{advance}
            if (idx[d] < shape[d]) break;
{rewind}
            idx[d] = 0;
        }}
    }}
}}
"""


def elementwise(name: str, out_t: str, in_ts: list[str], expr: str) -> str:
    """A strided elementwise kernel: o (contiguous) = expr(a0, a1, ...) of inputs read with
    their own strides (0 where broadcast)."""
    k = range(len(in_ts))
    return ELEMENTWISE_TEMPLATE.format(
        name=name, out_t=out_t,
        params="".join(f", const {t} *x{i}, const long *s{i}" for i, t in zip(k, in_ts)),
        offs=", ".join(f"p{i} = 0" for i in k),
        loads="\n".join(f"            const {t} a{i} = x{i}[p{i} + i * s{i}[nd - 1]];"
                        for i, t in zip(k, in_ts)),
        expr=expr,
        advance="\n".join(f"            p{i} += s{i}[d];" for i in k),
        rewind="\n".join(f"            p{i} -= s{i}[d] * shape[d];" for i in k))


UNARY_FLOAT = {
    "neg": "-a0", "abs": "fabsf(a0)", "exp": "expf(a0)", "log": "logf(a0)",
    "sqrt": "sqrtf(a0)", "square": "a0 * a0", "relu": "a0 < 0.0f ? 0.0f : a0",
    "sigmoid": "shrew_sigmoid(a0)", "tanh": "tanhf(a0)",
    "gelu": "a0 * 0.5f * (1.0f + erff(a0 * 0.70710678118654752f))",
    "gelu_derivative": "0.5f * (1.0f + erff(a0 * 0.70710678118654752f)) + "
                       "a0 * (expf(a0 * a0 * -0.5f) * 0.39894228040143268f)",
    "gelu_tanh": "shrew_gelu_tanh(a0, 0)", "gelu_tanh_derivative": "shrew_gelu_tanh(a0, 1)",
    "silu": "a0 * shrew_sigmoid(a0)", "sin": "sinf(a0)", "cos": "cosf(a0)",
    "floor": "floorf(a0)", "ceil": "ceilf(a0)", "round": "nearbyintf(a0)", "erf": "erff(a0)",
    "sign": "a0 > 0.0f ? 1.0f : (a0 < 0.0f ? -1.0f : a0)",
}
"""Unary functions on float32 (the others, on integers, are refused at export)."""

BINARY = {"add": "a0 + a1", "sub": "a0 - a1", "mul": "a0 * a1", "div": "a0 / a1",
          "tanh_backward": "a0 * (1.0f - a1 * a1)", "sigmoid_backward": "a0 * a1 * (1.0f - a1)"}
COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}

HELPERS = {
    "gelu_tanh": """\
static float shrew_gelu_tanh(float x, int derivative)
{
    /* t = tanh(c (x + a x^3)); 0.5 x (1 + t), or its derivative
       0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2), in the cpu backend's order */
    const float u = (x * x * 0.035677408136300125f + 0.7978845608028654f) * x, t = tanhf(u);
    if (!derivative) return (1.0f + t) * x * 0.5f;
    const float slope = x * x * 0.10703222440890037f + 0.7978845608028654f;
    return ((1.0f + t) + slope * (1.0f - t * t) * x) * 0.5f;
}
""",
    "sigmoid": """\
static float shrew_sigmoid(float x)
{
    /* exp of -|x| never overflows; the branch per sign, as shrew's cpu backend */
    const float e = expf(-fabsf(x));
    return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
""",
}

REDUCE_TEMPLATE = """\
static void {name}(int nd, const long *shape, const {in_t} *x, const long *sx,
                   const unsigned char *reduced, {out_t} *o)
{{
    /* kept dims walk the output in order; for each, the reduced dims are summed (in
       double, so the result is at least as accurate as numpy's pairwise float sum) */
    long ks[SHREW_MAX_DIMS], kst[SHREW_MAX_DIMS], rs[SHREW_MAX_DIMS], rst[SHREW_MAX_DIMS];
    long kidx[SHREW_MAX_DIMS] = {{0}}, kept = 1, count = 1, out, koff = 0;
    int d, nk = 0, nr = 0;
    for (d = 0; d < nd; ++d) {{
        if (reduced[d]) {{ rs[nr] = shape[d]; rst[nr++] = sx[d]; count *= shape[d]; }}
        else {{ ks[nk] = shape[d]; kst[nk++] = sx[d]; kept *= shape[d]; }}
    }}
    for (out = 0; out < kept; ++out) {{
        long ridx[SHREW_MAX_DIMS] = {{0}}, roff = 0, r;
        {acc_t} acc = {init};
        for (r = 0; r < count; ++r) {{
            const {in_t} v = x[koff + roff];
            {step};
            for (d = nr - 1; d >= 0; --d) {{
                ridx[d] += 1; roff += rst[d];
                if (ridx[d] < rs[d]) break;
                roff -= rst[d] * rs[d]; ridx[d] = 0;
            }}
        }}
        o[out] = ({out_t})({finish});
        for (d = nk - 1; d >= 0; --d) {{
            kidx[d] += 1; koff += kst[d];
            if (kidx[d] < ks[d]) break;
            koff -= kst[d] * ks[d]; kidx[d] = 0;
        }}
    }}
}}
"""


def reduce(name: str, fn: str, in_t: str, out_t: str) -> str:
    if fn in ("sum", "mean"):
        acc_t = "double" if out_t == "float" else "int64_t"
        init, step = "0", "acc += v"
        finish = "acc / (double)count" if fn == "mean" else "acc"
    else:  # max / min propagate NaN, as numpy
        acc_t, init, finish = in_t, "x[koff]", "acc"
        op = ">" if fn == "max" else "<"
        step = f"if (v {op} acc || v != v) acc = v"
    return REDUCE_TEMPLATE.format(name=name, in_t=in_t, out_t=out_t, acc_t=acc_t, init=init,
                                  step=step, finish=finish)


FIXED = {
    "matmul": """\
static void shrew_gemm(long m, long k, long n, const float *a, const float *b, float *c)
{
#ifdef SHREW_USE_CBLAS
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f,
                a, (int)k, b, (int)n, 0.0f, c, (int)n);
#else
    /* cache-blocked: a BP x BJ block of b stays in cache while every row of a passes
       over it, four rows at a time so that each element of b loaded serves four
       products; each c element still sums its products in order of p */
    enum { BP = 128, BJ = 256 };
    long i, p0, j0, p, j;
    memset(c, 0, sizeof(float) * (size_t)(m * n));
    for (p0 = 0; p0 < k; p0 += BP) {
        const long pe = p0 + BP < k ? p0 + BP : k;
        for (j0 = 0; j0 < n; j0 += BJ) {
            const long je = j0 + BJ < n ? j0 + BJ : n;
            for (i = 0; i + 4 <= m; i += 4) {
                float *restrict c0 = c + i * n, *restrict c1 = c0 + n;
                float *restrict c2 = c1 + n, *restrict c3 = c2 + n;
                for (p = p0; p < pe; ++p) {
                    const float a0 = a[i * k + p], a1 = a[(i + 1) * k + p];
                    const float a2 = a[(i + 2) * k + p], a3 = a[(i + 3) * k + p];
                    const float *restrict brow = b + p * n;
                    for (j = j0; j < je; ++j) {
                        const float bj = brow[j];
                        c0[j] += a0 * bj; c1[j] += a1 * bj; c2[j] += a2 * bj; c3[j] += a3 * bj;
                    }
                }
            }
            for (; i < m; ++i)
                for (p = p0; p < pe; ++p) {
                    const float aip = a[i * k + p];
                    const float *restrict brow = b + p * n;
                    float *restrict crow = c + i * n;
                    for (j = j0; j < je; ++j) crow[j] += aip * brow[j];
                }
        }
    }
#endif
}

static void shrew_matmul(int nb, const long *batch, const long *sa, const long *sb,
                         long m, long k, long n, const float *a, const float *b, float *c)
{
    /* batch dims broadcast: sa / sb are each operand's batch strides (0 if broadcast) */
    long idx[SHREW_MAX_DIMS] = {0}, total = 1, t, pa = 0, pb = 0;
    int d;
    for (d = 0; d < nb; ++d) total *= batch[d];
    for (t = 0; t < total; ++t) {
        shrew_gemm(m, k, n, a + pa, b + pb, c + t * m * n);
        for (d = nb - 1; d >= 0; --d) {
            idx[d] += 1; pa += sa[d]; pb += sb[d];
            if (idx[d] < batch[d]) break;
            pa -= sa[d] * batch[d]; pb -= sb[d] * batch[d]; idx[d] = 0;
        }
    }
}
""",
    "softmax": """\
static void shrew_softmax(long outer, long len, long inner, int log_out, const float *x,
                          float *y)
{
    long o, i, j;
    for (o = 0; o < outer; ++o)
        for (i = 0; i < inner; ++i) {
            const float *xr = x + o * len * inner + i;
            float *yr = y + o * len * inner + i;
            float top = xr[0];
            double sum = 0.0;
            for (j = 1; j < len; ++j) {
                const float v = xr[j * inner];
                if (v > top || v != v) top = v;  /* NaN propagates, as numpy's max */
            }
            for (j = 0; j < len; ++j) sum += expf(xr[j * inner] - top);
            for (j = 0; j < len; ++j) {
                const float z = xr[j * inner] - top;
                yr[j * inner] = log_out ? z - (float)log(sum) : expf(z) / (float)sum;
            }
        }
}
""",
    "log_softmax_backward": """\
static void shrew_log_softmax_backward(long outer, long len, long inner, const float *y,
                                       const float *g, float *out)
{
    /* g - exp(y) * sum(g) along the dim: log_softmax's gradient in one pass per row */
    long o, i, j;
    for (o = 0; o < outer; ++o)
        for (i = 0; i < inner; ++i) {
            const long base = o * len * inner + i;
            double sum = 0.0;
            float total;
            for (j = 0; j < len; ++j) sum += g[base + j * inner];
            total = (float)sum;
            for (j = 0; j < len; ++j)
                out[base + j * inner] = g[base + j * inner] - expf(y[base + j * inner]) * total;
        }
}
""",
    "standardize": """\
static void shrew_standardize(long rows, long cols, float eps, const float *x, float *y,
                              float *rstd)
{
    long r, j;
    for (r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        double sum = 0.0, sq = 0.0;
        float mean, var;
        for (j = 0; j < cols; ++j) sum += xr[j];
        mean = (float)(sum / (double)cols);
        for (j = 0; j < cols; ++j) { const float c = xr[j] - mean; sq += (double)(c * c); }
        var = (float)(sq / (double)cols);
        rstd[r] = 1.0f / sqrtf(var + eps);
        for (j = 0; j < cols; ++j) yr[j] = (xr[j] - mean) * rstd[r];
    }
}
""",
    "im2col": """\
static void shrew_im2col(long n, long c, long h, long w, long kh, long kw, long sh, long sw,
                         long ph, long pw, long ho, long wo, const float *x, float *cols)
{
    /* [N, C, H, W] -> [N, C*kh*kw, Ho*Wo], zero padding */
    long b, ch, i, j, oy, ox;
    for (b = 0; b < n; ++b)
        for (ch = 0; ch < c; ++ch)
            for (i = 0; i < kh; ++i)
                for (j = 0; j < kw; ++j) {
                    float *row = cols + ((b * c + ch) * kh * kw + i * kw + j) * ho * wo;
                    const float *plane = x + (b * c + ch) * h * w;
                    for (oy = 0; oy < ho; ++oy) {
                        const long y = oy * sh - ph + i;
                        for (ox = 0; ox < wo; ++ox) {
                            const long xx = ox * sw - pw + j;
                            row[oy * wo + ox] = (y >= 0 && y < h && xx >= 0 && xx < w)
                                ? plane[y * w + xx] : 0.0f;
                        }
                    }
                }
}
""",
    "col2im": """\
static void shrew_col2im(long n, long c, long h, long w, long kh, long kw, long sh, long sw,
                         long ph, long pw, long ho, long wo, const float *cols, float *x)
{
    /* the adjoint of im2col: each column entry is added back to its input pixel */
    long b, ch, i, j, oy, ox;
    memset(x, 0, sizeof(float) * (size_t)(n * c * h * w));
    for (b = 0; b < n; ++b)
        for (ch = 0; ch < c; ++ch)
            for (i = 0; i < kh; ++i)
                for (j = 0; j < kw; ++j) {
                    const float *row = cols + ((b * c + ch) * kh * kw + i * kw + j) * ho * wo;
                    float *plane = x + (b * c + ch) * h * w;
                    for (oy = 0; oy < ho; ++oy) {
                        const long y = oy * sh - ph + i;
                        if (y < 0 || y >= h) continue;
                        for (ox = 0; ox < wo; ++ox) {
                            const long xx = ox * sw - pw + j;
                            if (xx >= 0 && xx < w) plane[y * w + xx] += row[oy * wo + ox];
                        }
                    }
                }
}
""",
    "max_pool2d": """\
static void shrew_max_pool2d(long planes, long h, long w, long kh, long kw, long sh, long sw,
                             long ph, long pw, long ho, long wo, const float *x, float *y,
                             int64_t *arg)
{
    /* the first maximum in row-major window order (NaN wins), as shrew's cpu backend;
       padding never wins: a window whose maximum is -inf names its first element inside */
    long p, oy, ox, i, j;
    for (p = 0; p < planes; ++p) {
        const float *plane = x + p * h * w;
        for (oy = 0; oy < ho; ++oy)
            for (ox = 0; ox < wo; ++ox) {
                const long top = oy * sh - ph, left = ox * sw - pw;
                float best = -INFINITY;
                long at = (top > 0 ? top : 0) * w + (left > 0 ? left : 0);
                for (i = 0; i < kh; ++i)
                    for (j = 0; j < kw; ++j) {
                        const long yy = top + i, xx = left + j;
                        float v;
                        if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                        v = plane[yy * w + xx];
                        if (v > best || (v != v && best == best)) { best = v; at = yy * w + xx; }
                    }
                y[(p * ho + oy) * wo + ox] = best;
                arg[(p * ho + oy) * wo + ox] = at;
            }
    }
}
""",
    "avg_pool2d": """\
static void shrew_avg_pool2d(long planes, long h, long w, long kh, long kw, long sh, long sw,
                             long ph, long pw, long ho, long wo, const float *x, float *y)
{
    long p, oy, ox, i, j;
    for (p = 0; p < planes; ++p)
        for (oy = 0; oy < ho; ++oy)
            for (ox = 0; ox < wo; ++ox) {
                double sum = 0.0;
                for (i = 0; i < kh; ++i)
                    for (j = 0; j < kw; ++j) {
                        const long yy = oy * sh - ph + i, xx = ox * sw - pw + j;
                        if (yy >= 0 && yy < h && xx >= 0 && xx < w) sum += x[(p * h + yy) * w + xx];
                    }
                y[(p * ho + oy) * wo + ox] = (float)(sum / (double)(kh * kw));
            }
}
""",
    "gather": """\
static void shrew_gather(int nd, int dim, const long *xshape, const long *ishape,
                         const float *x, const int64_t *index, float *out)
{
    /* out[i][j] = x[index[i][j]][j] (dim 0 shown); x may be larger than index */
    long idx[SHREW_MAX_DIMS] = {0}, total = 1, t;
    int d;
    for (d = 0; d < nd; ++d) total *= ishape[d];
    for (t = 0; t < total; ++t) {
        long off = 0;
        for (d = 0; d < nd; ++d) off = off * xshape[d] + (d == dim ? (long)index[t] : idx[d]);
        out[t] = x[off];
        for (d = nd - 1; d >= 0; --d) { if (++idx[d] < ishape[d]) break; idx[d] = 0; }
    }
}
""",
    "scatter_add": """\
static void shrew_scatter_add(int nd, int dim, const long *shape, const long *ishape,
                              const long *sshape, const int64_t *index, const float *src,
                              float *out)
{
    /* zeros(shape), then out[index[i][j]][j] += src[i][j] in index order */
    long idx[SHREW_MAX_DIMS] = {0}, total = 1, size = 1, t;
    int d;
    for (d = 0; d < nd; ++d) { total *= ishape[d]; size *= shape[d]; }
    memset(out, 0, sizeof(float) * (size_t)size);
    for (t = 0; t < total; ++t) {
        long off = 0, soff = 0;
        for (d = 0; d < nd; ++d) {
            off = off * shape[d] + (d == dim ? (long)index[t] : idx[d]);
            soff = soff * sshape[d] + idx[d];
        }
        out[off] += src[soff];
        for (d = nd - 1; d >= 0; --d) { if (++idx[d] < ishape[d]) break; idx[d] = 0; }
    }
}
""",
    "pad": """\
static void shrew_pad(int nd, const long *xshape, const long *before, const long *oshape,
                      float value, const float *x, float *out)
{
    /* out filled with value, then x copied in at offset `before` in each dim */
    long idx[SHREW_MAX_DIMS] = {0}, total = 1, size = 1, t;
    int d;
    for (d = 0; d < nd; ++d) { total *= xshape[d]; size *= oshape[d]; }
    for (t = 0; t < size; ++t) out[t] = value;
    for (t = 0; t < total; ++t) {
        long off = 0;
        for (d = 0; d < nd; ++d) off = off * oshape[d] + idx[d] + before[d];
        out[off] = x[t];
        for (d = nd - 1; d >= 0; --d) { if (++idx[d] < xshape[d]) break; idx[d] = 0; }
    }
}
""",
    "full": """\
static void shrew_fill(void *out, const void *value, size_t size, long count)
{
    long i;
    for (i = 0; i < count; ++i) memcpy((char *)out + (size_t)i * size, value, size);
}
""",
    "rand": """\
static void shrew_rand(float *out, long count)
{
    /* numpy's Generator(Philox).random(float64), rounded to float32 and kept below 1 */
    long i;
    for (i = 0; i < count; ++i) {
        const double u = (double)(shrew_philox_next() >> 11) * (1.0 / 9007199254740992.0);
        const float f = (float)u;
        out[i] = f < 0.99999994f ? f : 0.99999994f;
    }
}
""",
}
