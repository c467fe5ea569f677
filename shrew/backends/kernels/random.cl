/* Counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11).  Work-item t turns
   counter + t (64 bits) and the 64-bit key (the seed) into 4 random 32-bit words, and
   writes PER_BLOCK consecutive outputs from them; the host advances the counter by the
   number of blocks used, so a stream depends only on (seed, counter). UNIFORM_BITS is
   the float's significand width: 11, 24 or 53. */

#if UNIFORM_BITS == 53
#define PER_BLOCK 2
#else
#define PER_BLOCK 4
#endif

DEVICE void philox4x32_10(u32* c, u32 k0, u32 k1)
{
    for (int round = 0; round < 10; ++round) {
        const u64 p0 = (u64)0xD2511F53u * c[0];
        const u64 p1 = (u64)0xCD9E8D57u * c[2];
        c[0] = (u32)(p1 >> 32) ^ c[1] ^ k0;
        c[1] = (u32)p1;
        c[2] = (u32)(p0 >> 32) ^ c[3] ^ k1;
        c[3] = (u32)p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

/* The j-th uniform in [0, 1) of a block: exactly representable, so never rounds to 1. */
DEVICE CT uniform(const u32* c, const int j)
{
#if UNIFORM_BITS == 53
    const u64 bits = ((u64)(c[2 * j] >> 5) << 26) | (c[2 * j + 1] >> 6);
    return (CT)bits * (CT)1.1102230246251565e-16;          /* 2^-53 */
#else
    return (CT)(c[j] >> (32 - UNIFORM_BITS)) * ((CT)1 / (CT)(1 << UNIFORM_BITS));
#endif
}

DEVICE void philox_block(const i64 t, const u32 k0, const u32 k1, const u64 counter, u32* c)
{
    const u64 block = counter + (u64)t;
    c[0] = (u32)block;
    c[1] = (u32)(block >> 32);
    c[2] = 0;
    c[3] = 0;
    philox4x32_10(c, k0, k1);
}

KERNEL void rand_uniform(const i64 n, const u32 k0, const u32 k1, const u64 counter,
                         GLOBAL T* out)
{
    const i64 t = GID0, first = t * PER_BLOCK;
    if (first >= n) return;
    u32 c[4];
    philox_block(t, k0, k1, counter, c);
    for (int j = 0; j < PER_BLOCK && first + j < n; ++j)
        out[first + j] = TO_T(uniform(c, j));
}

/* Box-Muller: each pair of uniforms gives two independent standard normals. */
KERNEL void rand_normal(const i64 n, const u32 k0, const u32 k1, const u64 counter,
                        GLOBAL T* out)
{
    const i64 t = GID0, first = t * PER_BLOCK;
    if (first >= n) return;
    u32 c[4];
    philox_block(t, k0, k1, counter, c);
    for (int j = 0; j < PER_BLOCK; j += 2) {
        const CT radius = sqrt((CT)-2 * log((CT)1 - uniform(c, j)));   /* 1 - u > 0 */
        const CT angle = (CT)6.283185307179586 * uniform(c, j + 1);
        if (first + j < n) out[first + j] = TO_T(radius * cos(angle));
        if (first + j + 1 < n) out[first + j + 1] = TO_T(radius * sin(angle));
    }
}
