/* Pooling over [N, C, H, W] inputs.  meta holds the window geometry (common.h, with the
   output size PyTorch's ceil_mode gives), then dh, dw (the dilation), count_include_pad
   and divisor_override (0: none) of avg_pool2d, then the strided operand's strides and
   offset.  Outputs are fresh C-contiguous arrays; a work-item writes one element of one.
   A window may reach past the padded input on the right (ceil_mode): those taps count as
   padding. */
#define POOL_META_LEN (GEOMETRY_LEN + 4)

/* The first tap at or after `start`, `step` apart, that is not before 0 (PyTorch's
   `while (start < 0) start += dilation`). */
DEVICE i64 first_tap(const i64 start, const i64 step)
{
    return start < 0 ? start + (-start + step - 1) / step * step : start;
}

/* Window max and its flat h*W+w index.  Padding reads `fill` (-inf, or the integer
   minimum); the first maximum in row-major window order wins, a NaN beating all, as
   numpy.argmax over the padded window, except that padding is never named: a window whose
   values all equal `fill` names its first tap inside the plane.  The first NaN is
   tracked apart from the max, two simple selects per tap rather than one compound test
   (which vectorizes worse). */
KERNEL void max_pool2d(const i64 total, const GLOBAL i64* meta, const CT fill,
                       const GLOBAL T* x, GLOBAL T* values, GLOBAL i64* indices)
{
    const i64 i = GID0;
    if (i >= total) return;
    const Geometry g = geometry(meta);
    const i64 dh = meta[GEOMETRY_LEN], dw = meta[GEOMETRY_LEN + 1];
    const GLOBAL i64* xs = meta + POOL_META_LEN;
    const i64 ow = i % g.wo, oh = (i / g.wo) % g.ho, c = (i / (g.wo * g.ho)) % g.c;
    const i64 n = i / (g.wo * g.ho * g.c);
    const i64 h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
    const GLOBAL T* plane = x + xs[4] + n * xs[0] + c * xs[1];
    CT best = fill, nan = fill;
    i64 at = first_tap(h0, dh) * g.w + first_tap(w0, dw), nan_at = -1;
    for (i64 h = h0; h < h0 + g.kh * dh; h += dh)
        for (i64 w = w0; w < w0 + g.kw * dw; w += dw) {
            const CT v = h >= 0 && h < g.h && w >= 0 && w < g.w ? LOAD(plane, h * xs[2] + w * xs[3]) : fill;
            if (v > best) { best = v; at = h * g.w + w; }
            if (IS_NAN(v) && nan_at < 0) { nan = v; nan_at = h * g.w + w; }
        }
    values[i] = TO_T(nan_at < 0 ? best : nan);
    indices[i] = nan_at < 0 ? at : nan_at;
}

/* Window mean as PyTorch's avg_pool2d takes it: the sum of the taps inside the input over
   divisor_override if given, else over the taps counted inside the padded input
   (count_include_pad) or inside the input alone. */
KERNEL void avg_pool2d(const i64 total, const GLOBAL i64* meta, const GLOBAL T* x, GLOBAL T* out)
{
    const i64 i = GID0;
    if (i >= total) return;
    const Geometry g = geometry(meta);
    const i64 include_pad = meta[GEOMETRY_LEN + 2], divisor_override = meta[GEOMETRY_LEN + 3];
    const GLOBAL i64* xs = meta + POOL_META_LEN;
    const i64 ow = i % g.wo, oh = (i / g.wo) % g.ho, c = (i / (g.wo * g.ho)) % g.c;
    const i64 n = i / (g.wo * g.ho * g.c);
    const i64 h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
    const i64 h1 = min(h0 + g.kh, g.h + g.ph), w1 = min(w0 + g.kw, g.w + g.pw);
    const i64 top = max(h0, (i64)0), left = max(w0, (i64)0);
    const i64 bottom = min(h1, g.h), right = min(w1, g.w);
    const GLOBAL T* plane = x + xs[4] + n * xs[0] + c * xs[1];
    CT acc = (CT)0;
    for (i64 h = top; h < bottom; ++h)
        for (i64 w = left; w < right; ++w)
            acc += LOAD(plane, h * xs[2] + w * xs[3]);
    const i64 divisor = divisor_override ? divisor_override
        : include_pad ? (h1 - h0) * (w1 - w0) : (bottom - top) * (right - left);
    out[i] = TO_T(acc / (CT)divisor);
}
