/* The discrete Fourier transform along one dim, for backends without an FFT library
   (OpenCL).  x and out are C-contiguous complex numbers as float pairs, viewed as
   [outer, n, inner, 2]; out[o, k, i] = sum_j x[o, j, i] w^(j k), w = exp(-+2 pi i / n) (+
   when inverse, unnormalised).  `twiddles` holds w^m for m < n as pairs (cos, -sin),
   computed on the host in double precision, so the kernel calls no sin or cos and each
   factor is the correctly rounded one; w^(j k) is twiddles[j k mod n], the exponent
   stepped in integers.  One work-item per output sums its n terms in order (no atomics:
   the same bits every run).  O(n^2) work per line: a direct DFT, not an FFT. */

KERNEL void dft(const i64 total, const i64 n, const i64 inner, const int inverse,
                const GLOBAL T* twiddles, const GLOBAL T* x, GLOBAL T* out)
{
    const i64 g = GID0;
    if (g >= total) return;
    const i64 i = g % inner;
    const i64 k = (g / inner) % n;
    const i64 o = g / (inner * n);
    const GLOBAL T* line = x + 2 * (o * n * inner + i);
    const ACC sign = inverse ? (ACC)-1 : (ACC)1;
    ACC re = 0, im = 0;
    i64 jk = 0;  /* j * k mod n */
    for (i64 j = 0; j < n; ++j) {
        const ACC c = (ACC)LOAD(twiddles, 2 * jk), s = sign * (ACC)LOAD(twiddles, 2 * jk + 1);
        const ACC xr = (ACC)LOAD(line, 2 * j * inner), xi = (ACC)LOAD(line, 2 * j * inner + 1);
        re += xr * c - xi * s;
        im += xr * s + xi * c;
        jk += k;
        if (jk >= n) jk -= n;
    }
    out[2 * g] = TO_T(re);
    out[2 * g + 1] = TO_T(im);
}
