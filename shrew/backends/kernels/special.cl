/* The special functions of torch.special (base.SPECIAL_UNARY_FNS, SPECIAL_BINARY_FNS), on
   OpenCL; the array-module backends call scipy.special.  Each is computed in CT from series,
   recurrences, continued fractions and asymptotic expansions chosen to converge to CT's
   precision over the whole line, with PyTorch's values at the edges (poles, infinities). */

#if IS_FLOAT
/* Half an ulp of 1 in CT: where a series or a continued fraction stops. */
#define EPS_CT ((CT)(UNIFORM_BITS == 53 ? 1.1102230246251565e-16 : 5.9604644775390625e-08))
#define PI_CT ((CT)3.141592653589793)
#define NAN_CT ((CT)NAN)
#if HAS_F64
typedef double WIDE;   /* where a float's sum cancels: double if the device has it */
#define EPS_WIDE 1.1102230246251565e-16
#else
typedef CT WIDE;
#define EPS_WIDE EPS_CT
#endif

/* ---- the gamma family ------------------------------------------------------------------ */
/* digamma for x > 0: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the
   asymptotic series log x - 1/(2x) - sum_k B_2k / (2k x^2k), seven terms. */
DEVICE CT digamma_positive(CT x)
{
    CT shift = (CT)0;
    while (x < (CT)10) {
        shift -= (CT)1 / x;
        x += (CT)1;
    }
    const CT z = (CT)1 / (x * x);
    const CT series = z * ((CT)(1.0 / 12) + z * ((CT)(-1.0 / 120) + z * ((CT)(1.0 / 252) +
                      z * ((CT)(-1.0 / 240) + z * ((CT)(1.0 / 132) + z * ((CT)(-691.0 / 32760) +
                      z * (CT)(1.0 / 12)))))));
    return shift + log(x) - (CT)0.5 / x - series;
}

/* -inf at +0 and inf at -0 (the pole's sides), NaN at the negative integers and -inf; the
   reflection psi(x) = psi(1 - x) - pi cot(pi x) below 0, with sinpi and cospi exact at
   large |x|. */
DEVICE CT digamma(const CT x)
{
    if (x == (CT)0) return (CT)-1 / x;
    if (x < (CT)0) {
        if (x == floor(x)) return NAN_CT;
        return digamma_positive((CT)1 - x) - PI_CT * cospi(x) / sinpi(x);
    }
    return digamma_positive(x);   /* NaN and inf pass through */
}

/* B_2j / (2j)!, j = 1 .. 12: the Euler-Maclaurin tail of the Hurwitz zeta function. */
DEVICE WIDE zeta_tail_coefficient(const int j)
{
    switch (j) {
        case 1: return (WIDE)0.08333333333333333;
        case 2: return (WIDE)-0.001388888888888889;
        case 3: return (WIDE)3.306878306878307e-05;
        case 4: return (WIDE)-8.267195767195768e-07;
        case 5: return (WIDE)2.08767569878681e-08;
        case 6: return (WIDE)-5.284190138687493e-10;
        case 7: return (WIDE)1.3382536530684679e-11;
        case 8: return (WIDE)-3.3896802963225827e-13;
        case 9: return (WIDE)8.586062056277845e-15;
        case 10: return (WIDE)-2.174868698558062e-16;
        case 11: return (WIDE)5.5090028283602295e-18;
        default: return (WIDE)-1.3954464685812522e-19;
    }
}

/* zeta(s, q) = sum_k (q + k)^-s: the first terms summed until q + k >= 10 (and k >= 10),
   then the rest as Euler-Maclaurin's integral, half term and Bernoulli series at w = q + k:
   w^(1-s) / (s-1) + w^-s / 2 + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) w^(-s-2j+1). */
