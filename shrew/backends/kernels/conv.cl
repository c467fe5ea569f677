/* Convolution lowering and pooling over [N, C, H, W] inputs.  meta holds the window
   geometry (below) followed by the strided operand's strides and offset; each work-item
   writes one element of a fresh C-contiguous output. */

typedef struct { i64 c, h, w, kh, kw, sh, sw, ph, pw, ho, wo; } Geometry;
#define GEOMETRY_LEN 11

DEVICE Geometry geometry(const GLOBAL i64* g)
{
    Geometry r = { g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10] };
    return r;
}

/* x [N, C, H, W] -> cols [N, C*KH*KW, HO*WO], rows in (c, ki, kj) order, zero padding. */
KERNEL void im2col(const i64 total, const GLOBAL i64* meta, const GLOBAL T* x, GLOBAL T* cols)
{
    const i64 i = GID0;
    if (i >= total) return;
    const Geometry g = geometry(meta);
    const GLOBAL i64* xs = meta + GEOMETRY_LEN;
    const i64 l = i % (g.ho * g.wo), rows = g.c * g.kh * g.kw;
    const i64 row = (i / (g.ho * g.wo)) % rows, n = i / (g.ho * g.wo * rows);
    const i64 c = row / (g.kh * g.kw), ki = (row / g.kw) % g.kh, kj = row % g.kw;
    const i64 h = (l / g.wo) * g.sh - g.ph + ki, w = (l % g.wo) * g.sw - g.pw + kj;
    cols[i] = h >= 0 && h < g.h && w >= 0 && w < g.w
            ? x[xs[4] + n * xs[0] + c * xs[1] + h * xs[2] + w * xs[3]] : TO_T(0);
}

/* The adjoint of im2col: each output pixel sums the columns that read it, in (ki, kj)
   order, so the result is the same bits every run. */
KERNEL void col2im(const i64 total, const GLOBAL i64* meta, const GLOBAL T* cols, GLOBAL T* out)
{
    const i64 i = GID0;
    if (i >= total) return;
    const Geometry g = geometry(meta);
    const GLOBAL i64* cs = meta + GEOMETRY_LEN;
    const i64 w = i % g.w, h = (i / g.w) % g.h, c = (i / (g.w * g.h)) % g.c;
    const i64 n = i / (g.w * g.h * g.c);
    CT acc = (CT)0;
    for (i64 ki = 0; ki < g.kh; ++ki) {
        const i64 th = h + g.ph - ki;
        if (th < 0 || th % g.sh != 0 || th / g.sh >= g.ho) continue;
        for (i64 kj = 0; kj < g.kw; ++kj) {
            const i64 tw = w + g.pw - kj;
            if (tw < 0 || tw % g.sw != 0 || tw / g.sw >= g.wo) continue;
            const i64 row = (c * g.kh + ki) * g.kw + kj, l = (th / g.sh) * g.wo + tw / g.sw;
            acc += LOAD(cols, cs[3] + n * cs[0] + row * cs[1] + l * cs[2]);
        }
    }
    out[i] = TO_T(acc);
}

/* Window max and its flat h*W+w index.  Padding reads `fill` (-inf, or the integer
   minimum); the first maximum in row-major window order wins, a NaN beating all, exactly
   as numpy.argmax over the padded window. */
KERNEL void max_pool2d(const i64 total, const GLOBAL i64* meta, const CT fill,
                       const GLOBAL T* x, GLOBAL T* values, GLOBAL i64* indices)
{
    const i64 i = GID0;
    if (i >= total) return;
    const Geometry g = geometry(meta);
    const GLOBAL i64* xs = meta + GEOMETRY_LEN;
    const i64 ow = i % g.wo, oh = (i / g.wo) % g.ho, c = (i / (g.wo * g.ho)) % g.c;
    const i64 n = i / (g.wo * g.ho * g.c);
    const i64 h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
    const GLOBAL T* plane = x + xs[4] + n * xs[0] + c * xs[1];
    CT best = fill;
    i64 at = h0 * g.w + w0;
    for (i64 h = h0; h < h0 + g.kh; ++h)
        for (i64 w = w0; w < w0 + g.kw; ++w) {
            const CT v = h >= 0 && h < g.h && w >= 0 && w < g.w ? LOAD(plane, h * xs[2] + w * xs[3]) : fill;
            if (v > best || (IS_NAN(v) && !IS_NAN(best))) { best = v; at = h * g.w + w; }
        }
    values[i] = TO_T(best);
    indices[i] = at;
}

/* Window mean with padded zeros counted: the divisor is always KH*KW. */
KERNEL void avg_pool2d(const i64 total, const GLOBAL i64* meta, const GLOBAL T* x, GLOBAL T* out)
{
    const i64 i = GID0;
    if (i >= total) return;
    const Geometry g = geometry(meta);
    const GLOBAL i64* xs = meta + GEOMETRY_LEN;
    const i64 ow = i % g.wo, oh = (i / g.wo) % g.ho, c = (i / (g.wo * g.ho)) % g.c;
    const i64 n = i / (g.wo * g.ho * g.c);
    const i64 h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
    const GLOBAL T* plane = x + xs[4] + n * xs[0] + c * xs[1];
    CT acc = (CT)0;
    for (i64 h = h0 < 0 ? 0 : h0; h < h0 + g.kh && h < g.h; ++h)
        for (i64 w = w0 < 0 ? 0 : w0; w < w0 + g.kw && w < g.w; ++w)
            acc += LOAD(plane, h * xs[2] + w * xs[3]);
    out[i] = TO_T(acc / (CT)(g.kh * g.kw));
}
