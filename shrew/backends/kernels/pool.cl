/* Pooling over [N, C, H, W] inputs (and [N, C, D, H, W]: max_pool3d, avg_pool3d, whose
   meta holds the Volume geometry in place of the Geometry, three dilations in place of
   two).  meta holds the window geometry (common.h, with the
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

/* The 3-d pools: meta holds the Volume geometry, dd, dh, dw, count_include_pad and
   divisor_override, then x's strides and offset. */
#define POOL3_META_LEN (VOLUME_LEN + 5)

/* max_pool2d's window maximum over a volume; the index is the flat (z*H + y)*W + x. */
KERNEL void max_pool3d(const i64 total, const GLOBAL i64* meta, const CT fill,
                       const GLOBAL T* x, GLOBAL T* values, GLOBAL i64* indices)
{
    const i64 i = GID0;
    if (i >= total) return;
    const Volume g = volume(meta);
    const i64 dd = meta[VOLUME_LEN], dh = meta[VOLUME_LEN + 1], dw = meta[VOLUME_LEN + 2];
    const GLOBAL i64* xs = meta + POOL3_META_LEN;
    const i64 ox = i % g.wout, oy = (i / g.wout) % g.hout, oz = (i / (g.wout * g.hout)) % g.dout;
    const i64 c = (i / (g.wout * g.hout * g.dout)) % g.c, n = i / (g.wout * g.hout * g.dout * g.c);
    const i64 z0 = oz * g.sd - g.pd, y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
    const GLOBAL T* plane = x + xs[5] + n * xs[0] + c * xs[1];
    CT best = fill, nan = fill;
    i64 at = (first_tap(z0, dd) * g.h + first_tap(y0, dh)) * g.w + first_tap(x0, dw);
    i64 nan_at = -1;
    for (i64 z = z0; z < z0 + g.kd * dd; z += dd)
        for (i64 y = y0; y < y0 + g.kh * dh; y += dh)
            for (i64 v = x0; v < x0 + g.kw * dw; v += dw) {
                const bool inside = z >= 0 && z < g.d && y >= 0 && y < g.h && v >= 0 && v < g.w;
                const CT val = inside ? LOAD(plane, z * xs[2] + y * xs[3] + v * xs[4]) : fill;
                const i64 flat = (z * g.h + y) * g.w + v;
                if (val > best) { best = val; at = flat; }
                if (IS_NAN(val) && nan_at < 0) { nan = val; nan_at = flat; }
            }
    values[i] = TO_T(nan_at < 0 ? best : nan);
    indices[i] = nan_at < 0 ? at : nan_at;
}

/* avg_pool2d's window mean over a volume, with its divisor choices. */
KERNEL void avg_pool3d(const i64 total, const GLOBAL i64* meta, const GLOBAL T* x, GLOBAL T* out)
{
    const i64 i = GID0;
    if (i >= total) return;
    const Volume g = volume(meta);
    const i64 include_pad = meta[VOLUME_LEN + 3], divisor_override = meta[VOLUME_LEN + 4];
    const GLOBAL i64* xs = meta + POOL3_META_LEN;
    const i64 ox = i % g.wout, oy = (i / g.wout) % g.hout, oz = (i / (g.wout * g.hout)) % g.dout;
    const i64 c = (i / (g.wout * g.hout * g.dout)) % g.c, n = i / (g.wout * g.hout * g.dout * g.c);
    const i64 z0 = oz * g.sd - g.pd, y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
    const i64 z1 = min(z0 + g.kd, g.d + g.pd), y1 = min(y0 + g.kh, g.h + g.ph);
    const i64 x1 = min(x0 + g.kw, g.w + g.pw);
    const i64 front = max(z0, (i64)0), top = max(y0, (i64)0), left = max(x0, (i64)0);
    const i64 back = min(z1, g.d), bottom = min(y1, g.h), right = min(x1, g.w);
    const GLOBAL T* plane = x + xs[5] + n * xs[0] + c * xs[1];
    CT acc = (CT)0;
    for (i64 z = front; z < back; ++z)
        for (i64 y = top; y < bottom; ++y)
            for (i64 v = left; v < right; ++v)
                acc += LOAD(plane, z * xs[2] + y * xs[3] + v * xs[4]);
    const i64 divisor = divisor_override ? divisor_override
        : include_pad ? (z1 - z0) * (y1 - y0) * (x1 - x0)
                      : (back - front) * (bottom - top) * (right - left);
    out[i] = TO_T(acc / (CT)divisor);
}
