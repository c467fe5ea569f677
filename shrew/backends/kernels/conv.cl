/* Convolution lowering over [N, C, H, W] inputs (and [N, C, D, H, W]: im2col3d,
   col2im3d, whose meta holds the Volume geometry instead).  meta holds the window geometry
   (common.h) followed by the strided operand's strides and offset.  Outputs are fresh
   C-contiguous arrays; an im2col or col2im work-item writes a contiguous run. */

/* x [N, C, H, W] -> cols [N, C*KH*KW, HO*WO], rows in (c, ki, kj) order, zero padding.
   A work-item writes one row of cols (HO*WO contiguous outputs), the index arithmetic paid
   once per row.  Output column ow reads image column ow * sw + w0, inside the image for
   lo <= ow < hi: each output row is zeros, a copy, zeros, with no test per element (and a
   plain contiguous copy when the stride and x's column step are 1, which vectorizes). */
KERNEL void im2col(const i64 rows, const GLOBAL i64* meta, const GLOBAL T* x, GLOBAL T* cols)
{
    const i64 i = GID0;
    if (i >= rows) return;
    const Geometry g = geometry(meta);
    const GLOBAL i64* xs = meta + GEOMETRY_LEN;
    const i64 row = i % (g.c * g.kh * g.kw), n = i / (g.c * g.kh * g.kw);
    const i64 c = row / (g.kh * g.kw), ki = (row / g.kw) % g.kh, kj = row % g.kw;
    const i64 w0 = kj - g.pw, step = g.sw * xs[3];
    const i64 lo = w0 >= 0 ? 0 : (g.sw - 1 - w0) / g.sw;
    const i64 end = g.w - w0 <= 0 ? 0 : (g.w - w0 + g.sw - 1) / g.sw;
    const i64 hi = end < lo ? lo : end < g.wo ? end : g.wo;
    GLOBAL T* out = cols + i * g.ho * g.wo;
    for (i64 oh = 0; oh < g.ho; ++oh, out += g.wo) {
        const i64 h = oh * g.sh - g.ph + ki;
        const bool in_h = h >= 0 && h < g.h;
        const i64 a = in_h ? lo : g.wo, b = in_h ? hi : g.wo;
        const i64 base = xs[4] + n * xs[0] + c * xs[1] + h * xs[2] + w0 * xs[3];
        i64 ow = 0;
        for (; ow < a; ++ow) out[ow] = TO_T(0);
        if (step == 1)
            for (; ow < b; ++ow) out[ow] = x[base + ow];
        else
            for (; ow < b; ++ow) out[ow] = x[base + ow * step];
        for (; ow < g.wo; ++ow) out[ow] = TO_T(0);
    }
}

/* The adjoint of im2col: each output pixel sums the columns that read it, in (ki, kj)
   order, so the result is the same bits every run.  A work-item computes one image row
   (n, c, h) of W pixels.  Pixel w is read by the taps kj = (w + pw) % sw, + sw, ... at
   output column ow = (w + pw - kj) / sw, which falls by one per tap: no division per tap. */
KERNEL void col2im(const i64 runs, const GLOBAL i64* meta, const GLOBAL T* cols, GLOBAL T* out)
{
    const i64 i = GID0;
    if (i >= runs) return;
    const Geometry g = geometry(meta);
    const GLOBAL i64* cs = meta + GEOMETRY_LEN;
    const i64 h = i % g.h, c = (i / g.h) % g.c, n = i / (g.h * g.c);
    const i64 ki0 = (h + g.ph) % g.sh, oh0 = (h + g.ph - ki0) / g.sh;
    const GLOBAL T* plane = cols + cs[3] + n * cs[0] + c * g.kh * g.kw * cs[1];
    GLOBAL T* dst = out + i * g.w;
    for (i64 w = 0; w < g.w; ++w) {
        const i64 kj0 = (w + g.pw) % g.sw, ow0 = (w + g.pw - kj0) / g.sw;
        CT acc = (CT)0;
        for (i64 ki = ki0, oh = oh0; ki < g.kh && oh >= 0; ki += g.sh, --oh) {
            if (oh >= g.ho) continue;
            for (i64 kj = kj0, ow = ow0; kj < g.kw && ow >= 0; kj += g.sw, --ow)
                if (ow < g.wo)
                    acc += LOAD(plane, (ki * g.kw + kj) * cs[1] + (oh * g.wo + ow) * cs[2]);
        }
        dst[w] = TO_T(acc);
    }
}