DEVICE CT hurwitz_zeta(const CT s_in, const CT q_in)
{
    /* in WIDE: near q's poles the terms cancel to a few digits of a float */
    const WIDE s = (WIDE)s_in, q = (WIDE)q_in;
    if (IS_NAN(s) || IS_NAN(q)) return NAN_CT;
    if (s == (WIDE)1) return INFINITY;
    if (s < (WIDE)1 || q == INFINITY) return NAN_CT;
    if (q <= (WIDE)0) {
        if (q == floor(q)) return INFINITY;
        if (s != floor(s)) return NAN_CT;   /* a negative base to a fractional power */
    }
    if (isinf(s)) return q < (WIDE)1 ? INFINITY : q == (WIDE)1 ? (CT)1 : NAN_CT;   /* PyTorch's */
    WIDE sum = (WIDE)0, w = q;
    for (int k = 0; k < 10 || w < (WIDE)10; ++k) {
        const WIDE term = pow(w, -s);
        sum += term;
        if (fabs(term) <= EPS_WIDE * fabs(sum)) return (CT)sum;
        w += (WIDE)1;
    }
    const WIDE wps = pow(w, -s);
    sum += wps * w / (s - (WIDE)1) + (WIDE)0.5 * wps;
    WIDE rising = s, power = wps / w;
    for (int j = 1; j <= 12; ++j) {
        const WIDE term = zeta_tail_coefficient(j) * rising * power;
        sum += term;
        if (fabs(term) <= EPS_WIDE * fabs(sum)) break;
        rising *= (s + (WIDE)(2 * j - 1)) * (s + (WIDE)(2 * j));
        power /= w * w;
    }
    return (CT)sum;
}

/* The regularized incomplete gamma functions P(a, x) (lower) and Q = 1 - P (upper): below
   x = a + 1 the series e^-x x^a / Gamma(a + 1) sum_k x^k / ((a+1) ... (a+k)), which gives P;
   above it Legendre's continued fraction for Q, evaluated by Lentz's method.  `upper` picks
   which of the two is returned, each computed directly where it is the small one. */
DEVICE CT incomplete_gamma(const CT a, const CT x, const int upper)
{
    if (IS_NAN(a) || IS_NAN(x) || a < (CT)0 || x < (CT)0) return NAN_CT;
    if (a == (CT)0) {
        if (x == (CT)0) return NAN_CT;
        return upper ? (CT)0 : (CT)1;
    }
    if (x == (CT)0) return upper ? (CT)1 : (CT)0;
    if (isinf(a)) {
        if (isinf(x)) return NAN_CT;
        return upper ? (CT)1 : (CT)0;
    }
    if (isinf(x)) return upper ? (CT)0 : (CT)1;
    const CT log_x = log(x);
    if (x < a + (CT)1) {
        CT term = (CT)1, sum = (CT)1, denominator = a;
        for (int k = 0; k < 10000; ++k) {
            denominator += (CT)1;
            term *= x / denominator;
            sum += term;
            if (term <= EPS_CT * sum) break;
        }
        const CT p = exp(a * log_x - x - lgamma(a + (CT)1)) * sum;
        return upper ? (CT)1 - p : p;
    }
    const CT tiny = (CT)(UNIFORM_BITS == 53 ? 1e-300 : 1e-30);
    CT b = x + (CT)1 - a, c = (CT)1 / tiny, d = (CT)1 / b, h = d;
    for (int k = 1; k < 10000; ++k) {
        const CT an = -(CT)k * ((CT)k - a);
        b += (CT)2;
        d = an * d + b;
        if (fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny) c = tiny;
        d = (CT)1 / d;
        const CT step = d * c;
        h *= step;
        if (fabs(step - (CT)1) <= EPS_CT) break;
    }
    const CT q = exp(a * log_x - x - lgamma(a)) * h;
    return upper ? q : (CT)1 - q;
}

/* ---- the normal distribution and erfc ---------------------------------------------- */
/* e^(x^2), with x^2 = h^2 + (2 h l + l^2) for h = x rounded down to 1/16 (h^2 exact): the
   rounding of x^2 would cost x^2 ulps in the exponent. */
DEVICE CT exp_square(const CT x)
{
    const CT h = floor(x * (CT)16) / (CT)16, l = x - h;
    return exp(h * h) * exp(((CT)2 * h + l) * l);
}

/* erfcx(x) = e^(x^2) erfc(x): the product up to 8, then the asymptotic series
   1 / (x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2 x^2)^k; below 0, 2 e^(x^2) - erfcx(-x). */
