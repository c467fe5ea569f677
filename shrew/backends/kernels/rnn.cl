/* The recurrent cell step (base.Backend's rnn_cell, rnn_cell_backward): one work-item per
   element (row, j) of the [N, H] state reads that element's gates from the [N, gates * H]
   gate rows (PyTorch's gate order) and writes the new state and its saved values.  Every
   array is C-contiguous from its offset (o*), counted in elements.  Float dtypes only. */

#if IS_FLOAT
#define ELEMENT                                                                           \
    const i64 e = GID0;                                                                   \
    if (e >= n) return;
#define CELL_SETUP                                                                        \
    ELEMENT                                                                               \
    const i64 row = e / hidden, j = e - row * hidden;

/* 1 / (1 + e^-v), as the sigmoid of elementwise.cl: exp of -|v| never overflows. */
DEVICE CT cell_sigmoid(const CT v)
{
    const CT x = EXP(v < (CT)0 ? v : -v);
    return v >= (CT)0 ? (CT)1 / ((CT)1 + x) : x / ((CT)1 + x);
}

/* h = tanh(gx + gh), or relu. */
#define RNN_CELL(name, act)                                                               \
KERNEL void name(const i64 n, const i64 hidden, const GLOBAL T* gx, const i64 gxo,        \
                 const GLOBAL T* gh, const i64 gho, GLOBAL T* h)                          \
{                                                                                         \
    ELEMENT                                                                               \
    const CT v = LOAD(gx, gxo + e) + LOAD(gh, gho + e);                                   \
    h[e] = TO_T(act);                                                                     \
}

RNN_CELL(rnn_tanh_cell, TANH(v))
RNN_CELL(rnn_relu_cell, v < (CT)0 ? (CT)0 : v)

/* d(pre-activation) from the output h: dh (1 - h^2), or dh where h > 0. */
#define RNN_CELL_BACKWARD(name, derivative)                                               \
KERNEL void name(const i64 n, const i64 hidden, const GLOBAL T* dh, const i64 dho,        \
                 const GLOBAL T* h, const i64 ho, GLOBAL T* d)                             \
{                                                                                         \
    ELEMENT                                                                               \
    const CT g = LOAD(dh, dho + e), y = LOAD(h, ho + e);                                  \
    d[e] = TO_T(derivative);                                                              \
}

RNN_CELL_BACKWARD(rnn_tanh_cell_backward, g * ((CT)1 - y * y))
RNN_CELL_BACKWARD(rnn_relu_cell_backward, y > (CT)0 ? g : (CT)0)

/* i, f, o sigmoids, g tanh; c' = f c + i g, h = o tanh(c'); ws = (i, f, g, o, tanh c'). */
KERNEL void lstm_cell(const i64 n, const i64 hidden, const GLOBAL T* gx, const i64 gxo,
                      const GLOBAL T* gh, const i64 gho, const GLOBAL T* c, const i64 co,
                      GLOBAL T* h, GLOBAL T* c_new, GLOBAL T* ws)
{
    CELL_SETUP
    const i64 gate = row * 4 * hidden + j;
    const CT i = cell_sigmoid(LOAD(gx, gxo + gate) + LOAD(gh, gho + gate));
    const CT f = cell_sigmoid(LOAD(gx, gxo + gate + hidden) + LOAD(gh, gho + gate + hidden));
    const CT g = TANH(LOAD(gx, gxo + gate + 2 * hidden) + LOAD(gh, gho + gate + 2 * hidden));
    const CT o = cell_sigmoid(LOAD(gx, gxo + gate + 3 * hidden) +
                              LOAD(gh, gho + gate + 3 * hidden));
    const CT cell = f * LOAD(c, co + e) + i * g;
    const CT tanh_c = TANH(cell);
    const i64 w = row * 5 * hidden + j;
    ws[w] = TO_T(i);
    ws[w + hidden] = TO_T(f);
    ws[w + 2 * hidden] = TO_T(g);
    ws[w + 3 * hidden] = TO_T(o);
    ws[w + 4 * hidden] = TO_T(tanh_c);
    c_new[e] = TO_T(cell);
    h[e] = TO_T(o * tanh_c);
}

/* dgates = (di, df, dg, do) before the nonlinearities, dc_prev = dc_total f, where
   dc_total = dc + dh o (1 - tanh(c')^2); has_dc 0: dc is zero (not read). */
