/* Batched matmul out[b] = a[b] @ b[b] with a [.., m, k] and b [.., k, n] of any strides.
   meta = broadcast batch shape[nb], a's batch strides[nb], a's offset, b's batch
   strides[nb], b's offset (a stride-0 batch dim broadcasts).

   A TILE x TILE work-group computes a BLOCK x BLOCK output block (BLOCK = TILE * WPT):
   it stages a BLOCK x TILE slice of a and a TILE x BLOCK slice of b in local memory, and
   each work-item accumulates WPT x WPT outputs in registers, rows ty + TILE * i and
   columns tx + TILE * j.  Loads outside the matrices read 0, so m, n and k need not be
   multiples of anything. */

#define WPT 4
#define BLOCK (TILE * WPT)

ALLOW_FMA   /* acc + x * y may fuse: the inner loop is then one instruction */

KERNEL void matmul(const i64 m, const i64 n, const i64 k,
                   const i64 a_sm, const i64 a_sk, const i64 b_sk, const i64 b_sn,
                   const int nb, const GLOBAL i64* meta,
                   const GLOBAL T* a, const GLOBAL T* b, GLOBAL T* out)
{
    LOCAL_ARRAY ACC a_tile[TILE][BLOCK];             /* [p][row]: a slice, transposed */
    LOCAL_ARRAY ACC b_tile[TILE][BLOCK];             /* [p][col] */
    const int tx = LID0, ty = LID1, lid = ty * TILE + tx;
    const i64 row0 = GROUP1 * BLOCK, col0 = GROUP0 * BLOCK, batch = GROUP2;
    const i64 a_base = offset_of(batch, nb, meta, LAYOUT(meta, nb, 0));
    const i64 b_base = offset_of(batch, nb, meta, LAYOUT(meta, nb, 1));

    ACC acc[WPT][WPT];
    for (int i = 0; i < WPT; ++i)
        for (int j = 0; j < WPT; ++j)
            acc[i][j] = (ACC)0;

    for (i64 p0 = 0; p0 < k; p0 += TILE) {
        for (int l = 0; l < WPT; ++l) {              /* each work-item loads WPT of each */
            const int e = lid + l * TILE * TILE;
            const i64 ar = row0 + e / TILE, ap = p0 + e % TILE;
            a_tile[e % TILE][e / TILE] =
                ar < m && ap < k ? (ACC)LOAD(a, a_base + ar * a_sm + ap * a_sk) : (ACC)0;
            const i64 bp = p0 + e / BLOCK, bc = col0 + e % BLOCK;
            b_tile[e / BLOCK][e % BLOCK] =
                bp < k && bc < n ? (ACC)LOAD(b, b_base + bp * b_sk + bc * b_sn) : (ACC)0;
        }
        BARRIER();
        for (int p = 0; p < TILE; ++p) {
            ACC a_reg[WPT], b_reg[WPT];
            for (int i = 0; i < WPT; ++i) {
                a_reg[i] = a_tile[p][ty + TILE * i];
                b_reg[i] = b_tile[p][tx + TILE * i];
            }
            for (int i = 0; i < WPT; ++i)
                for (int j = 0; j < WPT; ++j)
                    acc[i][j] += a_reg[i] * b_reg[j];
        }
        BARRIER();
    }
    for (int i = 0; i < WPT; ++i) {
        const i64 r = row0 + ty + TILE * i;
        for (int j = 0; j < WPT; ++j) {
            const i64 c = col0 + tx + TILE * j;
            if (r < m && c < n) out[(batch * m + r) * n + c] = TO_T(acc[i][j]);
        }
    }
}