DEVICE CT erfcx_positive(const CT x)
{
    if (x < (CT)8) return exp_square(x) * erfc(x);
    const CT r = (CT)1 / ((CT)2 * x * x);
    CT term = (CT)1, sum = (CT)1;
    for (int k = 1; k < 20; ++k) {
        term *= -(CT)(2 * k - 1) * r;
        sum += term;
        if (fabs(term) <= EPS_CT * sum) break;
    }
    return sum / (x * (CT)1.7724538509055160);
}

DEVICE CT erfcx(const CT x)
{
    if (x == -INFINITY) return INFINITY;
    if (x < (CT)0) return (CT)2 * exp_square(-x) - erfcx_positive(-x);
    return erfcx_positive(x);   /* NaN passes through */
}

/* The standard normal's cdf Phi(z) = erfc(-z / sqrt(2)) / 2 and density. */
#define NDTR(z) ((CT)0.5 * erfc(-(z) * (CT)0.7071067811865476))
#define NORMAL_PDF(z) (exp((CT)-0.5 * (z) * (z)) * (CT)0.3989422804014327)

/* Phi's inverse: in the lower tail q = min(p, 1 - p) (1 - p exact above 1/2), Abramowitz and
   Stegun's 26.2.23 (error below 4.5e-4) refined by three Halley steps on Phi(z) = q. */
DEVICE CT ndtri(const CT p)
{
    if (IS_NAN(p) || p < (CT)0 || p > (CT)1) return NAN_CT;
    if (p == (CT)0) return -INFINITY;
    if (p == (CT)1) return INFINITY;
    if (p == (CT)0.5) return (CT)0;
    const CT q = p < (CT)0.5 ? p : (CT)1 - p;
    const CT t = sqrt((CT)-2 * log(q));
    CT z = -(t - ((CT)2.515517 + t * ((CT)0.802853 + t * (CT)0.010328)) /
                 ((CT)1 + t * ((CT)1.432788 + t * ((CT)0.189269 + t * (CT)0.001308))));
    for (int k = 0; k < 3; ++k) {
        const CT r = (NDTR(z) - q) / NORMAL_PDF(z);
        z -= r / ((CT)1 + (CT)0.5 * z * r);
    }
    return p < (CT)0.5 ? z : -z;
}

/* log Phi(x): below -1 through erfcx (Phi itself underflows), log(erfcx(-x / sqrt 2) / 2)
   - x^2 / 2; above, log1p(-Phi(-x)), exact as Phi(-x) shrinks. */
DEVICE CT log_ndtr(const CT x)
{
    if (x < (CT)-1)
        return log((CT)0.5 * erfcx(-x * (CT)0.7071067811865476)) - (CT)0.5 * x * x;
    return log1p(-NDTR(-x));
}

/* ---- Bessel functions ------------------------------------------------------------------ */
/* I0 and I1 for |x| <= 30 from their power series (positive terms: no cancellation),
   sum_k (x^2/4)^k / (k! (k + n)!) (x/2)^n. */
DEVICE CT bessel_i_series(const CT x, const int n)
{
    const CT t = (CT)0.25 * x * x;
    CT term = n ? (CT)0.5 * x : (CT)1, sum = term;
    for (int k = 1; k < 500; ++k) {
        term *= t / ((CT)k * (CT)(k + n));
        sum += term;
        if (fabs(term) <= EPS_CT * fabs(sum)) break;
    }
    return sum;
}

/* e^-x I_n(x) for x > 30: the asymptotic series (2 pi x)^-1/2 sum_k (-1)^k a_k / x^k with
   a_k = (4n^2 - 1)(4n^2 - 9)...(4n^2 - (2k-1)^2) / (k! 8^k). */
DEVICE CT bessel_i_scaled_large(const CT x, const int n)
{
    const CT mu = (CT)(4 * n * n);
    CT term = (CT)1, sum = (CT)1;
    for (int k = 1; k < 60; ++k) {
        const CT odd = (CT)(2 * k - 1);
        term *= -(mu - odd * odd) / ((CT)(8 * k) * x);
        sum += term;
        if (fabs(term) <= EPS_CT * fabs(sum)) break;
    }
    return sum / sqrt((CT)6.283185307179586 * x);
}