KERNEL void lstm_cell_backward(const i64 n, const i64 hidden, const GLOBAL T* dh,
                               const i64 dho, const GLOBAL T* dc, const i64 dco,
                               const int has_dc, const GLOBAL T* c, const i64 co,
                               const GLOBAL T* ws, const i64 wso, GLOBAL T* dgates,
                               GLOBAL T* dc_prev)
{
    CELL_SETUP
    const i64 w = wso + row * 5 * hidden + j;
    const CT i = LOAD(ws, w), f = LOAD(ws, w + hidden), g = LOAD(ws, w + 2 * hidden);
    const CT o = LOAD(ws, w + 3 * hidden), tanh_c = LOAD(ws, w + 4 * hidden);
    const CT d = LOAD(dh, dho + e);
    CT total = d * o * ((CT)1 - tanh_c * tanh_c);
    if (has_dc) total += LOAD(dc, dco + e);
    const i64 gate = row * 4 * hidden + j;
    dgates[gate] = TO_T(total * g * i * ((CT)1 - i));
    dgates[gate + hidden] = TO_T(total * LOAD(c, co + e) * f * ((CT)1 - f));
    dgates[gate + 2 * hidden] = TO_T(total * i * ((CT)1 - g * g));
    dgates[gate + 3 * hidden] = TO_T(d * tanh_c * o * ((CT)1 - o));
    dc_prev[e] = TO_T(total * f);
}

/* r, z sigmoids of the summed gates, n = tanh(gx_n + r gh_n), h' = n + z (h - n);
   ws = (r, z, n, gh_n). */
KERNEL void gru_cell(const i64 n, const i64 hidden, const GLOBAL T* gx, const i64 gxo,
                     const GLOBAL T* gh, const i64 gho, const GLOBAL T* h, const i64 ho,
                     GLOBAL T* h_new, GLOBAL T* ws)
{
    CELL_SETUP
    const i64 gate = row * 3 * hidden + j;
    const CT r = cell_sigmoid(LOAD(gx, gxo + gate) + LOAD(gh, gho + gate));
    const CT z = cell_sigmoid(LOAD(gx, gxo + gate + hidden) + LOAD(gh, gho + gate + hidden));
    const CT hn = LOAD(gh, gho + gate + 2 * hidden);
    const CT cand = TANH(LOAD(gx, gxo + gate + 2 * hidden) + r * hn);
    const i64 w = row * 4 * hidden + j;
    ws[w] = TO_T(r);
    ws[w + hidden] = TO_T(z);
    ws[w + 2 * hidden] = TO_T(cand);
    ws[w + 3 * hidden] = TO_T(hn);
    h_new[e] = TO_T(cand + z * (LOAD(h, ho + e) - cand));
}

/* dgx = (dr, dz, dn) before the nonlinearities; dgh the same but dn scaled by r;
   dh_direct = dh z, the gradient of h through h' = n + z (h - n) itself. */
KERNEL void gru_cell_backward(const i64 n, const i64 hidden, const GLOBAL T* dh,
                              const i64 dho, const GLOBAL T* h, const i64 ho,
                              const GLOBAL T* ws, const i64 wso, GLOBAL T* dgx,
                              GLOBAL T* dgh, GLOBAL T* dh_direct)
{
    CELL_SETUP
    const i64 w = wso + row * 4 * hidden + j;
    const CT r = LOAD(ws, w), z = LOAD(ws, w + hidden), cand = LOAD(ws, w + 2 * hidden);
    const CT hn = LOAD(ws, w + 3 * hidden), d = LOAD(dh, dho + e);
    const CT dn = d * ((CT)1 - z) * ((CT)1 - cand * cand);
    const CT dz = d * (LOAD(h, ho + e) - cand) * z * ((CT)1 - z);
    const CT dr = dn * hn * r * ((CT)1 - r);
    const i64 gate = row * 3 * hidden + j;
    dgx[gate] = TO_T(dr);
    dgx[gate + hidden] = TO_T(dz);
    dgx[gate + 2 * hidden] = TO_T(dn);
    dgh[gate] = TO_T(dr);
    dgh[gate + hidden] = TO_T(dz);
    dgh[gate + 2 * hidden] = TO_T(dn * r);
    dh_direct[e] = TO_T(d * z);
}
#endif
