/* The discrete Fourier transform along one dim, for backends without an FFT library
   (OpenCL).  x and out are C-contiguous complex numbers as float pairs, viewed as
   [outer, n, inner, 2]; out[o, k, i] = sum_j x[o, j, i] exp(-+2 pi i j k / n) (+ when
   inverse, unnormalised).  One work-item per output sums its n terms in order (no atomics:
   the same bits every run); the angle is taken from j k mod n, exact in integers, so it
   stays accurate for large j k.  O(n^2) work per line: a direct DFT, not an FFT. */

KERNEL void dft(const i64 total, const i64 n, const i64 inner, const int inverse,
                const GLOBAL T* x, GLOBAL T* out)
{
    const i64 g = GID0;
    if (g >= total) return;
    const i64 i = g % inner;
    const i64 k = (g / inner) % n;
    const i64 o = g / (inner * n);
    const GLOBAL T* line = x + 2 * (o * n * inner + i);
    const ACC turn = (inverse ? (ACC)6.283185307179586 : (ACC)-6.283185307179586) / (ACC)n;
    ACC re = 0, im = 0;
    i64 jk = 0;  /* j * k mod n, stepped by k */
    for (i64 j = 0; j < n; ++j) {
        const ACC a = turn * (ACC)jk;
        const ACC c = cos(a), s = sin(a);
        const ACC xr = (ACC)LOAD(line, 2 * j * inner), xi = (ACC)LOAD(line, 2 * j * inner + 1);
        re += xr * c - xi * s;
        im += xr * s + xi * c;
        jk += k;
        if (jk >= n) jk -= n;
    }
    out[2 * g] = TO_T(re);
    out[2 * g + 1] = TO_T(im);
}
