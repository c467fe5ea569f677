/* Pooling over [N, C, H, W] inputs.  meta holds the window geometry (common.h) followed
   by the strided operand's strides and offset.  Outputs are fresh C-contiguous arrays; a
   work-item writes one element of one. */

/* Window max and its flat h*W+w index.  Padding reads `fill` (-inf, or the integer
   minimum); the first maximum in row-major window order wins, a NaN beating all, as
   numpy.argmax over the padded window, except that padding is never named: a window whose
   values all equal `fill` names its first element inside the plane.  The first NaN is
   tracked apart from the max, two simple selects per tap rather than one compound test
   (which vectorizes worse). */
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
    CT best = fill, nan = fill;
    i64 at = (h0 < 0 ? 0 : h0) * g.w + (w0 < 0 ? 0 : w0), nan_at = -1;
    for (i64 h = h0; h < h0 + g.kh; ++h)
        for (i64 w = w0; w < w0 + g.kw; ++w) {
            const CT v = h >= 0 && h < g.h && w >= 0 && w < g.w ? LOAD(plane, h * xs[2] + w * xs[3]) : fill;
            if (v > best) { best = v; at = h * g.w + w; }
            if (IS_NAN(v) && nan_at < 0) { nan = v; nan_at = h * g.w + w; }
        }
    values[i] = TO_T(nan_at < 0 ? best : nan);
    indices[i] = nan_at < 0 ? at : nan_at;
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