/* I_n(x) (scaled: e^-|x| I_n(x)), n = 0 or 1; I1 is odd. */
DEVICE CT bessel_i(const CT x, const int n, const int scaled)
{
    const CT a = fabs(x);
    CT r;
    if (IS_NAN(x)) return x;
    if (isinf(a)) return scaled ? (CT)0 : NAN_CT;   /* PyTorch's (and Cephes') I at +-inf */
    else if (a <= (CT)30) r = bessel_i_series(a, n) * (scaled ? exp(-a) : (CT)1);
    else if (scaled) r = bessel_i_scaled_large(a, n);
    else {
        const CT root = exp((CT)0.5 * a);   /* e^a as a square: no overflow before 709 */
        r = bessel_i_scaled_large(a, n) * root * root;
    }
    return n && x < (CT)0 ? -r : r;
}

/* e^x K_nu(x) = int_0^inf e^(-x (cosh t - 1)) cosh(nu t) dt by the trapezoidal rule, for
   x > 1/2: the integrand is analytic in a strip around the real line, where the rule's
   error falls exponentially in 1 / step; steps of min(0.2, 0.5 / sqrt(x)) (the peak's width
   is 1 / sqrt(x)) put it below double precision.  The sum stops where the terms do. */
DEVICE CT bessel_k_scaled_integral(const CT x, const CT nu)
{
    const CT h = min((CT)0.2, (CT)0.5 / sqrt(x));   /* the peak narrows as 1 / sqrt(x) */
    CT sum = (CT)0.5;
    for (int k = 1; k < 100000; ++k) {
        const CT t = h * (CT)k;
        const CT sh = sinh((CT)0.5 * t);   /* cosh t - 1 = 2 sinh(t/2)^2, exact at small t */
        const CT term = exp((CT)-2 * x * sh * sh) * cosh(nu * t);
        sum += term;
        if (term <= EPS_CT * sum) break;
    }
    return h * sum;
}

/* K0 and K1 for 0 < x <= 1 from their series beside I0 and I1 (H_k the harmonic numbers,
   g Euler's constant):  K0 = -(log(x/2) + g) I0 + sum_k H_k (x^2/4)^k / k!^2,
   K1 = 1/x + log(x/2) I1 - x/4 sum_k (H_k + H_(k+1) - 2g) (x^2/4)^k / (k! (k+1)!). */
DEVICE CT bessel_k_small(const CT x, const int n)
{
    const CT t = (CT)0.25 * x * x, log_half = log((CT)0.5 * x), g = (CT)0.5772156649015329;
    CT term = (CT)1, harmonic = (CT)0, sum;
    if (n == 0) {
        sum = (CT)0;
        for (int k = 1; k < 100; ++k) {
            term *= t / ((CT)k * (CT)k);
            harmonic += (CT)1 / (CT)k;
            sum += term * harmonic;
            if (term * harmonic <= EPS_CT * fabs(sum)) break;
        }
        return sum - (log_half + g) * bessel_i_series(x, 0);
    }
    sum = (CT)1 - (CT)2 * g;   /* k = 0: H_0 + H_1 - 2g */
    for (int k = 1; k < 100; ++k) {
        term *= t / ((CT)k * (CT)(k + 1));
        harmonic += (CT)1 / (CT)k;
        const CT c = term * ((CT)2 * harmonic + (CT)1 / (CT)(k + 1) - (CT)2 * g);
        sum += c;
        if (fabs(c) <= EPS_CT * fabs(sum)) break;
    }
    return (CT)1 / x + log_half * bessel_i_series(x, 1) - (CT)0.25 * x * sum;
}

/* K_n(x) (scaled: e^x K_n(x)), n = 0 or 1: inf at 0, NaN below. */
DEVICE CT bessel_k(const CT x, const int n, const int scaled)
{
    if (IS_NAN(x) || x < (CT)0) return NAN_CT;
    if (x == (CT)0) return INFINITY;
    if (isinf(x)) return (CT)0;
    if (x <= (CT)1) return bessel_k_small(x, n) * (scaled ? exp(x) : (CT)1);
    const CT r = bessel_k_scaled_integral(x, (CT)n);
    return scaled ? r : r * exp(-x);
}

