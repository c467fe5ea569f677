/* Batched matmul out[b] = a[b] @ b[b] with a [.., m, k] and b [.., k, n] of any strides.
   meta = broadcast batch shape[nb], a's batch strides[nb], a's offset, b's batch
   strides[nb], b's offset (a stride-0 batch dim broadcasts).  Each TILE x TILE work-group
   computes one output tile, staging TILE x TILE tiles of a and b in local memory; loads
   outside the matrices read 0, so m, n and k need not be multiples of TILE. */

#define TILE 16

#if IS_FLOAT
#define MAD(x, y, acc) fma(x, y, acc)
#else
#define MAD(x, y, acc) ((x) * (y) + (acc))
#endif

KERNEL void matmul(const i64 m, const i64 n, const i64 k,
                   const i64 a_sm, const i64 a_sk, const i64 b_sk, const i64 b_sn,
                   const int nb, const GLOBAL i64* meta,
                   const GLOBAL T* a, const GLOBAL T* b, GLOBAL T* out)
{
    LOCAL_ARRAY ACC a_tile[TILE][TILE];
    LOCAL_ARRAY ACC b_tile[TILE][TILE];
    const int tx = LID0, ty = LID1;                  /* tx walks n, ty walks m */
    const i64 col = GROUP0 * TILE + tx, row = GROUP1 * TILE + ty, batch = GROUP2;
    const i64 a_base = offset_of(batch, nb, meta, LAYOUT(meta, nb, 0));
    const i64 b_base = offset_of(batch, nb, meta, LAYOUT(meta, nb, 1));

    ACC acc = (ACC)0;
    for (i64 p0 = 0; p0 < k; p0 += TILE) {
        const i64 pa = p0 + tx, pb = p0 + ty;
        a_tile[ty][tx] = row < m && pa < k ? (ACC)LOAD(a, a_base + row * a_sm + pa * a_sk) : (ACC)0;
        b_tile[ty][tx] = pb < k && col < n ? (ACC)LOAD(b, b_base + pb * b_sk + col * b_sn) : (ACC)0;
        BARRIER();
        for (int q = 0; q < TILE; ++q)
            acc = MAD(a_tile[ty][q], b_tile[q][tx], acc);
        BARRIER();
    }
    if (row < m && col < n)
        out[(batch * m + row) * n + col] = TO_T(acc);
}
