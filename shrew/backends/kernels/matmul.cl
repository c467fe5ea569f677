/* Batched matmul out[b] = a[b] @ b[b] with a [.., m, k] and b [.., k, n] of any strides.
   meta = broadcast batch shape[nb], a's batch strides[nb], a's offset, b's batch
   strides[nb], b's offset (a stride-0 batch dim broadcasts).

   Register-blocked, without local memory (on CPU devices local memory is ordinary memory,
   and staging through it only costs): work-item (x, y) of an MM_LX x MM_LY work-group
   computes the RM x RN output block at rows RM * (GROUP1 * MM_LY + y) and columns
   RN * (GROUP0 * MM_LX + x), reading a and b straight from global memory.  Per step of p
   it reads RN contiguous elements of a row of b (b_sn == 1: the backend packs a b with
   strided rows, such as w.T, with matmul_pack first) and RM elements of a, and the
   unrolled RM x RN update vectorises across the columns.  Every output is summed over p
   in order.  A block crossing the edge of out shifts back to end at the edge, recomputing
   (and rewriting, with the same bits) outputs of its neighbour, so it too takes the vector
   path; only an out narrower than a block (or a strided b) clamps its reads and masks its
   writes.  So m, n and k need not be multiples of anything. */

ALLOW_FMA   /* acc + x * y may fuse: the update is then one instruction per vector */

#ifndef RM
#define RM 4
#endif
#ifndef RN
#define RN 16
#endif
#ifndef MM_LX
#define MM_LX 4
#endif
#ifndef MM_LY
#define MM_LY 4
#endif

/* The RM x RN block: acc[i][j] = sum over p (in order) of a[row i][p] * b[p][col j], with
   a's row i read at ap[A_ROW * a_sm] and b's column j at bp[B_COL].  Fully unrolled, so
   acc lives in registers; stores output (i, j) where KEEP holds. */
#define MM_BLOCK(A_ROW, B_COL, KEEP)                                            \
    {                                                                           \
        ACC acc[RM][RN];                                                        \
        _Pragma("unroll") for (int i = 0; i < RM; ++i)                          \
            _Pragma("unroll") for (int j = 0; j < RN; ++j)                      \
                acc[i][j] = (ACC)0;                                             \
        for (i64 p = 0; p < k; ++p) {                                           \
            ACC bv[RN];                                                         \
            _Pragma("unroll") for (int j = 0; j < RN; ++j)                      \
                bv[j] = (ACC)LOAD(bp, p * b_sk + (B_COL));                      \
            _Pragma("unroll") for (int i = 0; i < RM; ++i) {                    \
                const ACC av = (ACC)LOAD(ap, (A_ROW) * a_sm + p * a_sk);        \
                _Pragma("unroll") for (int j = 0; j < RN; ++j)                  \
                    acc[i][j] += av * bv[j];                                    \
            }                                                                   \
        }                                                                       \
        _Pragma("unroll") for (int i = 0; i < RM; ++i)                          \
            _Pragma("unroll") for (int j = 0; j < RN; ++j)                      \
                if (KEEP) op[i * n + j] = TO_T(acc[i][j]);                      \
    }

KERNEL void matmul(const i64 m, const i64 n, const i64 k,
                   const i64 a_sm, const i64 a_sk, const i64 b_sk, const i64 b_sn,
                   const int nb, const GLOBAL i64* meta,
                   const GLOBAL T* a, const GLOBAL T* b, GLOBAL T* out)
{
    i64 r0 = (GROUP1 * MM_LY + LID1) * RM, c0 = (GROUP0 * MM_LX + LID0) * RN;
    const i64 batch = GROUP2;
    if (r0 >= m || c0 >= n) return;
    if (r0 + RM > m && m >= RM) r0 = m - RM;    /* an edge block shifts back inside out */
    if (c0 + RN > n && n >= RN) c0 = n - RN;
    const GLOBAL T* ap = a + offset_of(batch, nb, meta, LAYOUT(meta, nb, 0)) + r0 * a_sm;
    const GLOBAL T* bp = b + offset_of(batch, nb, meta, LAYOUT(meta, nb, 1)) + c0 * b_sn;
    GLOBAL T* op = out + (batch * m + r0) * n + c0;

    const int rm = (int)(m - r0 < RM ? m - r0 : RM), rn = (int)(n - c0 < RN ? n - c0 : RN);
    /* b's row segment is one vector.  A shifted block stores all of itself: the outputs it
       shares with its neighbour get the same bits from both, as each is summed by the same
       instructions (a store mask here would cost the whole block its vectorisation). */
    if (b_sn == 1 && rm == RM && rn == RN)
        MM_BLOCK(i, j, 1)
    else                          /* out narrower than a block: clamped reads, masked writes */
        MM_BLOCK(i < rm ? i : rm - 1, (j < rn ? j : rn - 1) * b_sn, i < rm && j < rn)
}

/* packed[b] = b[b] as a C-contiguous [.., k, n] array, for a b whose rows are strided
   (b_sn != 1, typically w.T): matmul then reads rows of b contiguously.  meta = b's own
   batch shape[nb], its batch strides[nb] and offset.  Work-item (x, y) copies PACK_W
   consecutive elements of row p = y (walking down a column of the source in a group). */
#define PACK_W 16   /* the backend's launch of matmul_pack mirrors this */
KERNEL void matmul_pack(const i64 k, const i64 n, const i64 b_sk, const i64 b_sn,
                        const int nb, const GLOBAL i64* meta,
                        const GLOBAL T* b, GLOBAL T* packed)
{
    const i64 p = GROUP1 * MM_LX + LID1, c0 = GROUP0 * PACK_W, batch = GROUP2;
    if (p >= k) return;
    const GLOBAL T* src = b + offset_of(batch, nb, meta, LAYOUT(meta, nb, 0)) + p * b_sk;
    GLOBAL T* dst = packed + (batch * k + p) * n;
    const i64 c1 = c0 + PACK_W < n ? c0 + PACK_W : n;
    for (i64 c = c0; c < c1; ++c)
        dst[c] = src[c * b_sn];
}