/* J0, J1 and the Neumann sums of Y0, Y1 for 0 < x <= 25 by Miller's backward recurrence
   J_(m-1) = (2m / x) J_m - J_(m+1) from an even order M well past x, normalised by
   J0 + 2 (J2 + J4 + ...) = 1 (rescaled on the way where the values grow large):
   Y0 = 2/pi (log(x/2) + g) J0 - 4/pi sum_k (-1)^k J_2k / k, and, from Y1 = -Y0',
   Y1 = 2/pi ((log(x/2) + g) J1 - J0 / x + sum_k (-1)^k (J_(2k-1) - J_(2k+1)) / k).
   `which`: 0 J0, 1 J1, 2 Y0, 3 Y1. */
DEVICE CT bessel_jy_miller(const CT x, const int which)
{
    const CT big = (CT)(UNIFORM_BITS == 53 ? 1e150 : 1e18);
    const int top = 2 * (int)((x + (CT)30 + (CT)6 * sqrt(x)) * (CT)0.5);
    CT above = (CT)0, j = (CT)1e-30, norm = (CT)0, y0_sum = (CT)0, y1_sum = (CT)0;
    CT j_next_odd = (CT)0;   /* J_(2k+1) while at order 2k - 1 */
    CT j0 = (CT)0, j1 = (CT)0;
    for (int m = top; m >= 1; --m) {   /* on entry j = J_m, above = J_(m+1) */
        const CT below = (CT)(2 * m) / x * j - above;   /* J_(m-1) */
        above = j;
        j = below;
        const int order = m - 1;
        if (order > 0 && order % 2 == 0) {
            const int k = order / 2;
            const CT sign = k % 2 ? (CT)-1 : (CT)1;
            norm += (CT)2 * j;
            y0_sum += sign * j / (CT)k;
        }
        if (order % 2 == 1) {   /* J_(2k-1) with k = (order + 1) / 2: pairs with J_(2k+1) */
            const int k = (order + 1) / 2;
            const CT sign = k % 2 ? (CT)-1 : (CT)1;
            y1_sum += sign * (j - j_next_odd) / (CT)k;
            j_next_odd = j;
        }
        if (order == 1) j1 = j;
        if (order == 0) j0 = j;
        if (fabs(j) > big) {
            const CT s = (CT)1 / big;
            j *= s; above *= s; norm *= s; y0_sum *= s; y1_sum *= s; j_next_odd *= s;
            j1 *= s; j0 *= s;
        }
    }
    norm += j0;
    j0 /= norm;
    j1 /= norm;
    const CT lg = log((CT)0.5 * x) + (CT)0.5772156649015329, two_pi = (CT)0.6366197723675814;
    switch (which) {
        case 0: return j0;
        case 1: return j1;
        case 2: return two_pi * (lg * j0 - (CT)2 * y0_sum / norm);
        default: return two_pi * (lg * j1 - j0 / x + y1_sum / norm);
    }
}

/* Hankel's expansions for x > 25: J_n = sqrt(2 / (pi x)) (P cos c - Q sin c) and
   Y_n = sqrt(2 / (pi x)) (P sin c + Q cos c), c = x - (2n + 1) pi / 4, with P and Q the
   even and odd terms of sum_k (-1)^(k/2) a_k / x^k (a_k as in bessel_i_scaled_large).
   cos c and sin c come from cos x and sin x (no rounding of pi / 4 against a large x). */
DEVICE CT bessel_jy_large(const CT x, const int n, const int y)
{
    const CT mu = (CT)(4 * n * n);
    CT term = (CT)1, p = (CT)1, q = (CT)0;
    for (int k = 1; k < 60; ++k) {
        const CT odd = (CT)(2 * k - 1);
        term *= (mu - odd * odd) / ((CT)(8 * k) * x);
        const CT signed_term = (k / 2) % 2 ? -term : term;
        if (k % 2) q += signed_term; else p += signed_term;
        if (fabs(term) <= EPS_CT * fabs(p)) break;
    }
    const CT c = cos(x), s = sin(x), r = (CT)0.7071067811865476;
    const CT cos_c = n ? (s - c) * r : (c + s) * r;
    const CT sin_c = n ? -(s + c) * r : (s - c) * r;
    const CT scale = sqrt((CT)0.6366197723675814 / x);
    return scale * (y ? p * sin_c + q * cos_c : p * cos_c - q * sin_c);
}