/* im2col of a volume: x [N, C, D, H, W] -> cols [N, C*KD*KH*KW, DO*HO*WO], rows in
   (c, kz, ky, kx) order, zero padding.  A work-item writes one row of cols. */
KERNEL void im2col3d(const i64 rows, const GLOBAL i64* meta, const GLOBAL T* x, GLOBAL T* cols)
{
    const i64 i = GID0;
    if (i >= rows) return;
    const Volume g = volume(meta);
    const GLOBAL i64* xs = meta + VOLUME_LEN;
    const i64 taps = g.kd * g.kh * g.kw;
    const i64 row = i % (g.c * taps), n = i / (g.c * taps);
    const i64 c = row / taps, kz = (row / (g.kh * g.kw)) % g.kd, ky = (row / g.kw) % g.kh;
    const i64 kx = row % g.kw;
    const i64 base = xs[5] + n * xs[0] + c * xs[1];
    GLOBAL T* out = cols + i * g.dout * g.hout * g.wout;
    for (i64 oz = 0; oz < g.dout; ++oz) {
        const i64 z = oz * g.sd - g.pd + kz;
        for (i64 oy = 0; oy < g.hout; ++oy) {
            const i64 y = oy * g.sh - g.ph + ky;
            const bool in_zy = z >= 0 && z < g.d && y >= 0 && y < g.h;
            for (i64 ox = 0; ox < g.wout; ++ox, ++out) {
                const i64 v = ox * g.sw - g.pw + kx;
                *out = in_zy && v >= 0 && v < g.w ? x[base + z * xs[2] + y * xs[3] + v * xs[4]]
                                                  : TO_T(0);
            }
        }
    }
}

/* The adjoint of im2col3d: each output element sums the columns that read it, in
   (kz, ky, kx) order (the same bits every run).  A work-item computes one element. */
KERNEL void col2im3d(const i64 total, const GLOBAL i64* meta, const GLOBAL T* cols,
                     GLOBAL T* out)
{
    const i64 i = GID0;
    if (i >= total) return;
    const Volume g = volume(meta);
    const GLOBAL i64* cs = meta + VOLUME_LEN;
    const i64 v = i % g.w, y = (i / g.w) % g.h, z = (i / (g.w * g.h)) % g.d;
    const i64 c = (i / (g.w * g.h * g.d)) % g.c, n = i / (g.w * g.h * g.d * g.c);
    const GLOBAL T* plane = cols + cs[3] + n * cs[0] + c * g.kd * g.kh * g.kw * cs[1];
    CT acc = (CT)0;
    for (i64 kz = 0; kz < g.kd; ++kz) {
        const i64 tz = z + g.pd - kz;
        if (tz < 0 || tz % g.sd || tz / g.sd >= g.dout) continue;
        for (i64 ky = 0; ky < g.kh; ++ky) {
            const i64 ty = y + g.ph - ky;
            if (ty < 0 || ty % g.sh || ty / g.sh >= g.hout) continue;
            for (i64 kx = 0; kx < g.kw; ++kx) {
                const i64 tx = v + g.pw - kx;
                if (tx < 0 || tx % g.sw || tx / g.sw >= g.wout) continue;
                const i64 tap = (kz * g.kh + ky) * g.kw + kx;
                const i64 at = (tz / g.sd * g.hout + ty / g.sh) * g.wout + tx / g.sw;
                acc += LOAD(plane, tap * cs[1] + at * cs[2]);
            }
        }
    }
    out[i] = TO_T(acc);
}