DEVICE CT bessel_j(const CT x, const int n)
{
    const CT a = fabs(x);
    if (IS_NAN(x) || isinf(a)) return NAN_CT;   /* PyTorch's (and Cephes') J at +-inf */
    CT r;
    if (a < (CT)1e-9) r = n ? (CT)0.5 * a : (CT)1;   /* the series' first term is exact */
    else r = a <= (CT)25 ? bessel_jy_miller(a, n) : bessel_jy_large(a, n, 0);
    return n && x < (CT)0 ? -r : r;
}

DEVICE CT bessel_y(const CT x, const int n)
{
    if (IS_NAN(x) || x < (CT)0 || isinf(x)) return NAN_CT;
    if (x == (CT)0) return -INFINITY;
    if (x < (CT)1e-9)   /* the first terms of the series are exact */
        return n ? (CT)-0.6366197723675814 / x
                 : (CT)0.6366197723675814 * (log((CT)0.5 * x) + (CT)0.5772156649015329);
    return x <= (CT)25 ? bessel_jy_miller(x, n + 2) : bessel_jy_large(x, n, 1);
}

/* ---- the Airy function Ai -------------------------------------------------------------- */
/* Above 1: Ai(x) = sqrt(x / 3) / pi K_1/3(z), z = 2/3 x^(3/2), K by the integral above.
   From -8 to 1 the Maclaurin series Ai(0) f(x) + Ai'(0) g(x) with
   f = sum_k 3^k (1/3)_k x^3k / (3k)!, g = sum_k 3^k (2/3)_k x^(3k+1) / (3k+1)!.
   Below -8 the oscillating expansion pi^-1/2 |x|^-1/4 (sin(z + pi/4) P - cos(z + pi/4) Q),
   P and Q the even and odd terms of sum_k (-1)^(k/2) u_k / z^k,
   u_k = (2k+1)(2k+3)...(6k-1) / (216^k k!). */
DEVICE CT airy_ai(const CT x)
{
    if (IS_NAN(x) || isinf(x)) return NAN_CT;   /* PyTorch's Ai at +-inf */
    if (x > (CT)1) {
        const CT z = (CT)(2.0 / 3) * x * sqrt(x);
        return sqrt(x / (CT)3) / PI_CT * bessel_k_scaled_integral(z, (CT)(1.0 / 3)) * exp(-z);
    }
    if (x >= (CT)-8) {   /* in double where the device has it: the terms cancel to 1e-6 */
        const WIDE w = (WIDE)x, x3 = w * w * w;
        WIDE f_term = (WIDE)1, f = (WIDE)1, g_term = w, g = w;
        for (int k = 1; k < 200; ++k) {
            f_term *= x3 / ((WIDE)(3 * k - 1) * (WIDE)(3 * k));
            g_term *= x3 / ((WIDE)(3 * k) * (WIDE)(3 * k + 1));
            f += f_term;
            g += g_term;
            if (fabs(f_term) + fabs(g_term) <= (WIDE)1e-17 * (fabs(f) + fabs(g))) break;
        }
        return (CT)((WIDE)0.3550280538878172 * f - (WIDE)0.2588194037928068 * g);
    }
    /* in WIDE too: a float phase z would be off by z ulps */
    const WIDE a = -(WIDE)x, z = (WIDE)(2.0 / 3) * a * sqrt(a);
    WIDE term = (WIDE)1, p = (WIDE)1, q = (WIDE)0;
    for (int k = 1; k < 60; ++k) {
        term *= (WIDE)(6 * k - 5) * (WIDE)(6 * k - 3) * (WIDE)(6 * k - 1) /
                ((WIDE)216 * (WIDE)k * (WIDE)(2 * k - 1) * z);
        const WIDE signed_term = (k / 2) % 2 ? -term : term;
        if (k % 2) q += signed_term; else p += signed_term;
        if (fabs(term) <= (WIDE)1e-17 * fabs(p)) break;
    }
    const WIDE s = sin(z), c = cos(z), r = (WIDE)0.7071067811865476;
    const WIDE sin_shift = (s + c) * r, cos_shift = (c - s) * r;   /* of z + pi/4 */
    return (CT)((sin_shift * p - cos_shift * q) /
                ((WIDE)1.7724538509055160 * sqrt(sqrt(a))));
}

UNARY(erfcx, erfcx(v))
UNARY(ndtri, ndtri(v))
UNARY(log_ndtr, log_ndtr(v))
UNARY(i0, bessel_i(v, 0, 0))
UNARY(i0e, bessel_i(v, 0, 1))
UNARY(i1, bessel_i(v, 1, 0))
UNARY(i1e, bessel_i(v, 1, 1))
UNARY(bessel_j0, bessel_j(v, 0))
UNARY(bessel_j1, bessel_j(v, 1))
UNARY(bessel_y0, bessel_y(v, 0))
UNARY(bessel_y1, bessel_y(v, 1))
UNARY(modified_bessel_k0, bessel_k(v, 0, 0))
UNARY(modified_bessel_k1, bessel_k(v, 1, 0))
UNARY(scaled_modified_bessel_k0, bessel_k(v, 0, 1))
UNARY(scaled_modified_bessel_k1, bessel_k(v, 1, 1))
UNARY(airy_ai, airy_ai(v))
UNARY(lgamma, lgamma(v))
UNARY(digamma, digamma(v))
BINARY(igamma, incomplete_gamma(x, y, 0))
BINARY(igammac, incomplete_gamma(x, y, 1))
BINARY(zeta, hurwitz_zeta(x, y))
#endif

#if IS_FLOAT
/* ---- the orthogonal polynomials -------------------------------------------------------- */
/* P_n(x) by the family's three-term recurrence from P_0 = 1 and P_1 = `first`; n is a
   float truncated to an integer, and gives 0 where negative, infinite or NaN.  `kind`: 0 Chebyshev
   (T, U, V, W: P_(j+1) = 2x P_j - P_(j-1)), 1 Hermite H, 2 Hermite He, 3 Laguerre,
   4 Legendre. */
DEVICE CT orthogonal_polynomial(const CT x, const CT n, const int kind, const CT first)
{
    if (IS_NAN(n) || isinf(n)) return (CT)0;   /* PyTorch's cast makes them negative */
    const i64 degree = (i64)n;
    if (degree < 0) return (CT)0;
    if (degree == 0) return (CT)1;
    CT previous = (CT)1, current = first;
    for (i64 j = 1; j < degree; ++j) {
        const CT jj = (CT)j;
        CT following;
        switch (kind) {
            case 0: following = (CT)2 * x * current - previous; break;
            case 1: following = (CT)2 * x * current - (CT)2 * jj * previous; break;
            case 2: following = x * current - jj * previous; break;
            case 3: following = (((CT)2 * jj + (CT)1 - x) * current - jj * previous) /
                                (jj + (CT)1); break;
            default: following = (((CT)2 * jj + (CT)1) * x * current - jj * previous) /
                                 (jj + (CT)1); break;
        }
        previous = current;
        current = following;
    }
    return current;
}

BINARY(chebyshev_polynomial_t, orthogonal_polynomial(x, y, 0, x))
BINARY(chebyshev_polynomial_u, orthogonal_polynomial(x, y, 0, (CT)2 * x))
BINARY(chebyshev_polynomial_v, orthogonal_polynomial(x, y, 0, (CT)2 * x - (CT)1))
BINARY(chebyshev_polynomial_w, orthogonal_polynomial(x, y, 0, (CT)2 * x + (CT)1))
BINARY(hermite_polynomial_h, orthogonal_polynomial(x, y, 1, (CT)2 * x))
BINARY(hermite_polynomial_he, orthogonal_polynomial(x, y, 2, x))
BINARY(laguerre_polynomial_l, orthogonal_polynomial(x, y, 3, (CT)1 - x))
BINARY(legendre_polynomial_p, orthogonal_polynomial(x, y, 4, x))
#endif
